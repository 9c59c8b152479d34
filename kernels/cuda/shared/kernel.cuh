// Device side of the CUDA shared-memory probe (kernels/cuda/shared/probe.cu), also instantiated by the
// PTX check (tests/probes/shared/ptx_instance.cu).
//
// Each block fills a 32 KiB table in shared memory (kernels/cuda/shared/model.hpp), then
// every thread runs kSharedSlots independent chains of 4-byte loads: the word a lane loads is the
// byte offset of its next load, in the same column of another row. So every load depends on the
// previous one of its chain (nothing can be hoisted, merged or skipped) and costs no address
// arithmetic at all, while the warp's column pattern (its conflict degree) never changes. The
// chains' last offsets are stored per thread; the host predicts them exactly.
//
// Throughput needs enough requests in flight: with shared latency around 30 cycles and one
// request per clock per SM, 8 chains per thread and several warps per SM are plenty.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/shared/model.hpp"

namespace roofprobe::cuda {

inline constexpr int kSharedBlock = 256;            // threads per block
inline constexpr int kSharedSlots = 8;              // independent chains per thread
inline constexpr int kSharedStepsPerIteration = 2;  // loads per chain per loop iteration

// One launch: `iterations` x kSharedStepsPerIteration loads per chain, Slots chains per thread
// (the probe uses kSharedSlots), conflict pattern `degree` (shared_lane_column), rows advancing
// by the odd `row_step`. out[global thread] = checksum of the thread's chains
// (shared_checksum_term).
template <int Slots>
__global__ void __launch_bounds__(kSharedBlock)
    shared_kernel(int degree, std::uint32_t row_step, int iterations, std::uint32_t* __restrict__ out) {
  __shared__ std::uint32_t table[kSharedTableWords];
  for (int w = threadIdx.x; w < kSharedTableWords; w += blockDim.x)
    table[w] = shared_table_word(static_cast<std::uint32_t>(w), row_step);
  __syncthreads();

  const int lane = threadIdx.x % kSharedWarpLanes;
  const std::uint32_t warp = (blockIdx.x * static_cast<std::uint32_t>(blockDim.x) + threadIdx.x) / kSharedWarpLanes;
  const auto column = static_cast<std::uint32_t>(shared_lane_column(lane, degree));
  std::uint32_t offset[Slots];
#pragma unroll
  for (int s = 0; s < Slots; ++s) offset[s] = shared_byte_offset(shared_start_row(warp, s), column);

  const char* bytes = reinterpret_cast<const char*>(table);
#pragma unroll 1
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int step = 0; step < kSharedStepsPerIteration; ++step) {
#pragma unroll
      for (int s = 0; s < Slots; ++s) offset[s] = *reinterpret_cast<const std::uint32_t*>(bytes + offset[s]);
    }
  }

  std::uint32_t checksum = 0;
#pragma unroll
  for (int s = 0; s < Slots; ++s) checksum += shared_checksum_term(offset[s], s);
  out[blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x] = checksum;
}

}  // namespace roofprobe::cuda
