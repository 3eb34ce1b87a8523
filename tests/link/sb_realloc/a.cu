// Leaf kernels compiled -rdc: ptxas puts the stack-pointer load on a
// scoreboard that nvlink's Blackwell finalizer takes away, allocating the
// other scoreboards again (docs/blackwell.md section 8).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void saxpy(float a, const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
__global__ void reduce(const float *x, float *o, int n) {
  __shared__ float s[256];
  int t = threadIdx.x;
  float v = 0;
  for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) v += x[i];
  s[t] = v;
  __syncthreads();
  for (int k = 128; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) atomicAdd(o, s[0]);
}
__global__ void transpose(float *o, const float *in, int w, int h) {
  __shared__ float tile[32][33];
  int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
  if (x < w && y < h) tile[threadIdx.y][threadIdx.x] = in[y * w + x];
  __syncthreads();
  x = blockIdx.y * 32 + threadIdx.x;
  y = blockIdx.x * 32 + threadIdx.y;
  if (x < h && y < w) o[y * h + x] = tile[threadIdx.x][threadIdx.y];
}
__global__ void atomics(int *a, unsigned long long *b, float *c) {
  atomicMax(a, threadIdx.x);
  atomicExch(a + 1, 3);
  atomicAdd(b, 1ull);
  atomicAdd(c, 1.f);
  a[3 + threadIdx.x] = atomicInc((unsigned *)a + 2, 100);
}
__global__ void texfetch(cudaTextureObject_t t, float *o) { o[threadIdx.x] = tex1Dfetch<float>(t, threadIdx.x); }
__global__ void ballot(int *a) {
  unsigned b = __ballot_sync(~0u, a[threadIdx.x] > 0);
  a[threadIdx.x] = __popc(b) + __ffs(b);
}
__global__ void dmath(double *a, int n) {
  int i = threadIdx.x;
  if (i < n) a[i] = a[i] * a[i + 1] + 2.0 * a[i + 2];
}
__global__ void cas_fence_clock(int *p, long long *q) {
  long long t = clock64();
  int v = atomicCAS(p, 0, 1);
  __threadfence();
  if (v) { q[0] = clock64() - t; return; }
  p[threadIdx.x] = __shfl_down_sync(0xffffffff, v, 1);
}
__global__ void trap(int *p, int n) {
  int i = threadIdx.x + blockIdx.x * blockDim.x;
  if (i >= n) return;
  if (p[i] < 0) __trap();
  p[i] += 1;
}
__global__ void asm_exit(int *p) {
  if (threadIdx.x & 1) asm volatile("exit;");
  p[threadIdx.x] = 2;
}
__global__ void sleep_reduce(int *p) {
  while (atomicAdd(p, 0) == 0) __nanosleep(100);
  p[1] = __reduce_add_sync(0xffffffff, p[threadIdx.x]);
}
__global__ void cluster(int *p) {
  cg::cluster_group c = cg::this_cluster();
  __shared__ int s[32];
  s[threadIdx.x % 32] = threadIdx.x;
  c.sync();
  int *r = c.map_shared_rank(s, (c.block_rank() + 1) % c.num_blocks());
  p[threadIdx.x] = r[threadIdx.x % 32];
  c.sync();
}
// Not re-allocated: it uses the stack (nvlink keeps its scoreboards too).
__global__ void local_array(int *a, int k) {
  int arr[16];
  for (int i = 0; i < 16; i++) arr[i] = a[i] * i;
  a[threadIdx.x] = arr[k & 15];
}
// A grid-stride loop: the store's read scoreboard is waited at the top.
__global__ void copy_loop(int *d, const int *s, size_t n) {
  for (size_t i = threadIdx.x; i < n; i += blockDim.x) d[i] = s[i];
}
