__global__ void f_gpu(int *p, int n) { p[threadIdx.x] = (n * 5); __threadfence(); p[threadIdx.x + 1] = n; }
__global__ void f_sys(int *p, int n) { p[threadIdx.x] = (n * 5); __threadfence_system(); p[threadIdx.x + 1] = n; }
__global__ void f_cta(int *p, int n) { p[threadIdx.x] = (n * 5); __threadfence_block(); p[threadIdx.x + 1] = n; }
__global__ void f_acqrel_gpu(int *p, int n) { p[threadIdx.x] = (n * 5); asm volatile("fence.acq_rel.gpu;" ::: "memory"); p[threadIdx.x + 1] = n; }
__global__ void f_acqrel_sys(int *p, int n) { p[threadIdx.x] = (n * 5); asm volatile("fence.acq_rel.sys;" ::: "memory"); p[threadIdx.x + 1] = n; }
__global__ void f_sc_cta(int *p, int n) { p[threadIdx.x] = (n * 5); asm volatile("fence.sc.cta;" ::: "memory"); p[threadIdx.x + 1] = n; }
__global__ void f_proxy(int *p, int n) { p[threadIdx.x] = (n * 5); asm volatile("fence.proxy.async;" ::: "memory"); p[threadIdx.x + 1] = n; }
__global__ void f_release(int *p, int n) { p[threadIdx.x] = (n * 5); asm volatile("red.release.gpu.global.add.u32 [%0], %1;" :: "l"(p + 5), "r"(n) : "memory"); }
__global__ void f_relsys(int *p, int n) { p[threadIdx.x] = (n * 5); asm volatile("red.release.sys.global.add.u32 [%0], %1;" :: "l"(p + 5), "r"(n) : "memory"); }
__global__ void f_acquire(int *p, int n) { int v; asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p + 7) : "memory"); p[threadIdx.x] = (v + 1); }
__global__ void f_two(int *p, int n) { p[threadIdx.x] = (n * 5); __threadfence(); p[1] = (n * 3); __threadfence(); p[2] = n; }
__device__ __noinline__ void dev_fence(int *p) { p[0] = 1; __threadfence(); p[1] = 2; }
__global__ void f_dev(int *p, int n) { dev_fence(p); p[3] = (n * 5); }
__global__ void h_local(int *p, int n) { int buf[16]; for (int k = 0; k < 16; ++k) buf[k] = p[k] * k; p[0] = buf[n & 15]; __threadfence(); p[1] = buf[(n + 3) & 15]; }
