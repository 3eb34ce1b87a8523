// Templated device functions instantiated in two TUs (same instantiation in both:
// weak/COMDAT-like definitions), __device__ and __constant__ globals used across TUs.
template <typename T> __device__ T scale(T x) { return x * T(3) + T(1); }

extern __device__ float fsum;
extern __constant__ int coeffs[8];
template <typename T> __device__ T combine(T a, T b);   // explicit instantiations in b.cu

__device__ int counter_a = 5;

__global__ void kt_int(int *out)
{
    int i = threadIdx.x;
    out[i] = scale<int>(i) + combine<int>(i, coeffs[i & 7]) + counter_a;
}

__global__ void kt_float(float *out)
{
    int i = threadIdx.x;
    out[i] = scale<float>(out[i]) + combine<float>(out[i], 2.0f) + fsum;
}
