__global__ void child(int *out, int base);   // a.cu

__device__ void launch_children(int *out, int n)
{
    for (int i = 0; i < n; i++)
        child<<<1, 32>>>(out, i * 32);
}
