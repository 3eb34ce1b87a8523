#include <cstdio>
#include <cassert>
// printf and assert in kernels and device functions of three TUs.
__device__ int log_b(int x);   // b.cu
__device__ int log_c(int x);   // c.cu

__global__ void kp(int *out)
{
    int i = threadIdx.x;
    printf("kp: thread %d\n", i);
    assert(out != nullptr);
    out[i] = log_b(i) + log_c(i);
}
