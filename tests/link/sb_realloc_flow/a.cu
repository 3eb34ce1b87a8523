#include <cooperative_groups.h>

// Loops of conditional atomics: a chain of forward branches longer than the
// replay's rounds, and a loop whose top waits for groups of its bottom.
__global__ void shist(unsigned long long *out, const unsigned *in)
{
    __shared__ unsigned s[12 * 256];
    for (int i = threadIdx.x; i < 12 * 256; i += 128)
        s[i] = in[i];
    __syncthreads();
    for (int i = threadIdx.x; i < 256; i += 128) {
#pragma unroll
        for (int k = 0; k < 12; ++k) {
            unsigned v = s[k * 256 + i];
            if (v)
                atomicAdd(&out[k * 256 + i], (unsigned long long)v);
        }
    }
}

__global__ void chain(const int *a, int *b, int n)
{
    int t = threadIdx.x;
    int acc = a[t];
#pragma unroll
    for (int k = 0; k < 12; ++k) {
        if (acc & (1 << k))
            acc += a[t + k * n];
    }
    b[t] = acc;
}

// Conditional atomics at the bottom of a loop: their groups are waited for
// only through the backward branch, at the loop's top (a join).
__global__ void hloop3(const unsigned *bins, unsigned *out, int rows, int stride)
{
    for (int r = threadIdx.x; r < rows; r += stride) {
        unsigned v = bins[r];
        if (v)
            atomicAdd(&out[r], v);
        unsigned w = bins[r + 64];
        if (w)
            atomicAdd(&out[r + 64], w);
    }
}

// Unrolled conditional 64-bit atomics in a loop: the last one's read group
// is carried back to the top, where an atomic's takes the lowest free
// scoreboard (a copy loop's store avoids those held there).
__global__ void hist8(const unsigned *counts, unsigned long long *out, int bins)
{
    for (int i = threadIdx.x; i < bins; i += blockDim.x) {
#pragma unroll
        for (int k = 0; k < 12; ++k) {
            unsigned v = counts[k * bins + i];
            if (v)
                atomicAdd(&out[k * bins + i], (unsigned long long)v);
        }
    }
}

// A tile shuffle: the loaded value is waited for on the fast path and on
// the warp-divergent slow path after the function's exit (a join), so its
// group lives across a join.
__global__ void tile_sum(int *d)
{
    namespace cg = cooperative_groups;
    auto t = cg::tiled_partition<16>(cg::this_thread_block());
    int v = d[threadIdx.x];
    for (int k = t.size() / 2; k; k /= 2)
        v += t.shfl_down(v, k);
    if (t.thread_rank() == 0)
        d[threadIdx.x] = v;
}
