// Kernel calling a __device__ function and reading a __device__ variable from
// another translation unit (relocatable device code).
extern __device__ int add_one(int x);
extern __device__ int gcounter;

__global__ void kern_a(int *out)
{
    out[threadIdx.x] = add_one(threadIdx.x) + gcounter;
}
