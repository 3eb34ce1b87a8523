#include <cstdio>
typedef int (*fp_t)(int);
__device__ int g1(int x) { void *p = malloc(x); return p != 0; }
__device__ int g2(int x) { free((void*)(long)x); return 0; }
__device__ int g3(int x) { printf("%d\n", x); return 0; }
__device__ fp_t g_fp = g3;
__device__ fp_t get_fp(int k) { return k ? g1 : g2; }
