// Kernels whose .nv.info holds (instruction offset, value) pairs behind an
// early EXIT: the offsets move when a -g link puts barriers before it.
#include <cuda_fp16.h>
// EIATTR_UNUSED_LOAD_BYTE_OFFSET: a char4 load of which two bytes are used.
__global__ void bytes_used(const char4 *p, int *o, int n) {
  if (threadIdx.x >= n) return;
  char4 v = p[threadIdx.x];
  o[threadIdx.x] = v.x + v.w;
}
// EIATTR_ATOM16_EMUL_INSTR_REG_MAP: 16-bit atomics emulated.
__global__ void half_atomic(__half *h, const float *x, int n) {
  if (threadIdx.x >= n) return;
  atomicAdd(h + (threadIdx.x & 7), __float2half(x[threadIdx.x]));
}
