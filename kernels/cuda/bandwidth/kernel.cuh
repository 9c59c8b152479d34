// Device side of the CUDA bandwidth probe: one kernel template per mode (read, rmw, copy, write), load
// width (32, 64, 128 bits) and cache operator (ca, cg, cs, cs_chunk), shared by kernels/cuda/bandwidth/probe.cu and
// the PTX checks in tests/ptx.
//
// An element is one access: a 32-bit word, a uint2 or a uint4 (one 32/64/128-bit load or store
// per element and thread). The arithmetic is 32-bit integer, wrapping modulo 2^32: exact for the
// host to predict whatever the data and the order, and cheap on every GPU (FP64 adds would cap
// the L1 rate of consumer parts, whose FP64 rate is 1/64 of FP32).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/backend/stream_pattern.hpp"

namespace roofprobe::cuda {

inline constexpr int kStreamBlock = 256;      // default threads per block
inline constexpr int kStreamMaxBlock = 1024;  // the largest block the kernels are compiled for

// The element type of each load width.
template <int Bits>
struct StreamVectorOf;
template <>
struct StreamVectorOf<32> {
  using type = std::uint32_t;
};
template <>
struct StreamVectorOf<64> {
  using type = uint2;
};
template <>
struct StreamVectorOf<128> {
  using type = uint4;
};
template <int Bits>
using StreamVector = typename StreamVectorOf<Bits>::type;

// Sum of an element's words (two short chains for uint4 rather than one of four) and the element
// with 1 added to every word.
__device__ __forceinline__ std::uint32_t word_sum(std::uint32_t v) { return v; }
__device__ __forceinline__ std::uint32_t word_sum(uint2 v) { return v.x + v.y; }
__device__ __forceinline__ std::uint32_t word_sum(uint4 v) { return (v.x + v.y) + (v.z + v.w); }
__device__ __forceinline__ std::uint32_t add_one(std::uint32_t v) { return v + 1u; }
__device__ __forceinline__ uint2 add_one(uint2 v) { return make_uint2(v.x + 1u, v.y + 1u); }
__device__ __forceinline__ uint4 add_one(uint4 v) { return make_uint4(v.x + 1u, v.y + 1u, v.z + 1u, v.w + 1u); }

// The element the write kernel stores at element e on pass `pass`: stream_written_word of each of
// its words. One IMAD and a few IADDs per element, far below the issue rate a store stream leaves
// free.
__device__ __forceinline__ std::uint32_t written_element(std::uint32_t, std::size_t e, std::uint32_t pass) {
  return stream_written_word(e, pass);
}
__device__ __forceinline__ uint2 written_element(uint2, std::size_t e, std::uint32_t pass) {
  return make_uint2(stream_written_word(2 * e, pass), stream_written_word(2 * e + 1, pass));
}
__device__ __forceinline__ uint4 written_element(uint4, std::size_t e, std::uint32_t pass) {
  return make_uint4(stream_written_word(4 * e, pass), stream_written_word(4 * e + 1, pass),
                    stream_written_word(4 * e + 2, pass), stream_written_word(4 * e + 3, pass));
}

// ca: default caching (L1 on sm_70+; the compiler may pick ld.global.nc for the read kernel,
// which also goes through L1). cg: ld.global.cg / st.global.cg, cached in L2 only. cs: the cg
// load and st.global.cs, the streaming store (evict-first in L2; "likely accessed once");
// cs_chunk: the same instructions, another walk (stream_walk).
template <StreamCache Cache, class V>
__device__ __forceinline__ V stream_load(const V* p) {
  if constexpr (Cache == StreamCache::Ca) {
    return *p;
  } else {
    return __ldcg(p);
  }
}
template <StreamCache Cache, class V>
__device__ __forceinline__ void stream_store(V* p, V v) {
  if constexpr (Cache == StreamCache::Cs || Cache == StreamCache::CsChunk) {
    __stcs(p, v);
  } else if constexpr (Cache == StreamCache::Cg) {
    __stcg(p, v);
  } else {
    *p = v;
  }
}

// Sum of `value` over the block (any multiple of 32 threads up to 1024), written by thread 0 to
// out[blockIdx.x].
__device__ __forceinline__ void store_block_sum(std::uint32_t value, std::uint32_t* out) {
  __shared__ std::uint32_t warp_sums[kStreamMaxBlock / 32];
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) warp_sums[warp] = value;
  __syncthreads();
  if (threadIdx.x == 0) {
    std::uint32_t total = 0;
    for (int i = 0; i < static_cast<int>(blockDim.x / 32); ++i) total += warp_sums[i];
    out[blockIdx.x] = total;
  }
}

