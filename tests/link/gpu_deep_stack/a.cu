// One link of the recursion deep_a -> deep_b -> deep_c -> deep_a; each frame
// holds a volatile local array, so it really lives on the stack.
__device__ int deep_b(int d, int x);

__device__ int deep_a(int d, int x)
{
    volatile int buf[16];
    for (int i = 0; i < 16; i++)
        buf[i] = x + i * d;
    int r = d > 0 ? deep_b(d - 1, buf[d % 16] ^ 0x5a) : x;
    return r + buf[x & 15];
}

__global__ void kdeep(int *out, int depth)
{
    out[threadIdx.x] = deep_a(depth + threadIdx.x % 4, threadIdx.x);
}
