// Address pattern of the CUDA bandwidth probe, shared by its kernels and the host unit tests
// (tests/unit/cuda_patterns_test.cpp), plus a coalescing model: how many 32-byte sectors one warp
// request touches.
//
// Grid-stride stream: with T threads in the grid, thread g touches elements g, g+T, g+2T, ... < n.
// Consecutive lanes touch consecutive elements (coalesced: a warp of W-byte loads covers 32 x W
// contiguous bytes = W sectors for W = 4, 8, 16), and every element is touched by exactly one
// thread per repetition (pass).
//
// Two ways to hand the elements to the threads, one per `cache_op`:
//   ca  thread g touches the SAME elements in every pass, so while the per-SM share of the
//       working set fits an SM's L1, passes hit L1 (that is how the L1 plateau appears).
//   cg  the accesses bypass L1 (ld.global.cg / st.global.cg) and the block -> elements
//       assignment rotates by one block every pass (read; rmw and copy every launch, see
//       stream_rotates_every_pass): on pass r block b streams the elements block (b + r) mod B
//       streamed on pass 0, i.e. what its neighbour streamed on the previous pass. No SM keeps a
//       private share of the set, every SM reads addresses homed all over the L2 (both
//       partitions on A100/H100), and the curve shows L2 up to its size, then DRAM.
// Elements are 4, 8 or 16 bytes (`load_width` 32/64/128 bits): one, two or four 32-bit words.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/hd.hpp"

