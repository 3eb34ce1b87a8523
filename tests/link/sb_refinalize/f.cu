__global__ void kf(float *p, const float *q) { int i = blockIdx.x*blockDim.x+threadIdx.x; p[i]=q[i]; __threadfence(); p[i+1]=q[i+1]; }
