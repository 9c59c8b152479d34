// Working sets that stream from device memory rather than the L2, for the GPU probes whose
// low-intensity or load points must measure DRAM/HBM (issue, flops): the DRAM rate of a large-L2
// GPU converges only past ~4x its L2, so 4x the device's L2, rounded up to whole MiB, and never
// under a probe's own floor. An L2 the device does not report counts as the largest L2 of the
// GPUs the architecture tables name (B200: 126 MiB); 4x of it is what probes declare before the
// device is known (footprint_bytes), an upper bound for every GPU the tables name.
#pragma once

#include <cstdint>

#include "kernels/common/hd.hpp"

namespace roofprobe {

inline constexpr std::uint64_t kLargestNamedL2Bytes = std::uint64_t{128} << 20;

RP_HD constexpr std::uint64_t beyond_l2_bytes(std::uint64_t l2_bytes, std::uint64_t floor_bytes) {
  const std::uint64_t mib = std::uint64_t{1} << 20;
  const std::uint64_t l2 = l2_bytes > 0 ? l2_bytes : kLargestNamedL2Bytes;
  const std::uint64_t four_l2 = (4 * l2 + mib - 1) / mib * mib;
  return four_l2 > floor_bytes ? four_l2 : floor_bytes;
}

}  // namespace roofprobe
