#include <cub/block/block_reduce.cuh>
template <int N>
__device__ int reduce_it(int v) {
  typedef cub::BlockReduce<int, 128> BR;
  __shared__ typename BR::TempStorage tmp;
  __shared__ __align__(16) float4 extra[4];
  extra[threadIdx.x % 4] = make_float4(v, v, v, v);
  __syncthreads();
  return BR(tmp).Sum(v) + (int)extra[(threadIdx.x + 1) % 4].x;
}
__global__ void k1(int *o) { o[threadIdx.x] = reduce_it<1>(threadIdx.x); }
__global__ void k2(int *o) { o[threadIdx.x] = reduce_it<1>(threadIdx.x * 2); }
__global__ void k3(int *o) { o[threadIdx.x] = threadIdx.x; }
extern __device__ int helper(int);
__global__ void k4(int *o) { o[threadIdx.x] = helper(threadIdx.x); }