namespace roofprobe {

enum class StreamMode : int { Read = 0, Rmw = 1, Copy = 2 };

// Element that thread `thread` of `threads` touches on its `iteration`-th step.
RP_HD std::size_t stream_element(std::size_t thread, std::size_t iteration, std::size_t threads) {
  return iteration * threads + thread;
}

// How many elements of [0, n) thread `thread` of `threads` touches per repetition.
RP_HD std::size_t stream_iterations(std::size_t n, std::size_t thread, std::size_t threads) {
  return thread < n ? (n - thread + threads - 1) / threads : 0;
}

// Which elements go to which thread (the `cache_op` axis; see the file comment).
enum class StreamCache : int { Ca = 0, Cg = 1 };

// Iteration counts of all threads at once: thread g of T touches rows + (g < remainder ? 1 : 0)
// elements of [0, n), the closed form of stream_iterations. The kernels divide once per launch
// here instead of once per pass (cg threads change elements every pass, and a 64-bit division
// per pass would cost more issue slots than a small set's loads).
struct StreamRows {
  std::size_t rows = 0;       // n / T: full grid-wide rows
  std::size_t remainder = 0;  // n % T: threads that touch one element more
};
RP_HD StreamRows stream_rows(std::size_t n, std::size_t threads) {
  // 32-bit division whenever the operands fit (every working set the configs name: 1 GiB is
  // 2^28 32-bit elements): the 64-bit one is a called subroutine, and on sm_90 the call made
  // ptxas spill a register of the rmw kernel around it (4 bytes spill stores/loads; SASS check).
  if ((n >> 32) == 0 && (threads >> 32) == 0) {
    const auto n32 = static_cast<std::uint32_t>(n), t32 = static_cast<std::uint32_t>(threads);
    return StreamRows{n32 / t32, n32 % t32};
  }
  return StreamRows{n / threads, n % threads};
}
RP_HD std::size_t stream_iterations_in(const StreamRows& rows, std::size_t thread) {
  return rows.rows + (thread < rows.remainder ? 1 : 0);
}

// Rotation (cg only). Read passes rotate every pass: nothing is written, so a block may stream
// elements another block streamed a moment ago. Rmw and copy passes write what the next pass
// reads, and nothing orders one block's pass r against another block's pass r + 1 inside a
// launch (no grid-wide barrier), so for them the rotation advances between launches only (the
// launch boundary is the barrier): within a launch each block keeps its elements, across
// launches they move to the neighbouring block. Every element is still touched exactly once per
// pass in every case.
RP_HD bool stream_rotates_every_pass(StreamMode mode, StreamCache cache) {
  return cache == StreamCache::Cg && mode == StreamMode::Read;
}

// Slot (the block whose rotation-0 elements a block streams) of block `block` of `blocks` on pass
// 0 of a launch with `launch_rotation` (< blocks, set by the host per launch; ca ignores it).
RP_HD std::size_t stream_first_slot(StreamCache cache, std::size_t block, std::size_t blocks,
                                    std::size_t launch_rotation) {
  if (cache == StreamCache::Ca) return block;
  const std::size_t slot = block + launch_rotation;
  return slot >= blocks ? slot - blocks : slot;
}

// The slot of the next pass, from this pass's: the kernels' incremental form of the rotation
// (no division per pass).
RP_HD std::size_t stream_next_slot(StreamMode mode, StreamCache cache, std::size_t slot,
                                   std::size_t blocks) {
  if (!stream_rotates_every_pass(mode, cache)) return slot;
  return slot + 1 < blocks ? slot + 1 : 0;
}

// Closed form of the above: the slot of block `block` on pass `pass` of a launch.
RP_HD std::size_t stream_rotated_block(StreamMode mode, StreamCache cache, std::size_t block,
                                       std::size_t blocks, std::size_t launch_rotation,
                                       std::int64_t pass) {
  if (cache == StreamCache::Ca) return block;
  const std::size_t per_pass =
      stream_rotates_every_pass(mode, cache) ? static_cast<std::size_t>(pass) : 0;
  return (block + launch_rotation + per_pass) % blocks;
}

// Grid-stride thread index whose elements thread `thread_in_block` of block `block` touches on
// `pass`: the element pattern is stream_element(stream_pass_thread(...), i, threads). Whole
// blocks move together, so warps keep their 32 consecutive elements (coalescing unchanged).
RP_HD std::size_t stream_pass_thread(StreamMode mode, StreamCache cache, std::size_t block,
                                     std::size_t thread_in_block, std::size_t block_threads,
                                     std::size_t blocks, std::size_t launch_rotation,
                                     std::int64_t pass) {
  return stream_rotated_block(mode, cache, block, blocks, launch_rotation, pass) * block_threads +
         thread_in_block;
}

// Bytes and 32-bit words of one element of a `load_width_bits`-wide access (32, 64, 128).
RP_HD std::size_t stream_element_bytes(int load_width_bits) {
  return static_cast<std::size_t>(load_width_bits / 8);
}
RP_HD int stream_words_per_element(int load_width_bits) { return load_width_bits / 32; }

// Elements per array for a working set: copy streams two arrays (a and b) that together make
// the working set; read and rmw one array. Rounded down to whole elements.
RP_HD std::size_t stream_elements(StreamMode mode, std::uint64_t working_set_bytes,
                                  std::size_t element_bytes) {
  const std::size_t arrays = mode == StreamMode::Copy ? 2 : 1;
  return static_cast<std::size_t>(working_set_bytes / (arrays * element_bytes));
}

struct StreamBytes {
  double read = 0;
  double written = 0;
};

// Bytes one launch moves: `reps` passes over `n` elements per array. read: n loads per pass;
// rmw: n loads + n stores; copy: n loads from one array + n stores to the other. The read
// kernel's one partial sum per block is not counted (a few KiB against the stream).
RP_HD StreamBytes stream_bytes_per_launch(StreamMode mode, std::size_t n, std::size_t element_bytes,
                                          std::int64_t reps) {
  const double pass =
      static_cast<double>(n) * static_cast<double>(element_bytes) * static_cast<double>(reps);
  StreamBytes b;
  b.read = pass;
  b.written = mode == StreamMode::Read ? 0.0 : pass;
  return b;
}

// 32-byte sectors one launch moves: every pass touches each array's ceil(n x W / 32) sectors once
// per access stream (read: one load; rmw and copy: one load and one store). Exact for the
// probe's pattern: arrays start 256-byte aligned (cudaMalloc), every warp request covers 32
// consecutive elements starting at a multiple of 32 elements (blocks hold whole warps), so each
// sector belongs to exactly one request and no request touches a sector beyond the array's
// bytes. Equals bytes / 32 whenever n x W is a multiple of 32, e.g. every 1 KiB-multiple size.
RP_HD double stream_sectors_per_launch(StreamMode mode, std::size_t n, std::size_t element_bytes,
                                       std::int64_t reps) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(n) * element_bytes;
  const std::uint64_t sectors_per_array = (bytes + 31) / 32;
  const double streams = mode == StreamMode::Read ? 1.0 : 2.0;
  return streams * static_cast<double>(sectors_per_array) * static_cast<double>(reps);
}

