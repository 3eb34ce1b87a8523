__global__ void kb(float *p, const float *q, int n) { int i = blockIdx.x*blockDim.x+threadIdx.x; p[i] = q[i] / q[i+n]; }
