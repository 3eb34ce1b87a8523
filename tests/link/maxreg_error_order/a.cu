__device__ float heavy(const float *p, int n);
__global__ void __launch_bounds__(256, 4) kb1(float *o, const float *p, int n){ o[threadIdx.x] = heavy(p, n); }
__global__ void __launch_bounds__(64) kb2(float *o, const float *p, int n){ o[threadIdx.x] = heavy(p, n) * 2; }
__global__ void __maxnreg__(40) kb3(float *o, const float *p, int n){ o[threadIdx.x] = heavy(p + 1, n); }
