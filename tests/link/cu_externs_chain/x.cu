#include <cstdio>
extern __device__ int g(int);
__device__ __noinline__ int f(int a) { return g(a) + 1; }
__global__ void k(int *p) { p[0] = f(p[1]); }
