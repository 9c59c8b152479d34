// Device side of the CUDA "issue" probe: one kernel template per (stream, loads per group), shared
// by kernels/cuda/issue/probe.cu and the PTX checks in tests/ptx (which instantiate exactly one of them
// and count its instructions). The work it does is declared in kernels/cuda/issue/model.hpp.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/issue/model.hpp"

namespace roofprobe::cuda {

inline constexpr int kIssueBlock = 256;  // threads per block (a multiple of the warp size)

// The chains of one thread. Arrays of the unused class have one dead slot that the compiler drops.
template <IssueStream S>
struct IssueChains {
  static constexpr int kFp = issue_fp_chains(S);
  static constexpr int kInt = issue_int_chains(S);
  float f[kFp > 0 ? kFp : 1];
  std::uint32_t u[kInt > 0 ? kInt : 1];
};

// One group: kIssueStepsPerGroup steps of every chain, fully unrolled, kIssueGroupInstructions
// payload instructions. Per step the FP32 chains and the INT32 ring interleave (FFMA, IMAD, ...),
// each instruction depending only on the previous step, so 8 are independent at any time.
// __fmaf_rn is never split or fused differently; a and b are kernel arguments, so nothing folds.
template <IssueStream S>
__device__ __forceinline__ void issue_group(IssueChains<S>& c, float a, float b, std::uint32_t ia) {
  constexpr int kFp = IssueChains<S>::kFp, kInt = IssueChains<S>::kInt;
#pragma unroll
  for (int step = 0; step < kIssueStepsPerGroup; ++step) {
    if constexpr (kInt == 0) {
#pragma unroll
      for (int j = 0; j < kFp; ++j) c.f[j] = __fmaf_rn(c.f[j], a, b);
    } else if constexpr (kFp == 0) {
      issue_int_ring_step(c.u, ia);
    } else {
      // mixed: FFMA k, IMAD k, ... (ring semantics of issue_int_ring_step, written inline so the
      // two classes alternate in program order)
      const std::uint32_t first = c.u[0];
#pragma unroll
      for (int k = 0; k < kInt; ++k) {
        c.f[k] = __fmaf_rn(c.f[k], a, b);
        c.u[k] = c.u[k] * ia + (k + 1 < kInt ? c.u[k + 1] : first);
      }
    }
  }
}

// One launch: `passes` passes. Register-only (kLoadsPerGroup == 0): groups_per_pass groups per
// pass. Otherwise each warp streams `loads_per_warp` coalesced 128-byte loads per pass
// (issue_load_word), kLoadsPerGroup at a time, each batch followed by groups_per_load groups.
// Only lanes below `active_lanes` run the groups (a divergent branch: the masked lanes idle while
// the warp issues). The loads' words and the chains end in one checksum per thread, stored to
// out[thread]: nothing the kernel computes is dead. Loops stay rolled (unroll 1) so the entry
// holds exactly one group and kLoadsPerGroup loads; the PTX checks count on that.
template <IssueStream S, int kLoadsPerGroup>
__global__ void __launch_bounds__(kIssueBlock)
    issue_kernel(const std::uint32_t* __restrict__ data, std::uint32_t* __restrict__ out, int passes,
                 int groups_per_pass, int loads_per_warp, int groups_per_load, int active_lanes, float a, float b,
                 std::uint32_t ia) {
  const std::int64_t thread = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 32;
  const std::int64_t warp = thread / 32;
  const int lane = static_cast<int>(threadIdx.x % 32);
  const bool active = lane < active_lanes;

  IssueChains<S> c;
  {
    int fp = 0, in = 0;
#pragma unroll
    for (int j = 0; j < kIssueChains; ++j) {
      if (issue_chain_is_fp(S, j)) {
        c.f[fp++] = issue_fp_start(thread, j);
      } else {
        c.u[in++] = issue_int_start(thread, j);
      }
    }
  }

  std::uint32_t loaded = 0;
  if constexpr (kLoadsPerGroup == 0) {
    (void)data;
    (void)loads_per_warp;
    (void)groups_per_load;
    if (active) {
#pragma unroll 1
      for (int p = 0; p < passes; ++p) {
#pragma unroll 1
        for (int g = 0; g < groups_per_pass; ++g) issue_group(c, a, b, ia);
      }
    }
  } else {
    (void)groups_per_pass;
#pragma unroll 1
    for (int p = 0; p < passes; ++p) {
#pragma unroll 1
      for (int i = 0; i < loads_per_warp; i += kLoadsPerGroup) {
#pragma unroll
        for (int k = 0; k < kLoadsPerGroup; ++k) loaded += __ldcg(data + issue_load_word(warp, i + k, lane, warps));
        if (active) {
#pragma unroll 1
          for (int g = 0; g < groups_per_load; ++g) issue_group(c, a, b, ia);
        }
      }
    }
  }

  std::uint32_t sum = loaded;
#pragma unroll
  for (int j = 0; j < IssueChains<S>::kFp; ++j) sum += __float_as_uint(c.f[j]);
#pragma unroll
  for (int j = 0; j < IssueChains<S>::kInt; ++j) sum += c.u[j];
  out[thread] = sum;
}

}  // namespace roofprobe::cuda
