extern __device__ float h1(float x);
extern __device__ float h3(float x);
__global__ void kd(float *o) { o[0] = h1(o[1]) + h3(o[2]) + sin((double)o[3]); }
