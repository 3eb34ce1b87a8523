extern __shared__ float dynsmem[];
__device__ int helper(int x) { return x + 1; }
__global__ void kd(float *o) { dynsmem[threadIdx.x] = o[threadIdx.x]; __syncthreads(); o[threadIdx.x] = dynsmem[(threadIdx.x + 1) % blockDim.x]; }
__global__ void kplain(int *o) { o[threadIdx.x] = 7; }
