template <typename T> __device__ T scale(T x) { return x * T(3) + T(1); }

template <typename T> __device__ T combine(T a, T b) { return scale<T>(a) - b; }
template __device__ int combine<int>(int, int);
template __device__ float combine<float>(float, float);

__device__ float fsum = 1.5f;
__constant__ int coeffs[8] = {1, 2, 3, 4, 5, 6, 7, 8};
extern __device__ int counter_a;

__global__ void kt_b(int *out)
{
    out[threadIdx.x] = scale<int>(counter_a) + coeffs[3];
}
