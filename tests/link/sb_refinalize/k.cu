__global__ void k(float *p, const float *q, int n) { int i = blockIdx.x*blockDim.x+threadIdx.x; if (i < n) p[i] = q[i]*2.0f + p[i]; }
