__device__ __noinline__ float heavy(const float *p, int n){
  float acc[24]; for (int i=0;i<24;i++) acc[i] = p[i*n];
  float s=0; for (int k=0;k<n;k++) for (int i=0;i<24;i++) s += acc[i]*acc[(i+k)%24] / (acc[(i*7)%24]+1.f);
  return s;
}
__global__ void __launch_bounds__(1024, 1) kb4(float *o, const float *p){ o[threadIdx.x] = heavy(p, 3); }
