// Early EXITs behind a branch in -g links: nvlink adds the stack pointer's
// wait only at an EXIT before the kernel's first branch.
__global__ void early(int *p, int n)
{
    if (blockIdx.x == 0) {
        if (threadIdx.x < n)
            p[threadIdx.x] = 1;
        return;
    }
    if (threadIdx.x >= n)
        return;
    p[blockIdx.x * 256 + threadIdx.x] = 2;
}

__global__ void early2(char *p, unsigned n, unsigned m, char v)
{
    unsigned t = threadIdx.x;
    if (blockIdx.x != 0) {
        unsigned i = blockIdx.x * 256 + t - 256;
        if (i >= m)
            return;
        ((unsigned long long *)p)[i] = v;
        return;
    }
    if (t < n)
        p[t] = v;
    if (t >= m)
        return;
    p[n + t] = v;
}
