__device__ __noinline__ int h(int x, int *p) {
  switch (x) {
    case 20: return p[3] + 21;
    case 21: p[1] = 27; return 22;
    case 22: return p[x * 5] * 23;
    case 23: atomicAdd(p, 21); return 24;
    case 25: return p[29] - 22;
    default: return -21;
  }
}
__global__ void kc(int *p, int x) { p[0] = h(x, p); }
