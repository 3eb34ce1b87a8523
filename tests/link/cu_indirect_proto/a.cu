typedef int (*fp_t)(int);
extern __device__ fp_t get_fp(int k);
extern __device__ fp_t g_fp;
__global__ void k1(int *o) { fp_t f = get_fp(o[0]); o[1] = (f != 0); }
__global__ void k2(int *o) { o[0] = g_fp(o[1]); }
__global__ void k3(int *o) { o[0] = 3; }
