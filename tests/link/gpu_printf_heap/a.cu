#include <cstdio>
// Every thread mallocs a scratch array, lets b.cu fill and sum it, frees it.
__device__ int fill_b(int *p, int n, int seed);   // b.cu

__global__ void kheap(int *out, int n)
{
    int t = threadIdx.x + blockIdx.x * blockDim.x;
    int *p = (int *)malloc(n * sizeof(int));
    if (!p) {
        out[t] = -1;
        return;
    }
    int s = fill_b(p, n, t);
    free(p);
    out[t] = s;
    if (t % 16 == 0)
        printf("kheap t=%d sum=%d\n", t, s);
}
