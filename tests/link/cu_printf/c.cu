#include <cstdio>
__device__ int log_c(int x)
{
    printf("log_c %s %d\n", "same format in another TU", x);
    return x * 2;
}

__global__ void kp_c(int *out)
{
    printf("kp_c %d\n", out[0]);
}