// One launch: `reps` passes of `accesses` accesses (stream_accesses_per_pass: n, or
// kStreamWrapRows x threads for a small read or write set, wrapped modulo n) over n elements per
// array, in the grid-stride pattern of kernels/cuda/backend/stream_pattern.hpp (ca: each thread
// touches the same elements in every launch; cg, cs: the block -> elements assignment starts
// `launch_rotation` (< gridDim.x) blocks on; cs_chunk: each block streams a contiguous chunk,
// rotated the same way).
//   Read: sums every word into a per-thread accumulator; the per-block sums are stored once at
//         the end. That store is what keeps the loads alive (their values reach memory) and it is
//         also the checksum the host verifies: reps x stream_read_pass_sum, modulo 2^32.
//   Rmw:  a[e] += 1 per word and pass.
//   Copy: b[e] = a[e] + 1 on even passes, a[e] = b[e] + 1 on odd ones (the +1 is free next to
//         the memory traffic and lets the host check that every pass happened).
//   Write: a[e] = its initial words + the pass number (1..reps): stores only, no load.
// `pass_shift` is 0 in every launch (the host passes it), which the compiler cannot know: the
// wrapped and batched accesses of pass r go to base + r x pass_shift. A wrapped pass makes the
// same accesses every pass with no store in between (read) or stores over its own stores with
// no load in between (write), and compilers hoist such loads out of the loop (NVVM marks
// restrict loads invariant, ptxas moves loads past an empty asm; an H100 then "read" 444
// B/clk/SM from L1, 3.5x its peak, which the GPU tests caught) and may drop such stores as dead;
// an address they cannot prove equal keeps every pass's accesses. 32-bit: a 64-bit one cost the
// cg read two registers and a spill on sm_80 and sm_100.
// blockDim.x must be a multiple of 32 (whole warps: the sector accounting relies on it).
template <StreamMode Mode, int Bits, StreamCache Cache>
__global__ void __launch_bounds__(kStreamMaxBlock)
    stream_kernel(StreamVector<Bits>* __restrict__ a, StreamVector<Bits>* __restrict__ b, std::size_t n,
                  std::size_t accesses, int reps, unsigned launch_rotation, unsigned pass_shift,
                  std::uint32_t* __restrict__ block_sums) {
  static_assert(Mode != StreamMode::Read || Cache == StreamCache::Ca || Cache == StreamCache::Cg,
                "cs and cs_chunk are store streams: there is no cs read");
  using V = StreamVector<Bits>;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  // A grid thread's index fits 32 bits (a resident grid: at most 2048 threads per SM); saying
  // so frees the register of its high word (ptxas spilled it in the cg read on sm_100).
  const std::size_t g = static_cast<std::uint32_t>(
      stream_launch_thread(Cache, blockIdx.x, threadIdx.x, blockDim.x, gridDim.x, launch_rotation));
  std::uint32_t acc = 0;
  if constexpr (Mode == StreamMode::Read || Mode == StreamMode::Write) {
    if (accesses != n) {
      // Wrapped small set (accesses = kStreamWrapRows x threads, n < accesses): the thread's
      // elements (g + j x threads) mod n are fixed for the launch, so they are computed once and
      // every pass issues its kStreamWrapRows independent accesses back to back. (Stepping an
      // index with a conditional subtract made the addresses one dependent chain and the L1
      // rate 40% lower on an H100.) 32-bit: a wrapped pass has fewer than 2^32 accesses
      // (stream_accesses_per_pass).
      std::uint32_t element[kStreamWrapRows];
#pragma unroll
      for (std::size_t j = 0; j < kStreamWrapRows; ++j)
        element[j] = stream_wrapped_element32(static_cast<std::uint32_t>(stream_element(g, j, threads)),
                                              static_cast<std::uint32_t>(n));
#pragma unroll 1
      for (int r = 0; r < reps; ++r) {
        V* base = a + static_cast<unsigned>(r) * pass_shift;
#pragma unroll
        for (std::size_t j = 0; j < kStreamWrapRows; ++j) {
          if constexpr (Mode == StreamMode::Read) {
            acc += word_sum(stream_load<Cache>(base + element[j]));
          } else {
            stream_store<Cache>(base + element[j], written_element(V{}, element[j], static_cast<std::uint32_t>(r + 1)));
          }
        }
      }
      if constexpr (Mode == StreamMode::Read) store_block_sum(acc, block_sums);
      return;
    }
  }
  if constexpr (Mode == StreamMode::Rmw || Mode == StreamMode::Copy || Cache == StreamCache::CsChunk) {
    // Batches of kStreamBatch accesses (stream_batch_active) along the thread's walk
    // (stream_walk: the grid stride, or cs_chunk's block chunk): every load of a batch is issued
    // before its first store. A plain loop serialises them (SASS: LDG, STG, LDG, STG: the
    // compiler cannot prove a[e + T] is not a[e], so each load waits for the store before it,
    // and a thread had one load in flight at any size). The pointers step by a batch's rows and
    // the counts are 32-bit: 46-50 registers against 32, so 4-5 blocks of 256 per SM instead of
    // 8, with 4 loads in flight per thread instead of 1. The written words' indices are 32-bit
    // too (stream_written_word uses the low 32 bits of the index).
    const StreamWalk walk =
        stream_walk(Cache, accesses, blockIdx.x, threadIdx.x, blockDim.x, gridDim.x, launch_rotation);
    const std::size_t batch_step = kStreamBatch * walk.step;
#pragma unroll 1
    for (int r = 0; r < reps; ++r) {
      const std::size_t pass_offset = static_cast<unsigned>(r) * pass_shift + walk.first;
      const V* src = ((Mode == StreamMode::Copy && r % 2 == 1) ? b : a) + pass_offset;
      V* dst = ((Mode == StreamMode::Copy && r % 2 == 0) ? b : a) + pass_offset;
      auto word_index = static_cast<std::uint32_t>(walk.first);  // the batch's first element (mod 2^32)
#pragma unroll 1
      for (std::uint32_t batch = 0; batch < stream_batches(walk.iterations); ++batch) {
        V v[kStreamBatch];
        if constexpr (Mode != StreamMode::Write) {
#pragma unroll
          for (std::uint32_t j = 0; j < kStreamBatch; ++j)
            if (stream_batch_active(walk.iterations, batch, j)) v[j] = stream_load<Cache>(src + j * walk.step);
        }
#pragma unroll
        for (std::uint32_t j = 0; j < kStreamBatch; ++j) {
          if (!stream_batch_active(walk.iterations, batch, j)) continue;
          if constexpr (Mode == StreamMode::Write) {
            const std::uint32_t e = word_index + j * static_cast<std::uint32_t>(walk.step);
            stream_store<Cache>(dst + j * walk.step, written_element(V{}, e, static_cast<std::uint32_t>(r + 1)));
          } else {
            stream_store<Cache>(dst + j * walk.step, add_one(v[j]));
          }
        }
        src += batch_step;
        dst += batch_step;
        word_index += static_cast<std::uint32_t>(batch_step);
      }
    }
    return;
  }
  // Read and write (ca, cg, cs): a grid-stride loop unrolled 4x (the read's loads of the 4 are
  // independent of its sums; the write loads nothing). The read and the cg/cs write fit in 32
  // registers (8 blocks of 256 per SM); the batched form above would take 40-44 and, with fewer
  // threads, fewer loads in flight for the read at HBM.
  const std::size_t iters = stream_iterations_in(stream_rows(accesses, threads), g);
#pragma unroll 1
  for (int r = 0; r < reps; ++r) {
    V* base = a;
#pragma unroll 4
    for (std::size_t i = 0; i < iters; ++i) {
      const std::size_t e = stream_element(g, i, threads);
      if constexpr (Mode == StreamMode::Write) {
        stream_store<Cache>(base + e, written_element(V{}, e, static_cast<std::uint32_t>(r + 1)));
      } else {
        acc += word_sum(stream_load<Cache>(base + e));
      }
    }
  }
  if constexpr (Mode == StreamMode::Read) store_block_sum(acc, block_sums);
}

}  // namespace roofprobe::cuda
