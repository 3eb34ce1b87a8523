template <int N>
__device__ int f8(int v) {
  __shared__ double d[8];
  d[threadIdx.x % 8] = v;
  __syncthreads();
  return (int)d[(threadIdx.x + 1) % 8];
}
template <int N>
__device__ int f16(int v) {
  __shared__ __align__(16) float4 e[4];
  e[threadIdx.x % 4] = make_float4(v, v, v, v);
  __syncthreads();
  return (int)e[(threadIdx.x + 1) % 4].x;
}
__global__ void ka(int *o) { o[threadIdx.x] = f8<1>(threadIdx.x); }
__global__ void kb(int *o) { o[threadIdx.x] = f8<1>(threadIdx.x * 2); }
__global__ void kc(int *o) { o[threadIdx.x] = f16<1>(threadIdx.x); }
__global__ void kz(int *o) { o[threadIdx.x] = 3; }
