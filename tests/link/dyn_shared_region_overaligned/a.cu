__device__ __noinline__ int shfn(int x){ __shared__ __align__(128) int modsh[64]; modsh[x & 63] = x; __syncthreads(); return modsh[(x + 1) & 63]; }
__global__ void kd(int *o){ extern __shared__ int dyn[]; dyn[threadIdx.x] = shfn(1); __syncthreads(); o[0] = dyn[3]; }
__global__ void kb(int *o){ o[0] = shfn(2); }
