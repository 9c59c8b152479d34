// Device side of the CUDA "system" probe: the kernels that read or write mapped (zero-copy)
// pinned host memory, shared by kernels/cuda/system/probe.cu and the PTX checks in tests/ptx.
//
// The grid-stride pattern of the bandwidth probe (kernels/cuda/backend/stream_pattern.hpp) with 16-byte accesses: a
// warp request covers 512 contiguous bytes, which the GPU turns into full-sized reads or writes
// over the link. The loads are ld.global.cv ("consider cached system memory lines stale, fetch
// again") and the stores st.global.wt (write-through to system memory), so a buffer smaller than
// the L2 is still fetched from / written to the host on every pass, never served by a cache.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/backend/stream_pattern.hpp"
#include "kernels/cuda/system/model.hpp"
#include "kernels/cuda/bandwidth/kernel.cuh"  // store_block_sum

namespace roofprobe::cuda {

inline constexpr int kSystemBlock = 256;  // threads per block (a multiple of the warp size)

// One launch over the n-element buffer `data` (mapped host memory; the h2d check also runs the
// read form on device memory), `reps` passes.
//   MappedRead:  sums every word into a per-thread accumulator; the block sums are stored at the
//                end (that keeps the loads alive and is the checksum: reps x the sum of all
//                words, modulo 2^32).
//   MappedWrite: pass r stores system_written_word(e, w, first_pass + r) to every element; the
//                host checks the last pass's words after the launch. Volatile stores (inline asm
//                of __stwt), so no pass is merged into the next.
template <SystemTransfer Transfer>
__global__ void __launch_bounds__(kSystemBlock)
    system_mapped_kernel(uint4* data, std::size_t n, int reps, std::uint32_t first_pass,
                         std::uint32_t* __restrict__ block_sums) {
  static_assert(Transfer == SystemTransfer::MappedRead || Transfer == SystemTransfer::MappedWrite,
                "copies (h2d, d2h) run no kernel");
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t g = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  const std::size_t iters = stream_iterations(n, g, threads);
  std::uint32_t acc = 0;
#pragma unroll 1
  for (int r = 0; r < reps; ++r) {
#pragma unroll 4
    for (std::size_t i = 0; i < iters; ++i) {
      const std::size_t e = stream_element(g, i, threads);
      if constexpr (Transfer == SystemTransfer::MappedRead) {
        const uint4 v = __ldcv(data + e);
        acc += (v.x + v.y) + (v.z + v.w);
      } else {
        const std::uint32_t pass = first_pass + static_cast<std::uint32_t>(r);
        // system_written_word(e, w, pass): the source hash of word 4e + w plus the pass.
        __stwt(data + e, make_uint4(system_written_word(e, 0, pass), system_written_word(e, 1, pass),
                                    system_written_word(e, 2, pass), system_written_word(e, 3, pass)));
      }
    }
  }
  if constexpr (Transfer == SystemTransfer::MappedRead) store_block_sum(acc, block_sums);
}

}  // namespace roofprobe::cuda
