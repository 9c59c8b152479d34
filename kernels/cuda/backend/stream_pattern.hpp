// Address pattern of the CUDA bandwidth probe, shared by its kernels and the host unit tests
// (tests/unit/cuda_patterns_test.cpp), plus a coalescing model: how many 32-byte sectors one warp
// request touches.
//
// Grid-stride stream: with T threads in the grid, thread g touches elements g, g+T, g+2T, ... < n.
// Consecutive lanes touch consecutive elements (coalesced: a warp of W-byte loads covers 32 x W
// contiguous bytes = W sectors for W = 4, 8, 16), and every element is touched by exactly one
// thread per repetition (pass).
//
// Three ways to hand the elements to the threads and cache them, one per `cache_op`:
//   ca  thread g touches the SAME elements in every pass, so while the per-SM share of the
//       working set fits an SM's L1, passes hit L1 (that is how the L1 plateau appears).
//   cg  the accesses bypass L1 (ld.global.cg / st.global.cg) and the block -> elements
//       assignment moves on by one block every launch: on launch l block b streams the elements
//       block (b + l) mod B streamed on launch 0. Within a launch each element is read by one
//       block only. (Rotating every pass instead lets blocks that drift a pass apart re-read
//       what a neighbour has just read: an H100 then "streamed" a 181 MB set at 7.2 TB/s, twice
//       its HBM.)
//   cs  cg's loads and rotation, but streaming stores (st.global.cs: evict-first in L2), for
//       the writing modes only: a store stream that will not be read again need not displace
//       anything else from L2, and on the way to DRAM the dirty lines it leaves are the first
//       to go. The read has no stores, so a cs read does not exist (it would be the cg read).
//   cs_chunk  cs without the grid stride: block slot s streams its own contiguous chunk of
//       rows x blockDim elements (rows = ceil(n / T)), thread t the chunk's elements
//       s x rows x blockDim + t + i x blockDim (stream_walk). Each block's store stream runs
//       sequentially through one region, where the grid stride spreads every SM's stream over
//       the whole array (blocks drift apart within a launch): fewer DRAM pages open at once per
//       stream is what a vectorized fill or copy that hands each block a contiguous piece gets.
//       Warps stay coalesced (32 consecutive elements per request: per-thread contiguous
//       chunks would split every warp store over 32 sectors). Writing modes only, never wrapped.
//
// Small sets keep the whole grid busy. Below kStreamWrapRows grid-wide rows a read or write pass
// that wraps (stream_accesses_per_pass) makes exactly kStreamWrapRows x T accesses, to elements
// (g + i T) mod n: every thread has kStreamWrapRows independent accesses in flight instead of one
// or none, and every thread the same number (no thread waits for a neighbour's extra row at the
// end of the launch). Without it a 16 KiB set ran on 1024 of an H100's 270k threads, one load
// latency per pass, and the rate grew linearly with the set up to 16 MB, hiding L1 and L2 (same
// measurement); and an L2-resident set of a few MB, read by fewer elements than threads, stayed
// far below the L2 rate that many blocks re-reading L2-resident slices in one launch reach.
// Each access is counted (bytes = accesses x width), the checksum predicts the wrapped sum, and
// each SM's share of the set still fits its L1 (at most kStreamWrapRows x its threads' elements).
//   ca read: wraps at every size (it measures L1, where every SM re-reading one small set is
//       the point).
//   cg read, and write under every cache_op: wrap once the set spans kStreamWrapMinBytes (1 MiB,
//       8192 128-byte lines): all of them go to L2, and a smaller set re-read by the whole grid
//       hammers the few L2 slices its lines hash to (a cg read wrapped at every size gave 6 to
//       16 TB/s from size to size on an H100, no level). Smaller sets keep the under-filled ramp,
//       flagged and left out of the level fit. Two threads storing one element in one pass store
//       the same value (stream_written_word of the element and the pass), and each thread's last
//       store to it is the last pass's, so the array ends as verify predicts.
//   rmw, copy: never wrap: two threads adding 1 to one element would race. Their in-flight
//       accesses are bounded by the elements (one read-modify-write per element at a time), so
//       below one grid row they stay under-filled; above it the kernel issues a batch of
//       kStreamBatch loads before their stores (stream_batch_active), so a thread with a few
//       elements per pass keeps them all in flight instead of one load latency per element.
// Elements are 4, 8 or 16 bytes (`load_width` 32/64/128 bits): one, two or four 32-bit words.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/hd.hpp"

