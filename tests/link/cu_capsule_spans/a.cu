#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__constant__ float cA[16];
__constant__ int cB[8];
extern __constant__ int cX[4];
// Fences: ptxas writes `@!PT LDS` fillers, MEMBAR, ERRBAR, CGAERRBAR and
// CCTL.IVALL; the capsule folds them into one instruction behind a `d1 04`
// span prefix, so the constant loads after them sit at other capsule
// instructions than their SASS index says.
__device__ __noinline__ float fenced(float *p, int i) {
    float v = cA[i & 15] + cB[2];
    __threadfence();
    p[i] = v;
    __threadfence();
    return v * cA[(i + 3) & 15] + cX[i & 3] + cB[5];
}
// An acquire load (LD.STRONG + CCTL.IVALL: a `51 01` span) before a load of
// a constant.
__device__ __noinline__ int acquire(int *flag, int i) {
    int f;
    asm volatile("ld.acquire.gpu.b32 %0, [%1];" : "=r"(f) : "l"(flag));
    return f + cB[i & 7] + cX[1];
}
// Grid sync in a device function: the cluster-size triples before the
// parameter loads (`51 02` spans), then constants.
__device__ __noinline__ float synced(float *out, int i) {
    cg::this_grid().sync();
    return out[i] + cA[7] + cX[3];
}
__global__ void k_fence(float *p, int *flag, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = fenced(p, i) + acquire(flag, i);
    p[i + n] = v + synced(p, i) + cB[1];
}
