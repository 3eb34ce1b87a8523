#include <cuda_fp16.h>
#include <cuda_bf16.h>
__device__ __half g_hscale = __half_raw{0x3400};
__constant__ __half_raw c_coef[8] = {{0x3c00}, {0x3800}, {0x3400}, {0x3000}, {0xbc00}, {0x4000}, {0x4200}, {0x4400}};
__constant__ __nv_bfloat16_raw c_bcoef[4] = {{0x3f80}, {0xbf00}, {0x3f40}, {0x4000}};
__device__ __half2 h2_poly(__half2 x)
{
    __half2 r = __half2half2(c_coef[7]);
    for (int j = 6; j >= 0; --j) r = __hfma2(r, x, __half2half2(c_coef[j]));
    return __h2div(r, h2cos(x) + h2sin(x)) + h2rcp(x) * h2tanh(x);
}
__device__ __nv_bfloat162 bf_poly(__nv_bfloat162 x)
{
    __nv_bfloat162 r = __bfloat162bfloat162(c_bcoef[3]);
    for (int j = 2; j >= 0; --j) r = r * x + __bfloat162bfloat162(c_bcoef[j]);
    return __hmin2(r, h2rsqrt(x)) / x;
}