namespace roofprobe {

inline constexpr int kSectorBytes = 32;  // global/L2/DRAM transaction (docs/ARCHITECTURE.md)
inline constexpr int kWarpLanes = 32;

// read: loads only; rmw: load and store in place; copy: load one array, store the other;
// write: stores only (likwid-bench's store kernel; on a GPU every store goes to L2, so write
// reaches L2 and memory, never L1).
enum class StreamMode : int { Read = 0, Rmw = 1, Copy = 2, Write = 3 };

// Element that thread `thread` of `threads` touches on its `iteration`-th step.
RP_HD std::size_t stream_element(std::size_t thread, std::size_t iteration, std::size_t threads) {
  return iteration * threads + thread;
}

// How many elements of [0, n) thread `thread` of `threads` touches per repetition.
RP_HD std::size_t stream_iterations(std::size_t n, std::size_t thread, std::size_t threads) {
  return thread < n ? (n - thread + threads - 1) / threads : 0;
}

// Which elements go to which thread and how they are cached (the `cache_op` axis; see the file
// comment).
enum class StreamCache : int { Ca = 0, Cg = 1, Cs = 2, CsChunk = 3 };

// Whether a mode x cache_op kernel exists: cs and cs_chunk are store streams, so the store-free
// read has none (a cs read would be the cg read).
RP_HD bool stream_kernel_exists(StreamMode mode, StreamCache cache) {
  return mode != StreamMode::Read || cache == StreamCache::Ca || cache == StreamCache::Cg;
}

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

// Slot (the block whose launch-0 elements a block streams) of block `block` of `blocks` in a
// launch with `launch_rotation` (< blocks, set by the host per launch; ca ignores it, cg and cs
// rotate).
RP_HD std::size_t stream_slot(StreamCache cache, std::size_t block, std::size_t blocks, std::size_t launch_rotation) {
  if (cache == StreamCache::Ca) return block;
  const std::size_t slot = block + launch_rotation;
  return slot >= blocks ? slot - blocks : slot;
}

// Grid-stride thread index whose elements thread `thread_in_block` of block `block` touches in
// a launch: the element pattern is stream_element(stream_launch_thread(...), i, threads). Whole
// blocks move together, so warps keep their 32 consecutive elements (coalescing unchanged).
RP_HD std::size_t stream_launch_thread(StreamCache cache, std::size_t block, std::size_t thread_in_block,
                                       std::size_t block_threads, std::size_t blocks, std::size_t launch_rotation) {
  return stream_slot(cache, block, blocks, launch_rotation) * block_threads + thread_in_block;
}

// ---- accesses per pass (the wrap of small read and write sets) -------------------------------
inline constexpr std::size_t kStreamWrapRows = 4;
// The smallest set (bytes) that a cg read or any write wraps: 8192 128-byte lines, enough to
// spread over every L2 slice (see the file comment).
inline constexpr std::uint64_t kStreamWrapMinBytes = std::uint64_t{1} << 20;

// Whether a pass over n elements of `element_bytes` wraps (when it has fewer than
// kStreamWrapRows grid rows): the ca read at every size, the cg read and every write from
// kStreamWrapMinBytes on, rmw and copy never (file comment). The wrap needs n and threads to be
// whole warps (multiples of 32 elements and threads), so every warp request still covers 32
// consecutive elements: 1 KiB-multiple sets of 4/8/16-byte elements always are.
RP_HD bool stream_may_wrap(StreamMode mode, StreamCache cache, std::size_t n, std::size_t element_bytes) {
  if (mode == StreamMode::Read && cache == StreamCache::Ca) return true;
  if (cache == StreamCache::CsChunk) return false;  // a chunk per block: its whole point is no wrap
  const bool l2_spread = static_cast<std::uint64_t>(n) * element_bytes >= kStreamWrapMinBytes;
  return (mode == StreamMode::Read || mode == StreamMode::Write) && l2_spread;
}

// Accesses one pass makes over n elements of `element_bytes` with `threads` threads: n, or for a
// set that wraps (stream_may_wrap) and is smaller than kStreamWrapRows grid-wide rows exactly
// kStreamWrapRows x threads (wrapped modulo n), so every thread makes kStreamWrapRows accesses.
RP_HD std::size_t stream_accesses_per_pass(StreamMode mode, StreamCache cache, std::size_t n, std::size_t threads,
                                           std::size_t element_bytes) {
  if (!stream_may_wrap(mode, cache, n, element_bytes) || n == 0 || n % kWarpLanes != 0 || threads % kWarpLanes != 0)
    return n;
  const std::size_t minimum = kStreamWrapRows * threads;
  if ((static_cast<std::uint64_t>(minimum) >> 32) != 0) return n;  // 32-bit element arithmetic (kernel)
  return n < minimum ? minimum : n;
}

// ---- one thread's walk through a pass ------------------------------------------------------
// Thread `thread_in_block` of block `block` makes `iterations` accesses per pass, to elements
// first + i x step (before any wrap): the grid stride (first g, step T) for ca, cg and cs; the
// block's contiguous chunk (first s x rows x blockDim + t, step blockDim) for cs_chunk. Counts
// are 32-bit: a thread makes far fewer than 2^32 accesses per pass.
struct StreamWalk {
  std::size_t first = 0;
  std::size_t step = 0;
  std::uint32_t iterations = 0;
};
RP_HD StreamWalk stream_walk(StreamCache cache, std::size_t accesses, std::size_t block, std::size_t thread_in_block,
                             std::size_t block_threads, std::size_t blocks, std::size_t launch_rotation) {
  const std::size_t threads = blocks * block_threads;
  const StreamRows rows = stream_rows(accesses, threads);
  StreamWalk w;
  if (cache != StreamCache::CsChunk) {
    w.first = stream_launch_thread(cache, block, thread_in_block, block_threads, blocks, launch_rotation);
    w.step = threads;
    w.iterations = static_cast<std::uint32_t>(stream_iterations_in(rows, w.first));
    return w;
  }
  const std::size_t chunk_rows = rows.rows + (rows.remainder > 0 ? 1 : 0);
  w.first = stream_slot(cache, block, blocks, launch_rotation) * chunk_rows * block_threads + thread_in_block;
  w.step = block_threads;
  if (w.first < accesses) {
    const StreamRows left = stream_rows(accesses - w.first + block_threads - 1, block_threads);  // ceil
    w.iterations = static_cast<std::uint32_t>(left.rows < chunk_rows ? left.rows : chunk_rows);
  }
  return w;
}

// ---- batches of the grid-stride loop -------------------------------------------------------
// The kernels walk a thread's `iterations` accesses of a pass in batches of kStreamBatch: the
// loads of a batch are issued before any of its stores (rmw, copy) or sums (read), so a thread
// keeps up to kStreamBatch loads in flight even with fewer iterations than that (a plain loop
// over a[e] += 1 serialises: the compiler cannot prove a[e + T] is not a[e], so each load waits
// for the store before it). Access i of the batch starting at `first` is made when
// stream_batch_active says so; the batches of a pass make exactly `iterations` accesses.
// 32-bit counts: a thread makes far fewer than 2^32 accesses per pass (n / threads).
inline constexpr std::uint32_t kStreamBatch = 4;
RP_HD std::uint32_t stream_batches(std::uint32_t iterations) { return (iterations + kStreamBatch - 1) / kStreamBatch; }
RP_HD bool stream_batch_active(std::uint32_t iterations, std::uint32_t batch, std::uint32_t slot) {
  return batch * kStreamBatch + slot < iterations;
}

// Element of access number `access` (thread g's i-th access is g + i x threads) over n elements.
RP_HD std::size_t stream_wrapped_element(std::size_t access, std::size_t n) { return access % n; }
// The same in 32 bits, as the kernels take it: a wrapped pass has fewer than 2^32 accesses
// (stream_accesses_per_pass wraps only then), so access and n fit. The 64-bit remainder is a
// called subroutine, around which ptxas spilled the cg read on sm_100.
RP_HD std::uint32_t stream_wrapped_element32(std::uint32_t access, std::uint32_t n) { return access % n; }

// Bytes and 32-bit words of one element of a `load_width_bits`-wide access (32, 64, 128).
RP_HD std::size_t stream_element_bytes(int load_width_bits) { return static_cast<std::size_t>(load_width_bits / 8); }
RP_HD int stream_words_per_element(int load_width_bits) { return load_width_bits / 32; }

// Elements per array for a working set: copy streams two arrays (a and b) that together make
// the working set; read, rmw and write one array. Rounded down to whole elements.
RP_HD std::size_t stream_elements(StreamMode mode, std::uint64_t working_set_bytes, std::size_t element_bytes) {
  const std::size_t arrays = mode == StreamMode::Copy ? 2 : 1;
  return static_cast<std::size_t>(working_set_bytes / (arrays * element_bytes));
}

struct StreamBytes {
  double read = 0;
  double written = 0;
};

// Bytes one launch moves: `reps` passes of `n` accesses per array (stream_accesses_per_pass).
// read: n loads per pass; rmw: n loads + n stores; copy: n loads from one array + n stores to
// the other; write: n stores. The read kernel's one partial sum per block is not counted (a few
// KiB against the stream).
RP_HD StreamBytes stream_bytes_per_launch(StreamMode mode, std::size_t n, std::size_t element_bytes,
                                          std::int64_t reps) {
  const double pass = static_cast<double>(n) * static_cast<double>(element_bytes) * static_cast<double>(reps);
  StreamBytes b;
  b.read = mode == StreamMode::Write ? 0.0 : pass;
  b.written = mode == StreamMode::Read ? 0.0 : pass;
  return b;
}

// 32-byte sectors one launch moves, `n` accesses per array and pass (stream_accesses_per_pass):
// every pass touches each array's ceil(n x W / 32) sectors once per access stream (read: one load; write: one store;
// rmw and copy: one load and one store). Exact for the probe's pattern: arrays start 256-byte aligned (cudaMalloc),
// every warp request covers 32 consecutive elements starting at a multiple of 32 elements (blocks hold whole warps), so
// each sector belongs to exactly one request and no request touches a sector beyond the array's bytes. Equals bytes /
// 32 whenever n x W is a multiple of 32, e.g. every 1 KiB-multiple size.
RP_HD double stream_sectors_per_launch(StreamMode mode, std::size_t n, std::size_t element_bytes, std::int64_t reps) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(n) * element_bytes;
  const std::uint64_t sectors_per_array = (bytes + 31) / 32;
  const double streams = mode == StreamMode::Read || mode == StreamMode::Write ? 1.0 : 2.0;
  return streams * static_cast<double>(sectors_per_array) * static_cast<double>(reps);
}

