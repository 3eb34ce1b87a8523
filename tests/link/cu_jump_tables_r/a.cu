extern __device__ int g(int x, int *p);
__device__ __noinline__ int f(int x, int *p) {
  switch (x) {
    case 0: return p[3] + 1;
    case 1: p[1] = 7; return 2;
    case 2: return p[x * 5] * 3;
    case 3: atomicAdd(p, 1); return 4;
    case 5: return p[9] - 2;
    default: return -1;
  }
}
__global__ void k1(int *p, int x) {
  switch (x & 7) {
    case 0: p[0] = f(x, p); break;
    case 1: p[1] = g(x, p); break;
    case 2: p[2] = 5; break;
    case 3: p[x] = 6; break;
    case 4: atomicAdd(p + 4, 2); break;
    default: break;
  }
}
__global__ void k2(int *p, int x) { p[0] = g(x, p) + f(x + 1, p); }
__global__ void k3(int *p, int x) { p[0] = x; }
