// Device-side launch (CUDA dynamic parallelism, libcudadevrt): kparent's thread 0
// calls b.cu's launch_children, which launches this object's `child` kernel.
__global__ void child(int *out, int base)
{
    out[base + threadIdx.x] = base * 100 + threadIdx.x;
}

__device__ void launch_children(int *out, int n);   // b.cu

__global__ void kparent(int *out, int n)
{
    if (threadIdx.x == 0)
        launch_children(out, n);
    out[1024 + threadIdx.x] = threadIdx.x * 3;
}
