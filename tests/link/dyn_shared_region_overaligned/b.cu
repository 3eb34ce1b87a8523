__device__ __noinline__ int shfn2(int x){ __shared__ __align__(32) int modsh[64]; modsh[x & 63] = x; __syncthreads(); return modsh[(x + 1) & 63]; }
__global__ void kd2(int *o){ extern __shared__ int dyn[]; dyn[threadIdx.x] = shfn2(1); __syncthreads(); o[0] = dyn[3]; }
__global__ void kb2(int *o){ o[0] = shfn2(2); }
