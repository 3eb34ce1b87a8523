#include <mma.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
using namespace nvcuda;
extern __device__ void mma_tile(const unsigned *a, const unsigned *b, float *c);
extern __device__ float g_alpha;
__global__ void k_wmma(const __half *a, const __half *b, float *c, int ld)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    for (int k = 0; k < ld; k += 16) {
        wmma::load_matrix_sync(fa, a + k, ld);
        wmma::load_matrix_sync(fb, b + k, ld);
        wmma::mma_sync(fc, fa, fb, fc);
    }
    for (int i = 0; i < fc.num_elements; ++i) fc.x[i] *= g_alpha;
    wmma::store_matrix_sync(c, fc, ld, wmma::mem_row_major);
}
__global__ void k_wmma_int(const signed char *a, const signed char *b, int *c)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, signed char, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, signed char, wmma::col_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, int> fc;
    wmma::fill_fragment(fc, 0);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_col_major);
}
#if __CUDA_ARCH__ >= 800
__global__ void k_wmma_bf(const __nv_bfloat16 *a, const __nv_bfloat16 *b, float *c)
{
    wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> fb;
    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
    wmma::fill_fragment(fc, 0.0f);
    wmma::load_matrix_sync(fa, a, 16);
    wmma::load_matrix_sync(fb, b, 16);
    wmma::mma_sync(fc, fa, fb, fc);
    wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}
#endif
__global__ void k_mma(const unsigned *a, const unsigned *b, float *c)
{
    mma_tile(a + threadIdx.x * 4, b + threadIdx.x * 2, c + threadIdx.x * 4);
}
