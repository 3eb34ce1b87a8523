// __managed__ variables defined in one TU and used in another; a __device__ array
// with an explicit alignment and a __constant__ struct.
extern __managed__ int mcount;
extern __managed__ float mtable[16];
struct alignas(16) Params { float a, b, c, d; };
extern __constant__ Params cparams;

__global__ void km(float *out)
{
    int i = threadIdx.x;
    atomicAdd(&mcount, 1);
    out[i] = mtable[i & 15] * cparams.a + cparams.d;
}
