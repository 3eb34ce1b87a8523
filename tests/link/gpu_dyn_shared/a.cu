// Dynamic shared memory (sized at launch, up to 64 KiB) plus static shared
// memory; the dynamic array is read by a function of b.cu.
__device__ int reduce_b(const int *s, int n);   // b.cu

__global__ void kdyn(int *out, int n)
{
    extern __shared__ int dyn[];
    __shared__ int stat[32];
    int t = threadIdx.x;
    for (int i = t; i < n; i += blockDim.x)
        dyn[i] = i * 3 + 1;
    if (t < 32)
        stat[t] = t * t;
    __syncthreads();
    out[t] = reduce_b(dyn, n) + stat[t % 32] + dyn[(t * 7) % n];
}
