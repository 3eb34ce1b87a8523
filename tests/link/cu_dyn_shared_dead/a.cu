extern __shared__ float dyn[];
__device__ __noinline__ void unused_store(float x) { dyn[threadIdx.x] = x; }
__global__ void kk(float *o) { o[0] = 1; }
