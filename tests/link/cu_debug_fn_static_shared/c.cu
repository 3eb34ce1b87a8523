__device__ float smem_reduce(float v);
__device__ float tile_user(float v);
__global__ void kc(float *o) { o[0] = smem_reduce(o[1]) + tile_user(o[2]); }
