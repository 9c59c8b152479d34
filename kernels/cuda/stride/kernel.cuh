// Device side of the CUDA global-stride probe (kernels/cuda/stride/probe.cu), also instantiated by the
// PTX checks (tests/probes/stride/ptx_instance.cu).
//
// One kernel per (stride, word bytes), both compile-time, so the kStrideUnroll requests of a group
// are one base address plus constant offsets (immediates of the loads, no address arithmetic per
// load) and the loads stay scalar of the declared width. The loads are ld.global.cg: they bypass
// L1 and are served by L2 (or DRAM beyond it), so every request costs exactly its sectors at L2,
// whatever was read before; a request's sectors come from kernels/cuda/stride/model.hpp.
//
// Every loaded word is summed into one of kStrideUnroll independent accumulators (the loads of a
// group are all in flight together); each thread stores its sum, and the host predicts the total
// over all threads in closed form (stride_expected_sum).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/stride/model.hpp"

namespace roofprobe::cuda {

inline constexpr int kStrideBlock = 256;  // threads per block

template <int WordBytes>
struct StrideWordType;
template <>
struct StrideWordType<4> {
  using type = unsigned int;
};
template <>
struct StrideWordType<8> {
  using type = unsigned long long;
};

// One launch: every warp runs `groups` groups of kStrideUnroll requests over data[0, mask], warp g
// of W taking groups g, g + W, ... (kernels/cuda/stride/model.hpp). out[global thread] = the sum of the words
// the thread loaded, modulo 2^(8 x WordBytes).
template <int Stride, int WordBytes>
__global__ void __launch_bounds__(kStrideBlock)
    stride_kernel(const typename StrideWordType<WordBytes>::type* __restrict__ data, std::uint32_t mask, int groups,
                  unsigned long long* __restrict__ out) {
  using Word = typename StrideWordType<WordBytes>::type;
  constexpr std::uint32_t span = stride_span_elements(Stride, WordBytes);
  const std::uint32_t thread = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t warp = thread / kWarpLanes;
  const std::uint32_t warps = gridDim.x * blockDim.x / kWarpLanes;
  const int lane = static_cast<int>(threadIdx.x % kWarpLanes);

  const Word* lane_data = data + stride_group_element(0, 0, lane, Stride, span);
  // Group g + W starts W groups' worth of elements after group g (modulo n): one add, one mask.
  const std::uint32_t advance = stride_group_first(warps, span, 0xffffffffu);
  std::uint32_t first = stride_group_first(warp, span, mask);

  Word acc[kStrideUnroll];
#pragma unroll
  for (int u = 0; u < kStrideUnroll; ++u) acc[u] = 0;
#pragma unroll 1
  for (int k = 0; k < groups; ++k) {
    const Word* group = lane_data + first;
#pragma unroll
    for (int u = 0; u < kStrideUnroll; ++u) acc[u] += __ldcg(group + stride_group_element(0, u, 0, Stride, span));
    first = (first + advance) & mask;
  }

  Word sum = 0;
#pragma unroll
  for (int u = 0; u < kStrideUnroll; ++u) sum += acc[u];
  out[thread] = sum;
}

}  // namespace roofprobe::cuda
