#include <cuda_fp16.h>
#include <cuda_bf16.h>
extern __device__ __half2 h2_poly(__half2 x);
extern __device__ __nv_bfloat162 bf_poly(__nv_bfloat162 x);
extern __device__ __half g_hscale;
__global__ void k_half(const __half2 *in, __half2 *out, __half *acc, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __half2 x = in[i];
    __half2 y = __hfma2(x, h2_poly(x), __half2half2(g_hscale));
    y = __hmul2_sat(y, h2exp(x));
    y = h2sqrt(__habs2(y));
    out[i] = __hmax2(y, __hneg2(x));
    atomicAdd(&out[n], y);
    atomicAdd(acc, __low2half(y));
    float f = __half2float(__hadd(__low2half(y), __high2half(y)));
    acc[1 + (i & 7)] = __float2half_rn(f * 0.5f);
}
__global__ void k_bf(const __nv_bfloat162 *in, __nv_bfloat162 *out, float *f, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    __nv_bfloat162 x = in[i];
    #if __CUDA_ARCH__ >= 800
    __nv_bfloat162 y = __hfma2(x, bf_poly(x), __float2bfloat162_rn(1.5f));
#else
    __nv_bfloat162 y = x * bf_poly(x) + __float2bfloat162_rn(1.5f);
#endif
    y = h2exp(y) + h2log(__habs2(x));
    out[i] = y;
    atomicAdd(&out[n], y);
    f[i] = __bfloat162float(y.x) * __bfloat162float(y.y) + __low2float(y);
}
