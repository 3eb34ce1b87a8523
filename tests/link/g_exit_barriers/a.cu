__device__ float scale(float x);
__global__ void k(float *p, const float *q, int n) { int i = blockIdx.x*blockDim.x+threadIdx.x; if (i >= n) return; p[i] = scale(q[i]) + p[i]; }
