__device__ int g_bias = 7;
__device__ int accumulate(int a, int n)
{
    int s = 0;
    for (int k = 0; k < n; ++k) {
        s += a * k;
    }
    return s;
}
__device__ int unused_scale(int a)
{
    int r = 1;
    for (int k = 0; k < a; ++k) {
        r *= 3;
    }
    return r;
}
