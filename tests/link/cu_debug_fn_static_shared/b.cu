__shared__ float tile[64];
__shared__ int unused_tile[4];
__device__ float smem_reduce(float v)
{
    __shared__ float red[256];
    red[threadIdx.x] = v;
    __syncthreads();
    return red[(threadIdx.x + 1) % 256];
}
__device__ float never_called(float v)
{
    __shared__ float gone[16];
    gone[threadIdx.x % 16] = v;
    __syncthreads();
    return gone[0];
}
__device__ float tile_user(float v)
{
    tile[threadIdx.x % 64] = v;
    __syncthreads();
    return tile[(threadIdx.x + 5) % 64];
}
