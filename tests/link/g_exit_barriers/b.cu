__device__ float scale(float x) { return x * 2.0f + 1.0f; }
__global__ void k2(int *p) { p[threadIdx.x] = threadIdx.x; }
