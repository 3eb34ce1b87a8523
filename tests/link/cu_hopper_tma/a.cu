#include <cuda.h>
#include <cstdint>
__device__ int helper(int x);
extern __device__ float gscale;

__device__ __forceinline__ unsigned smem_addr(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

__device__ __noinline__ void wait_bar(unsigned bar, unsigned parity) {
  unsigned done = 0;
  while (!done) {
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(bar), "r"(parity) : "memory");
  }
}

__global__ void __launch_bounds__(128) tma_kernel(const __grid_constant__ CUtensorMap tmap, float* out, int n) {
  __shared__ alignas(128) float tile[32 * 32];
  __shared__ alignas(8) uint64_t bar;
  unsigned b = smem_addr(&bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(32 * 32 * 4) : "memory");
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
                 :: "r"(smem_addr(tile)), "l"(&tmap), "r"(0), "r"(blockIdx.x * 32), "r"(b) : "memory");
  }
  wait_bar(b, 0);
  for (int i = threadIdx.x; i < 32 * 32 && i < n; i += blockDim.x)
    out[blockIdx.x * 1024 + i] = tile[i] * gscale + helper(i);
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                 :: "l"(&tmap), "r"(0), "r"(blockIdx.x * 32), "r"(smem_addr(tile)) : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}

__global__ void __launch_bounds__(128) wgmma_kernel(float* out, uint64_t descA, uint64_t descB, int scale) {
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %6, 0;\n"
               " wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, %4, %5, p, 1, 1, 0, 0;\n}\n"
               : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3) : "l"(descA), "l"(descB), "r"(scale));
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#endif
  out[threadIdx.x] = (d0 + d1 + d2 + d3) * gscale;
}

__global__ void __cluster_dims__(2, 1, 1) dsmem_kernel(int* out) {
  __shared__ int s[64];
  s[threadIdx.x % 64] = threadIdx.x + helper(1);
  asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
  unsigned rank, peer_addr;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(peer_addr) : "r"(smem_addr(s)), "r"(rank ^ 1));
  int v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(peer_addr));
  asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;" ::: "memory");
  out[blockIdx.x * blockDim.x + threadIdx.x] = v;
}
