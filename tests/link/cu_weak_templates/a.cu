template <typename T> __device__ __noinline__ void release(T *p) { free(p); }
template <typename T> __global__ void tk(T *o) {
  T *p = (T *)malloc(4 * sizeof(T));
  p[0] = o[0];
  o[1] = p[0];
  release(p);
}
template __global__ void tk<int>(int *);
template __device__ void release<double>(double *);
__global__ void ka(float *o) {
  float *p = (float *)malloc(16);
  o[0] = p[0];
  release(p);
}