// ---- data the probe streams (arrays of 32-bit words, W/4 words per element) ---------------
// Initial content of word k of an array (element e, word w of a W-byte element: k = e x W/4 + w):
// a multiplicative hash of the word index, so neighbouring words differ and a misplaced access
// shows in the checks. Defined per word, the array's content is the same for every load width.
inline constexpr std::uint32_t kStreamHash = 2654435761u;

RP_HD std::uint32_t stream_word_initial(std::uint64_t word) { return static_cast<std::uint32_t>(word * kStreamHash); }

// What pass `pass` (1, 2, ... within a launch) of the write kernel stores into word k: the
// initial content plus the pass, so after a launch of R passes word k holds
// stream_word_initial(k) + R (what verify checks) and every pass stores values the one before
// did not (a store of an unchanged value is still a store, but a compiler or a reviewer need
// not wonder). Computed from the word index alone: the write kernel loads nothing. 32-bit
// arithmetic (the low 32 bits of the product depend on the low 32 bits of the index only), so
// the device multiplies with one IMAD rather than a 64-bit one.
RP_HD std::uint32_t stream_written_word(std::uint64_t word, std::uint32_t pass) {
  return static_cast<std::uint32_t>(word) * kStreamHash + pass;
}

// Sum modulo 2^32 of words [0, words), in closed form: C x N(N-1)/2 with N = words; the even one
// of N and N-1 is halved first so the division is exact (64-bit products wrap modulo 2^64, a
// multiple of 2^32).
RP_HD std::uint32_t stream_words_sum(std::uint64_t words) {
  if (words == 0) return 0;
  const std::uint64_t half_product = words % 2 == 0 ? (words / 2) * (words - 1) : words * ((words - 1) / 2);
  return static_cast<std::uint32_t>(half_product * kStreamHash);
}

