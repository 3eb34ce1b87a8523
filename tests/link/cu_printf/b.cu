#include <cstdio>
#include <cassert>
__device__ int log_b(int x)
{
    printf("log_b %d %f\n", x, (double)x * 0.5);
    assert(x >= 0);
    return x + 1;
}
