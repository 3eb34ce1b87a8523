template <typename T> __device__ inline T twice(T x) { return x + x; }
__device__ int shared_helper(int v) { return twice(v) * 3; }
__global__ void k_b(int *p) { p[threadIdx.x] = twice(p[threadIdx.x]); }
