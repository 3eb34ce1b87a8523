// Two kernels of CUB's radix sort at Blackwell, instantiated alone: the
// exclusive sum's warp-divergent slow path (BRA.DIV falls through to the
// converged path; the slow path after the EXIT starts with only what the
// branch brings) and the single-tile sort, which keeps more global loads
// in flight than their class has scoreboards.
#include <cub/device/device_radix_sort.cuh>
namespace rs = cub::detail::radix_sort;
using IntHub = cub::detail::radix::policy_hub<int, cub::NullType, unsigned long long>;
using FloatHub = cub::detail::radix::policy_hub<float, cub::NullType, int>;
template __global__ void
rs::DeviceRadixSortSingleTileKernel<IntHub::Policy1000, cub::SortOrder::Ascending, int,
                                    cub::NullType, unsigned long long,
                                    cub::detail::identity_decomposer_t>(
    const int *, int *, const cub::NullType *, cub::NullType *, unsigned long long, int, int,
    cub::detail::identity_decomposer_t);
template __global__ void rs::DeviceRadixSortExclusiveSumKernel<FloatHub::Policy1000, int>(int *);

// An external definition: cicc names the internal-linkage entities of the
// translation unit after one (without, after its process: not reproducible).
void radix_sort_kernels() {}
