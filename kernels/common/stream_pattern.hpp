// Address pattern of the CUDA bandwidth probe, shared by its kernels and the host unit tests
// (tests/unit/cuda_patterns_test.cpp), plus a coalescing model: how many 32-byte sectors one warp
// request touches.
//
// Grid-stride stream: with T threads in the grid, thread g touches elements g, g+T, g+2T, ... < n.
// Consecutive lanes touch consecutive elements (coalesced: a warp of 16-byte loads covers 512
// contiguous bytes = 16 sectors), every element is touched by exactly one thread per repetition,
// and a thread touches the SAME elements in every repetition, so while the per-SM share of the
// working set fits an SM's L1, repetitions hit L1 (that is how the L1 plateau appears).
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

// ---- data the probe streams (16-byte elements of four 32-bit words) ------------------------
// Initial content of word w of element e: a multiplicative hash of the word index, so
// neighbouring words differ and a misplaced access shows in the checks.
inline constexpr std::uint32_t kStreamHash = 2654435761u;

RP_HD std::uint32_t stream_initial_word(std::size_t e, int w) {
  return static_cast<std::uint32_t>((e * 4 + static_cast<std::size_t>(w)) * kStreamHash);
}

// Sum modulo 2^32 of the words of elements [0, n), in closed form: C * N(N-1)/2 with N = 4n
// words (N is even, so N/2 is exact; the 64-bit products wrap modulo 2^64, a multiple of 2^32).
RP_HD std::uint32_t stream_initial_sum(std::size_t n) {
  const std::uint64_t words = 4 * static_cast<std::uint64_t>(n);
  return static_cast<std::uint32_t>((words / 2) * (words - 1) * kStreamHash);
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

}  // namespace roofprobe