// ---- data the probe streams (arrays of 32-bit words, W/4 words per element) ---------------
// Initial content of word k of an array (element e, word w of a W-byte element: k = e x W/4 + w):
// a multiplicative hash of the word index, so neighbouring words differ and a misplaced access
// shows in the checks. Defined per word, the array's content is the same for every load width.
inline constexpr std::uint32_t kStreamHash = 2654435761u;

RP_HD std::uint32_t stream_word_initial(std::uint64_t word) {
  return static_cast<std::uint32_t>(word * kStreamHash);
}

// Sum modulo 2^32 of words [0, words), in closed form: C x N(N-1)/2 with N = words; the even one
// of N and N-1 is halved first so the division is exact (64-bit products wrap modulo 2^64, a
// multiple of 2^32).
RP_HD std::uint32_t stream_words_sum(std::uint64_t words) {
  if (words == 0) return 0;
  const std::uint64_t half_product =
      words % 2 == 0 ? (words / 2) * (words - 1) : words * ((words - 1) / 2);
  return static_cast<std::uint32_t>(half_product * kStreamHash);
}

// The 16-byte element view (four words per element), kept for callers that index by element.
RP_HD std::uint32_t stream_initial_word(std::size_t e, int w) {
  return stream_word_initial(static_cast<std::uint64_t>(e) * 4 + static_cast<std::uint64_t>(w));
}
RP_HD std::uint32_t stream_initial_sum(std::size_t n) {
  return stream_words_sum(4 * static_cast<std::uint64_t>(n));
}

// ---- coalescing model ----------------------------------------------------------------------
inline constexpr int kSectorBytes = 32;  // global/L2/DRAM transaction (ARCHITECTURE.md)
inline constexpr int kWarpLanes = 32;

// Distinct 32-byte sectors touched by one warp request in which lane l (l < lanes <= 32) accesses
// bytes [addresses[l], addresses[l] + access_bytes). access_bytes is 1..32, so an access spans at
// most two sectors and at most 64 distinct sectors can occur.
RP_HD int sectors_per_warp_request(const std::uint64_t* addresses, int lanes, int access_bytes) {
  std::uint64_t seen[2 * kWarpLanes];
  int count = 0;
  for (int l = 0; l < lanes; ++l) {
    const std::uint64_t first = addresses[l] / kSectorBytes;
    const std::uint64_t last =
        (addresses[l] + static_cast<std::uint64_t>(access_bytes) - 1) / kSectorBytes;
    for (std::uint64_t s = first; s <= last; ++s) {
      bool found = false;
      for (int i = 0; i < count && !found; ++i) found = seen[i] == s;
      if (!found) seen[count++] = s;
    }
  }
  return count;
}

// Sectors of the warp request that lanes [warp_first_thread, +32) of the stream issue on
// `iteration` over `element_bytes`-byte elements at byte address `base`. Lanes past the end of
// the array or of the grid are inactive.
RP_HD int stream_sectors_per_request(std::uint64_t base, std::size_t element_bytes, std::size_t n,
                                     std::size_t threads, std::size_t warp_first_thread,
                                     std::size_t iteration) {
  std::uint64_t addresses[kWarpLanes];
  int lanes = 0;
  for (int l = 0; l < kWarpLanes && warp_first_thread + l < threads; ++l) {
    const std::size_t e = stream_element(warp_first_thread + l, iteration, threads);
    if (e < n) addresses[lanes++] = base + e * element_bytes;
  }
  return sectors_per_warp_request(addresses, lanes, static_cast<int>(element_bytes));
}

// The same for the request that warp `warp_in_block` of block `block` issues on `iteration` of
// `pass` under `mode` and `cache` (the cg rotation included): `blocks` blocks of
// `block_threads` threads.
RP_HD int stream_pass_sectors_per_request(std::uint64_t base, std::size_t element_bytes,
                                          std::size_t n, StreamMode mode, StreamCache cache,
                                          std::size_t blocks, std::size_t block_threads,
                                          std::size_t block, std::size_t warp_in_block,
                                          std::size_t launch_rotation, std::int64_t pass,
                                          std::size_t iteration) {
  const std::size_t first = stream_pass_thread(mode, cache, block, warp_in_block * kWarpLanes,
                                               block_threads, blocks, launch_rotation, pass);
  return stream_sectors_per_request(base, element_bytes, n, blocks * block_threads, first,
                                    iteration);
}

}  // namespace roofprobe
