__device__ __noinline__ int g(int x, int *p) {
  switch (x) {
    case 10: return p[3] + 11;
    case 11: p[1] = 17; return 12;
    case 12: return p[x * 5] * 13;
    case 13: atomicAdd(p, 11); return 14;
    case 15: return p[19] - 12;
    default: return -11;
  }
}
// Called by nothing: dead in a final link, with its jump table.
__device__ __noinline__ int unused(int x, int *p) {
  switch (x) {
    case 30: return p[3] + 31;
    case 31: p[1] = 37; return 32;
    case 32: return p[x * 5] * 33;
    case 33: atomicAdd(p, 31); return 34;
    case 35: return p[39] - 32;
    default: return -31;
  }
}
