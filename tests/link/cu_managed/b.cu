struct alignas(16) Params { float a, b, c, d; };
__managed__ int mcount = 0;
__managed__ float mtable[16];
__constant__ Params cparams = {1.0f, 2.0f, 3.0f, 4.0f};
__device__ __align__(32) double dalign[3] = {1.0, 2.0, 3.0};

__global__ void km_b(double *out)
{
    out[threadIdx.x] = dalign[threadIdx.x % 3] + mcount;
}
