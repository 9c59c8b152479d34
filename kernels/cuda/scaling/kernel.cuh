// Device side of the CUDA "scaling" probe, shared by kernels/cuda/scaling/probe.cu and the PTX checks
// in tests/ptx. The work split and the data are in kernels/cuda/scaling/model.hpp.
//
// The grid is one full wave of resident blocks. A block whose SM id (%smid) is at or above
// `smid_limit` returns at once, so only the blocks of the k SMs chosen work; they take items from
// the global counter `next_item` (zeroed before every launch) until the launch's items run out.
// Thread 0 fetches the block's next item while the block works on the current one, so the
// atomic's round trip hides behind the work.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/scaling/model.hpp"
#include "kernels/cuda/backend/sm_id.cuh"
#include "kernels/cuda/backend/stream_pattern.hpp"

namespace roofprobe::cuda {

// The id of the SM running the calling thread.
__device__ __forceinline__ std::uint32_t scaling_smid() { return sm_id(); }

// Sum of `value` over the block, written by thread 0 to out[blockIdx.x]. blockDim.x must be
// kScalingBlock.
__device__ __forceinline__ void scaling_store_block_sum(unsigned long long value, unsigned long long* out) {
  __shared__ unsigned long long warp_sums[kScalingBlock / 32];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  if (threadIdx.x == 0) {
    unsigned long long total = 0;
#pragma unroll
    for (int i = 0; i < kScalingBlock / 32; ++i) total += warp_sums[i];
    out[blockIdx.x] = total;
  }
}

// One launch of `total_items` items (reps x items_per_pass).
//   MemoryRead: item i reads elements scaling_item_element(i mod items_per_pass, load, thread)
//               of `data`, summing every word (mod 2^32) into a per-thread accumulator.
//   Fp64Fma:    every thread advances kScalingFmaChains chains kScalingFmaSteps steps per item,
//               x = fma(x, one, step); `one` (1.0) is a run-time argument, so no step folds.
// Every item done adds 1 to item_done[i mod items_per_pass]; every working block marks its SM in
// sm_worked; block_sums gets each block's checksum (0 for blocks that did not work): memory_read
// the words read, fp64_fma the sum over chains of (x - x0).
template <ScalingKernel Kind>
__global__ void __launch_bounds__(kScalingBlock)
    scaling_kernel(const uint4* __restrict__ data, unsigned long long total_items, std::uint32_t items_per_pass,
                   std::uint32_t smid_limit, double one, unsigned long long* __restrict__ next_item,
                   std::uint32_t* __restrict__ item_done, std::uint32_t* __restrict__ sm_worked,
                   unsigned long long* __restrict__ block_sums) {
  const std::uint32_t smid = scaling_smid();
  if (smid >= smid_limit) {
    if (threadIdx.x == 0) block_sums[blockIdx.x] = 0;
    return;  // the whole block: smid is the same for all its threads
  }
  const int tid = static_cast<int>(threadIdx.x);
  if (tid == 0 && smid < kScalingMaxSmIds) sm_worked[smid] = 1;

  const std::uint64_t g = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  std::uint32_t words = 0;  // MemoryRead
  double x[kScalingFmaChains], step[kScalingFmaChains];
  if constexpr (Kind == ScalingKernel::Fp64Fma) {
#pragma unroll
    for (int j = 0; j < kScalingFmaChains; ++j) {
      x[j] = scaling_fma_start(g, j);
      step[j] = scaling_fma_step(j);
    }
  }

  // Slot k of `item` holds the item of the current turn; thread 0 fills the other slot with the
  // next one during the turn. The __syncthreads() that ends a turn publishes it and guarantees
  // every thread has read the current slot before it is refilled two turns later.
  __shared__ unsigned long long item[2];
  if (tid == 0) item[0] = atomicAdd(next_item, 1ull);
  __syncthreads();
#pragma unroll 1
  for (int k = 0;; k ^= 1) {
    const unsigned long long current = item[k];
    if (current >= total_items) break;  // the same value in every thread: the block leaves whole
    if (tid == 0) item[k ^ 1] = atomicAdd(next_item, 1ull);
    const std::uint32_t in_pass = scaling_item_in_pass(current, items_per_pass);
    if constexpr (Kind == ScalingKernel::MemoryRead) {
      uint4 v[kScalingLoadsPerThread];
#pragma unroll
      for (int l = 0; l < kScalingLoadsPerThread; ++l) v[l] = data[scaling_item_element(in_pass, l, tid)];
#pragma unroll
      for (int l = 0; l < kScalingLoadsPerThread; ++l) words += (v[l].x + v[l].y) + (v[l].z + v[l].w);
    } else {
#pragma unroll
      for (int s = 0; s < kScalingFmaSteps; ++s) {
#pragma unroll
        for (int j = 0; j < kScalingFmaChains; ++j) x[j] = __fma_rn(x[j], one, step[j]);
      }
    }
    if (tid == 0) atomicAdd(&item_done[in_pass], 1u);
    __syncthreads();
  }

  unsigned long long sum = words;
  if constexpr (Kind == ScalingKernel::Fp64Fma) {
#pragma unroll
    for (int j = 0; j < kScalingFmaChains; ++j)
      sum += static_cast<unsigned long long>(static_cast<long long>(x[j] - scaling_fma_start(g, j)));
  }
  scaling_store_block_sum(sum, block_sums);
}

}  // namespace roofprobe::cuda
