template <int N> __global__ void tk(int *o) {
  __shared__ int s[N];
  s[threadIdx.x] = o[threadIdx.x];
  __syncthreads();
  o[threadIdx.x] = s[N - 1 - threadIdx.x];
}
template __global__ void tk<32>(int *);
__global__ void plain(int *o) { o[0] = 1; }
template <typename T> __global__ void dynk(T *o) { extern __shared__ __align__(16) unsigned char d[]; T *p = reinterpret_cast<T *>(d); p[threadIdx.x] = o[threadIdx.x]; __syncthreads(); o[threadIdx.x] = p[0]; }
template __global__ void dynk<int>(int *);
template __global__ void dynk<double>(double *);
