#include <cstdio>
__device__ int fill_b(int *p, int n, int seed)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        p[i] = seed * 31 + i;
        s += p[i] ^ (i << 2);
    }
    if (seed == 0)
        printf("fill_b n=%d first=%d %s %f\n", n, p[0], "str", 1.5);
    return s;
}
