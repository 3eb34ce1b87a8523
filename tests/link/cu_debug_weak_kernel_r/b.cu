// A template kernel and device function instantiated in every object that
// includes this header: weak definitions, each object with its own -G DWARF.
template <typename T> __global__ void fill(T *out, T v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = v + T(i);
}
template <typename T> __device__ T twice(T x) { return x + x; }
template __global__ void fill<int>(int *, int, int);
template __global__ void fill<float>(float *, float, int);
__global__ void kb(float *o) { o[threadIdx.x] = twice(o[threadIdx.x]); }
