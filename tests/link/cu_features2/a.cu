#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
typedef int (*op_t)(int, int);
extern __device__ op_t ops[3];
extern __device__ int apply(int which, int a, int b);
__device__ int hidden_state = 5;
__device__ int table[256];
template <typename T, int K> __device__ T reduce_warp(T v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  return v * K;
}
__global__ void k_reduce(const int *__restrict__ in, int *out) {
  __shared__ int partial[32];
  int v = __ldg(&in[threadIdx.x]);
  v = reduce_warp<int, 2>(v);
  if ((threadIdx.x & 31) == 0) partial[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x == 0) { atomicAdd(&out[0], partial[0] + hidden_state); atomicMax(&table[3], v); }
}
__global__ void k_ops(int *p) { p[threadIdx.x] = apply(threadIdx.x % 3, p[threadIdx.x], 3) + ops[1](1, 2); }
__global__ void k_new(int n) { int *a = new int[n]; for (int i = 0; i < n; ++i) a[i] = i; printf("%d\n", a[n-1]); delete[] a; }
__global__ void k_surf(cudaSurfaceObject_t s) { int v; surf2Dread(&v, s, threadIdx.x * 4, 0); surf2Dwrite(v + 1, s, threadIdx.x * 4, 0); }
__global__ void k_dbl(double *d) { d[threadIdx.x] = sin(d[threadIdx.x]) * exp(d[threadIdx.x]); }
