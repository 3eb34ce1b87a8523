#include <cuda_pipeline.h>
__constant__ float cf[16];
__constant__ double cd[8];
__constant__ int ci[32];
extern __constant__ int cx[4];
__device__ __noinline__ float helper(float x, int i) {
    return x * cf[5] + ci[7] + cx[i & 3] + cx[2];
}
// cp.async: ptxas puts `@!PT LDS RZ, [RZ]` fillers before LDGSTS, which the
// capsule does not count; the constant loads after them are patched.
__global__ void k_async(float *o, const float *a) {
    __shared__ float buf[128];
    int t = threadIdx.x;
    __pipeline_memcpy_async(&buf[t], &a[t], sizeof(float));
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();
    o[t] = buf[(t + 1) & 127] * cf[3] + ci[5] + cx[1] + helper(buf[t], t);
}
// Double precision: NOPs inside the code at sm_120 (capsule `d0 00` items).
__global__ void k_double(double *o, const double *a, int n) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    double acc = cd[0];
    for (int i = t; i < n; i += gridDim.x * blockDim.x)
        acc = fma(a[i], cd[i & 7], acc) + sqrt(a[i] + cd[1]);
    o[t] = acc * ci[t & 31] + cd[6] + cx[3];
}
