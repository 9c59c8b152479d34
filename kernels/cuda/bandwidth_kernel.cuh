// Device side of the CUDA bandwidth probe: one kernel template per mode (read, rmw, copy),
// shared by kernels/cuda/bandwidth.cu and the PTX checks in tests/ptx.
//
// Elements are 16 bytes (uint4: one 128-bit load or store per element and thread). The
// arithmetic is 32-bit integer, wrapping modulo 2^32: exact for the host to predict whatever the
// data and the order, and cheap on every GPU (FP64 adds would cap the L1 rate of consumer parts,
// whose FP64 rate is 1/64 of FP32).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/stream_pattern.hpp"

namespace roofprobe::cuda {

inline constexpr int kStreamBlock = 256;  // threads per block (a multiple of the warp size)

__device__ __forceinline__ uint4 add_one(uint4 v) {
  return make_uint4(v.x + 1u, v.y + 1u, v.z + 1u, v.w + 1u);
}

// Sum of `value` over the block, written by thread 0 to out[blockIdx.x]. blockDim.x must be
// kStreamBlock.
__device__ __forceinline__ void store_block_sum(std::uint32_t value, std::uint32_t* out) {
  __shared__ std::uint32_t warp_sums[kStreamBlock / 32];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint32_t total = 0;
#pragma unroll
    for (int i = 0; i < kStreamBlock / 32; ++i) total += warp_sums[i];
    out[blockIdx.x] = total;
  }
}

// One launch: `reps` passes over n elements per array, in the grid-stride pattern of
// stream_pattern.hpp (each thread touches the same elements in every pass).
//   Read: sums every word into a per-thread accumulator; the per-block sums are stored once at
//         the end. That store is what keeps the loads alive (their values reach memory) and it is
//         also the checksum the host verifies: reps x the sum of all words, modulo 2^32.
//   Rmw:  a[e] += 1 per word and pass.
//   Copy: b[e] = a[e] + 1 on even passes, a[e] = b[e] + 1 on odd ones (the +1 is free next to
//         the memory traffic and lets the host check that every pass happened).
template <StreamMode Mode>
__global__ void __launch_bounds__(kStreamBlock)
    stream_kernel(uint4* __restrict__ a, uint4* __restrict__ b, std::size_t n, int reps,
                  std::uint32_t* __restrict__ block_sums) {
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t g = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t iters = stream_iterations(n, g, threads);
  std::uint32_t acc = 0;
#pragma unroll 1
  for (int r = 0; r < reps; ++r) {
    uint4* src = (Mode == StreamMode::Copy && r % 2 == 1) ? b : a;
    uint4* dst = (Mode == StreamMode::Copy && r % 2 == 0) ? b : a;
#pragma unroll 4
    for (std::size_t i = 0; i < iters; ++i) {
      const std::size_t e = stream_element(g, i, threads);
      const uint4 v = src[e];
      if constexpr (Mode == StreamMode::Read) {
        acc += (v.x + v.y) + (v.z + v.w);  // two short chains rather than one of four
      } else {
        dst[e] = add_one(v);
      }
    }
  }
  if constexpr (Mode == StreamMode::Read) store_block_sum(acc, block_sums);
}

}  // namespace roofprobe::cuda
