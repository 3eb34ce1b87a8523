// A device template two kernels call, with function-scope __shared__ arrays
// (module-scope .shared in the PTX: the link's module-scope region), one of
// them 16-aligned, as a CUB BlockReduce's TempStorage is (CUB itself is left
// out: its internal-linkage statics carry a per-build hash in their names).
template <int N>
__device__ int reduce_it(int v) {
  __shared__ int tmp[128];
  __shared__ __align__(16) float4 extra[4];
  tmp[threadIdx.x % 128] = v;
  extra[threadIdx.x % 4] = make_float4(v, v, v, v);
  __syncthreads();
  int s = 0;
  for (int i = 0; i < 128; i += 32) s += tmp[(threadIdx.x + i) % 128];
  return s + (int)extra[(threadIdx.x + 1) % 4].x;
}
__global__ void k1(int *o) { o[threadIdx.x] = reduce_it<1>(threadIdx.x); }
__global__ void k2(int *o) { o[threadIdx.x] = reduce_it<1>(threadIdx.x * 2); }
__global__ void k3(int *o) { o[threadIdx.x] = threadIdx.x; }
extern __device__ int helper(int);
__global__ void k4(int *o) { o[threadIdx.x] = helper(threadIdx.x); }
