#include <cstdio>
#include <cassert>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__constant__ float coeffs[64];
__device__ unsigned long long counter;
extern __device__ float helper_sin(float);
template <int N> __device__ float poly(float x) { float r = 0; for (int i = 0; i < N; ++i) r = r * x + coeffs[i]; return r; }
__global__ void k_poly(float *out, const float *in, int n) {
  extern __shared__ float buf[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  buf[threadIdx.x] = i < n ? in[i] : 0.f;
  __syncthreads();
  auto g = cg::this_thread_block();
  float v = poly<8>(buf[threadIdx.x]) + helper_sin(buf[threadIdx.x]);
  g.sync();
  if (i < n) out[i] = v;
  atomicAdd(&counter, 1ull);
  assert(v == v);
  if (i == 0) printf("counter %llu\n", counter);
}
__global__ void k_tex(cudaTextureObject_t t, float *out) { out[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x); }
__global__ void k_malloc(int **out) { int *p = (int *)malloc(16 * sizeof(int)); p[0] = 1; out[threadIdx.x] = p; }
