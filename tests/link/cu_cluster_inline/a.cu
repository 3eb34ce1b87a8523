#include <cooperative_groups.h>
namespace cg = cooperative_groups;
template <typename T> __device__ inline T twice(T x) { return x + x; }
__device__ int shared_helper(int v);
__global__ void k_sum(const int *in, int *out) {
  __shared__ int partial[128];
  partial[threadIdx.x] = in[threadIdx.x];
  __syncthreads();
  for (int s = 64; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  out[threadIdx.x] = partial[0] + twice(in[threadIdx.x]) + shared_helper(threadIdx.x);
}
__global__ void __cluster_dims__(2, 1, 1) k_cluster(int *out) {
  __shared__ int smem[64];
  cg::cluster_group cluster = cg::this_cluster();
  smem[threadIdx.x % 64] = threadIdx.x;
  cluster.sync();
  int *peer = cluster.map_shared_rank(smem, (cluster.block_rank() + 1) % 2);
  out[threadIdx.x] = peer[threadIdx.x % 64] + twice(1);
  cluster.sync();
}
