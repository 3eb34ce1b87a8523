// A switch through a jump table: sm_120 branches with BRXU (a uniform
// register), whose offset and table move like BRX's when a -g link puts
// exit barriers before the early EXIT.
__global__ void sw(int *a, int m) {
  if (threadIdx.x >= 64) return;
  int v = a[threadIdx.x];
  switch (m) {
  case 0: v += 1; break;
  case 1: v *= 3; break;
  case 2: v ^= 7; break;
  case 3: v -= 9; break;
  case 4: v <<= 2; break;
  default: v = 0;
  }
  a[threadIdx.x] = v;
}
