// Constant memory in three objects: ca here, cb (extern, defined in b.cu) and
// cc, read by c.cu's function.
__constant__ int ca[4] = {1, 2, 3, 4};
extern __constant__ float cb[2];   // b.cu
__device__ int sum_c(int t);       // c.cu

__global__ void kconst(float *out)
{
    int t = threadIdx.x;
    out[t] = ca[t & 3] * cb[t & 1] + sum_c(t);
}
