__device__ float gscale = 2.0f;
__device__ __noinline__ int helper(int x) { return x * 3 + 1; }
__global__ void other(int* p) { p[threadIdx.x] = helper(threadIdx.x); }
