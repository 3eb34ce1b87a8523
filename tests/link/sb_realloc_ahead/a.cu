// Blackwell scoreboard replay where paths meet: CUB block scans whose
// warp-0 raking path and the path around it bring groups to the same join,
// and a warp-divergent slow path whose ENDCOLLECTIVE waits again for what
// its WARPSYNC.COLLECTIVE drained.
#include <cub/block/block_scan.cuh>
#include <cuda/functional>

// The store's read group at the end of the raking path avoids the
// scoreboard the path around it brings to the join (an earlier store's).
__global__ void xsum(unsigned long long *bins, int n)
{
    typedef cub::BlockScan<unsigned long long, 256> Scan;
    __shared__ typename Scan::TempStorage tmp;
    int i = blockIdx.x * 256 + threadIdx.x;
    unsigned long long v = i < n ? bins[i] : 0;
    Scan(tmp).ExclusiveSum(v, v);
    if (i < n)
        bins[i] = v;
}

// The slow path's shuffles avoid the scoreboard its ENDCOLLECTIVE waits
// for again.
__global__ void xsum4(int *d)
{
    typedef cub::BlockScan<int, 128> Scan;
    __shared__ typename Scan::TempStorage tmp;
    int i = blockIdx.x * 128 + threadIdx.x;
    int v[4];
    for (int k = 0; k < 4; k++)
        v[k] = d[4 * i + k];
    Scan(tmp).InclusiveSum(v, v);
    for (int k = 0; k < 4; k++)
        d[4 * i + k] = v[k];
}

__global__ void scan_max(float *d, int n)
{
    typedef cub::BlockScan<float, 256, cub::BLOCK_SCAN_RAKING_MEMOIZE> Scan;
    __shared__ typename Scan::TempStorage tmp;
    int i = blockIdx.x * 256 + threadIdx.x;
    float v = i < n ? d[i] : 0.f;
    Scan(tmp).InclusiveScan(v, v, cuda::maximum<>());
    if (i < n)
        d[i] = v;
}