// Checksum of one read pass: `accesses` accesses (stream_accesses_per_pass) over n elements of
// `words_per_element` words, access a reading element a mod n: full cycles over the set plus
// the first (accesses mod n) elements, modulo 2^32.
RP_HD std::uint32_t stream_read_pass_sum(std::size_t n, std::size_t accesses, std::size_t words_per_element) {
  const std::uint64_t cycles = accesses / n, rest = accesses % n;
  return static_cast<std::uint32_t>(cycles) * stream_words_sum(std::uint64_t{n} * words_per_element) +
         stream_words_sum(rest * words_per_element);
}

// The 16-byte element view (four words per element), kept for callers that index by element.
RP_HD std::uint32_t stream_initial_word(std::size_t e, int w) {
  return stream_word_initial(static_cast<std::uint64_t>(e) * 4 + static_cast<std::uint64_t>(w));
}
RP_HD std::uint32_t stream_initial_sum(std::size_t n) { return stream_words_sum(4 * static_cast<std::uint64_t>(n)); }

// ---- coalescing model ----------------------------------------------------------------------
// Distinct 32-byte sectors touched by one warp request in which lane l (l < lanes <= 32) accesses
// bytes [addresses[l], addresses[l] + access_bytes). access_bytes is 1..32, so an access spans at
// most two sectors and at most 64 distinct sectors can occur.
RP_HD int sectors_per_warp_request(const std::uint64_t* addresses, int lanes, int access_bytes) {
  std::uint64_t seen[2 * kWarpLanes];
  int count = 0;
  for (int l = 0; l < lanes; ++l) {
    const std::uint64_t first = addresses[l] / kSectorBytes;
    const std::uint64_t last = (addresses[l] + static_cast<std::uint64_t>(access_bytes) - 1) / kSectorBytes;
    for (std::uint64_t s = first; s <= last; ++s) {
      bool found = false;
      for (int i = 0; i < count && !found; ++i) found = seen[i] == s;
      if (!found) seen[count++] = s;
    }
  }
  return count;
}

