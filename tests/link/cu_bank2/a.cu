extern __device__ float h1(float x);
extern __device__ float h3(float x);
__global__ void ka(float *o) { o[0] = h1(o[1]); }
__global__ void kb(float *o) { o[0] = h1(o[2]) + sin((double)o[3]); }
__global__ void kc(float *o) { o[0] = h3(o[2]) + cos((double)o[3]); }
