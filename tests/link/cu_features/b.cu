#include <cuda_fp16.h>
__device__ float helper_sin(float x) { return __sinf(x) + sqrtf(fabsf(x)) + erff(x); }
__device__ __half hmul(__half a, __half b) { return __hmul(a, b); }
__global__ void k_half(__half *p) { p[threadIdx.x] = hmul(p[threadIdx.x], p[threadIdx.x]); }
struct Base { virtual __device__ float f(float x) { return x; } };
struct Der : Base { __device__ float f(float x) override { return 2 * x; } };
__global__ void k_virt(float *p) { Der d; Base *b = &d; p[threadIdx.x] = b->f(p[threadIdx.x]); }
__global__ void k_lambda(int *p) { auto l = [=](int a) { return a * 3; }; p[threadIdx.x] = l(p[threadIdx.x]); }