// Sectors of the warp request that lanes [warp_first_thread, +32) of the stream issue on
// `iteration` over `element_bytes`-byte elements at byte address `base`: `accesses` accesses per
// pass (stream_accesses_per_pass) over n elements. Lanes past the accesses or the grid are
// inactive.
RP_HD int stream_sectors_per_request(std::uint64_t base, std::size_t element_bytes, std::size_t n, std::size_t accesses,
                                     std::size_t threads, std::size_t warp_first_thread, std::size_t iteration) {
  std::uint64_t addresses[kWarpLanes];
  int lanes = 0;
  for (int l = 0; l < kWarpLanes && warp_first_thread + l < threads; ++l) {
    const std::size_t access = stream_element(warp_first_thread + l, iteration, threads);
    if (access < accesses) addresses[lanes++] = base + stream_wrapped_element(access, n) * element_bytes;
  }
  return sectors_per_warp_request(addresses, lanes, static_cast<int>(element_bytes));
}

// The same for the request that warp `warp_in_block` of block `block` issues on `iteration` of a
// launch with `launch_rotation` under `mode` and `cache`: `blocks` blocks of `block_threads`.
RP_HD int stream_launch_sectors_per_request(std::uint64_t base, std::size_t element_bytes, std::size_t n,
                                            StreamMode mode, StreamCache cache, std::size_t blocks,
                                            std::size_t block_threads, std::size_t block, std::size_t warp_in_block,
                                            std::size_t launch_rotation, std::size_t iteration) {
  const std::size_t threads = blocks * block_threads;
  const std::size_t first =
      stream_launch_thread(cache, block, warp_in_block * kWarpLanes, block_threads, blocks, launch_rotation);
  return stream_sectors_per_request(base, element_bytes, n,
                                    stream_accesses_per_pass(mode, cache, n, threads, element_bytes), threads, first,
                                    iteration);
}

}  // namespace roofprobe
