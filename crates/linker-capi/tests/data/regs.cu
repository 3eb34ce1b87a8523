// Sources of regs_k.ptx and regs_g.ptx (nvcc 13.0.88, `nvcc -arch=sm_80
// -rdc=true -ptx` on each half as its own file): a kernel with enough
// register pressure that -maxrregcount changes its code.

// ---- k.cu -> regs_k.ptx
__device__ float g(float x);
__global__ void k(float *a, int n) {
  float acc[16];
  for (int i = 0; i < 16; i++) acc[i] = a[threadIdx.x + i * n];
  for (int j = 0; j < n; j++)
    for (int i = 0; i < 16; i++) acc[i] = acc[i] * acc[(i + 3) & 15] + g(acc[i]) / (acc[i] + 1.0f);
  float s = 0; for (int i = 0; i < 16; i++) s += sqrtf(acc[i]);
  a[threadIdx.x] = s;
}

// ---- g.cu -> regs_g.ptx
__device__ float g(float x) { return sinf(x) * 2.0f; }
