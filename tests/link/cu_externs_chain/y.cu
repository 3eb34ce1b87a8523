#include <cstdio>
__device__ __noinline__ int g(int a) { printf("g %d\n", a); return a * 2; }
