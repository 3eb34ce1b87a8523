// CUB's onesweep radix-sort kernel (int keys, int values) at Blackwell,
// instantiated alone: its full-tile and partial-tile loads meet at the
// instruction that waits for both paths' read groups.
#include <cub/device/device_radix_sort.cuh>
namespace rs = cub::detail::radix_sort;
using Hub = cub::detail::radix::policy_hub<int, int, unsigned long long>;
template __global__ void
rs::DeviceRadixSortOnesweepKernel<Hub::Policy1000, cub::SortOrder::Ascending, int, int,
                                  unsigned long long, int, int,
                                  cub::detail::identity_decomposer_t>(
    int *, int *, unsigned long long *, const unsigned long long *, int *, const int *, int *,
    const int *, int, int, int, cub::detail::identity_decomposer_t);

// An external definition: cicc names the internal-linkage entities of the
// translation unit after one (without, after its process: not reproducible).
void onesweep_kernel() {}
