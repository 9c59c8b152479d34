// Host tests of what the CUDA probes compute on the device or derive from device facts: the
// address patterns (coverage, coalescing), the launch shapes, the data the host predicts, and the
// per-architecture figures behind the theoretical peaks. Plain C++: the RP_HD helpers are
// ordinary inline functions here, and no CUDA header is included.
#include <gtest/gtest.h>
#include <regex>

#include <algorithm>
#include <cmath>

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/cuda/backend/gpu_arch.hpp"
#include "kernels/cuda/backend/nvml_process_list.hpp"
#include "kernels/cuda/backend/throttle.hpp"
#include "kernels/contract/probe.hpp"
#include "kernels/cuda/backend/stream_pattern.hpp"
#include "kernels/cuda/backend/probe_decl.hpp"
#include "driver/fit/fit.hpp"
#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"
#include "driver/report/summary.hpp"

namespace roofprobe {
namespace {

struct Grid {
  std::size_t blocks, block;
  std::size_t threads() const { return blocks * block; }
};

// ---- stream pattern: coverage ---------------------------------------------------------------
TEST(StreamPattern, EveryElementExactlyOncePerPass) {
  const std::size_t sizes[] = {1, 7, 31, 32, 33, 1000, 1023, 4097, 100003};
  const Grid grids[] = {{1, 32}, {3, 256}, {7, 96}, {13, 64}, {1056, 256}};
  for (std::size_t n : sizes) {
    for (const Grid& g : grids) {
      std::vector<int> touched(n, 0);
      std::size_t total = 0;
      for (std::size_t t = 0; t < g.threads(); ++t) {
        const std::size_t iters = stream_iterations(n, t, g.threads());
        total += iters;
        for (std::size_t i = 0; i < iters; ++i) {
          const std::size_t e = stream_element(t, i, g.threads());
          ASSERT_LT(e, n) << "thread " << t << " iteration " << i;
          ++touched[e];
        }
        // One more iteration would leave the array: the count is exact, not just safe.
        EXPECT_GE(stream_element(t, iters, g.threads()), n);
      }
      EXPECT_EQ(total, n) << "n=" << n << " grid " << g.blocks << "x" << g.block;
      for (std::size_t e = 0; e < n; ++e) {
        ASSERT_EQ(touched[e], 1) << "element " << e << " n=" << n << " grid " << g.blocks << "x" << g.block;
      }
    }
  }
}

// The kernels' form of the counts (one division per launch) equals the per-thread one.
TEST(StreamPattern, RowsGiveTheSameIterationCounts) {
  for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{1000}, std::size_t{100003}}) {
    for (std::size_t threads : {std::size_t{32}, std::size_t{96}, std::size_t{1792}}) {
      const StreamRows rows = stream_rows(n, threads);
      for (std::size_t t = 0; t < threads; ++t) {
        ASSERT_EQ(stream_iterations_in(rows, t), stream_iterations(n, t, threads))
            << "n=" << n << " threads=" << threads << " thread " << t;
      }
    }
  }
}

// Rotation: each launch's slots are a permutation of the blocks; cg moves on by the launch's
// rotation, ca never.
TEST(StreamPattern, RotationOfTheBlockAssignment) {
  for (StreamCache cache : {StreamCache::Ca, StreamCache::Cg, StreamCache::Cs, StreamCache::CsChunk}) {
    for (std::size_t blocks : {std::size_t{1}, std::size_t{2}, std::size_t{7}, std::size_t{132}}) {
      for (std::size_t rotation = 0; rotation<blocks; rotation += blocks> 8 ? 13 : 1) {
        std::vector<int> used(blocks, 0);
        for (std::size_t b = 0; b < blocks; ++b) {
          const std::size_t slot = stream_slot(cache, b, blocks, rotation);
          ++used.at(slot);
          EXPECT_EQ(slot, cache != StreamCache::Ca ? (b + rotation) % blocks : b);
          EXPECT_EQ(stream_launch_thread(cache, b, 5, 64, blocks, rotation), slot * 64 + 5);
        }
        for (int u : used) ASSERT_EQ(u, 1) << "rotation " << rotation << " is not a permutation";
      }
    }
  }
}

// The accesses of one pass, as the kernel walks them (first element, step threads mod n,
// subtract n on overflow), for every width, block shape and rotation: rmw and copy touch every
// element exactly once; read touches every element once per full cycle of the set (more often
// for a set smaller than kStreamWrapRows grid rows), and each block's accesses stay as many
// as its threads x rows.
TEST(StreamPattern, EveryPassTouchesEveryElementAsCounted) {
  struct Shape {
    std::size_t blocks, block;
  };
  const Shape shapes[] = {{1, 32}, {3, 64}, {5, 96}, {12, 256}};
  for (int bits : {32, 64, 128}) {
    const std::size_t element_bytes = stream_element_bytes(bits);
    for (std::uint64_t working_set :
         {std::uint64_t{1024}, std::uint64_t{4096}, std::uint64_t{12345}, std::uint64_t{65536}}) {
      for (StreamMode mode : {StreamMode::Read, StreamMode::Rmw, StreamMode::Copy, StreamMode::Write}) {
        const std::size_t n = stream_elements(mode, working_set, element_bytes);
        for (StreamCache cache : {StreamCache::Ca, StreamCache::Cg}) {
          for (const Shape& sh : shapes) {
            const std::size_t threads = sh.blocks * sh.block;
            const std::size_t accesses = stream_accesses_per_pass(mode, cache, n, threads, element_bytes);
            // These sets are below kStreamWrapMinBytes: only the ca read wraps them.
            if (mode != StreamMode::Read || cache != StreamCache::Ca || n % 32 != 0) {
              ASSERT_EQ(accesses, n);
            } else {
              ASSERT_EQ(accesses, std::max(n, kStreamWrapRows * threads));
            }
            const StreamRows rows = stream_rows(accesses, threads);
            for (std::size_t rotation : {std::size_t{0}, sh.blocks / 2, sh.blocks - 1}) {
              std::vector<std::size_t> touched(n, 0);
              for (std::size_t b = 0; b < sh.blocks; ++b) {
                for (std::size_t t = 0; t < sh.block; ++t) {
                  const std::size_t g = stream_launch_thread(cache, b, t, sh.block, sh.blocks, rotation);
                  const bool wraps = accesses != n;
                  std::size_t e = wraps ? g % n : g;
                  const std::size_t step = wraps ? threads % n : threads;
                  for (std::size_t i = 0; i < stream_iterations_in(rows, g); ++i) {
                    ASSERT_EQ(e, stream_wrapped_element(stream_element(g, i, threads), n));
                    ASSERT_LT(e, n);
                    ++touched[e];
                    e += step;
                    if (e >= n) e -= n;
                  }
                }
              }
              std::size_t total = 0;
              for (std::size_t e = 0; e < n; ++e) {
                const std::size_t want = accesses / n + (e < accesses % n ? 1 : 0);
                ASSERT_EQ(touched[e], want)
                    << "element " << e << " width " << bits << " blocks " << sh.blocks << " n " << n;
                total += touched[e];
              }
              ASSERT_EQ(total, accesses);
            }
          }
        }
      }
    }
  }
}

// Which passes wrap: the ca read at every size; the cg read and the write under every cache_op
// from kStreamWrapMinBytes on; rmw and copy never (two threads updating one element would race).
// A wrapped pass gives every thread exactly kStreamWrapRows accesses (no remainder row), and is
// counted access by access (bytes and sectors from the accesses, not the elements).
TEST(StreamPattern, SmallReadAndWriteSetsWrapWhereTheyReachEveryL2Slice) {
  const std::size_t threads = 132 * 2048;  // an H200's resident grid of 256-thread blocks
  for (int bits : {32, 64, 128}) {
    const std::size_t w = stream_element_bytes(bits);
    for (std::uint64_t ws : {std::uint64_t{16} << 10, std::uint64_t{512} << 10, std::uint64_t{1} << 20,
                             std::uint64_t{2} << 20, std::uint64_t{5} << 20, std::uint64_t{64} << 20}) {
      for (StreamMode mode : {StreamMode::Read, StreamMode::Rmw, StreamMode::Copy, StreamMode::Write}) {
        const std::size_t n = stream_elements(mode, ws, w);
        for (StreamCache cache : {StreamCache::Ca, StreamCache::Cg, StreamCache::Cs, StreamCache::CsChunk}) {
          if (!stream_kernel_exists(mode, cache)) continue;
          const std::size_t accesses = stream_accesses_per_pass(mode, cache, n, threads, w);
          const bool read_or_write = mode == StreamMode::Read || mode == StreamMode::Write;
          const bool wraps = (mode == StreamMode::Read && cache == StreamCache::Ca) ||
                             (read_or_write && cache != StreamCache::CsChunk &&
                              static_cast<std::uint64_t>(n) * w >= kStreamWrapMinBytes);
          const std::size_t want = wraps && n < kStreamWrapRows * threads ? kStreamWrapRows * threads : n;
          EXPECT_EQ(accesses, want) << bits << "-bit " << ws << " B mode " << static_cast<int>(mode) << " cache "
                                    << static_cast<int>(cache);
          if (accesses != n) {
            const StreamRows rows = stream_rows(accesses, threads);
            EXPECT_EQ(rows.rows, kStreamWrapRows);
            EXPECT_EQ(rows.remainder, 0u) << "every thread the same accesses";
            const StreamBytes bytes = stream_bytes_per_launch(mode, accesses, w, 3);
            EXPECT_DOUBLE_EQ(bytes.read + bytes.written, 3.0 * static_cast<double>(kStreamWrapRows * threads * w));
            EXPECT_DOUBLE_EQ(stream_sectors_per_launch(mode, accesses, w, 3),
                             3.0 * static_cast<double>(kStreamWrapRows * threads * w) / 32);
          }
        }
      }
    }
  }
  // 2 MiB of 128-bit elements on that grid: under one grid row, so a cg read or write would
  // leave 141k of 270k threads idle and the rest with one access; wrapped, all have 4.
  EXPECT_EQ(stream_accesses_per_pass(StreamMode::Read, StreamCache::Cg, 131072, threads, 16), 4 * threads);
  EXPECT_EQ(stream_accesses_per_pass(StreamMode::Write, StreamCache::Cs, 131072, threads, 16), 4 * threads);
  EXPECT_EQ(stream_accesses_per_pass(StreamMode::Rmw, StreamCache::Cg, 131072, threads, 16), std::size_t{131072});
  // A pass of 2^32 accesses or more would not fit the kernels' 32-bit element arithmetic: no wrap.
  EXPECT_EQ(stream_accesses_per_pass(StreamMode::Read, StreamCache::Ca, 1024, std::size_t{1} << 30, 16),
            std::size_t{1024});
  EXPECT_EQ(stream_accesses_per_pass(StreamMode::Read, StreamCache::Ca, 1024, (std::size_t{1} << 30) - 32, 16),
            4 * ((std::size_t{1} << 30) - 32));
  EXPECT_FALSE(stream_kernel_exists(StreamMode::Read, StreamCache::Cs));
  EXPECT_FALSE(stream_kernel_exists(StreamMode::Read, StreamCache::CsChunk));
  EXPECT_TRUE(stream_kernel_exists(StreamMode::Copy, StreamCache::Cs));
  EXPECT_TRUE(stream_kernel_exists(StreamMode::Write, StreamCache::CsChunk));
}

// A wrapped write (and cg read) from kStreamWrapMinBytes on, walked as the kernel does (element
// j of thread g: (g + j T) mod n, for every block and rotation): every element is touched in
// every pass, as often as counted, so a write leaves every word with the last pass's value.
TEST(StreamPattern, WrappedL2SetsTouchEveryElementAsCounted) {
  struct Shape {
    std::size_t blocks, block;
  };
  const Shape shapes[] = {{80, 256}, {66, 512}};
  for (StreamMode mode : {StreamMode::Read, StreamMode::Write}) {
    for (StreamCache cache : {StreamCache::Ca, StreamCache::Cg, StreamCache::Cs}) {
      if (!stream_kernel_exists(mode, cache)) continue;
      for (const Shape& sh : shapes) {
        const std::size_t threads = sh.blocks * sh.block, w = 16;
        const std::size_t n = stream_elements(mode, kStreamWrapMinBytes, w);  // 65536 < 4 x threads
        const std::size_t accesses = stream_accesses_per_pass(mode, cache, n, threads, w);
        ASSERT_EQ(accesses, kStreamWrapRows * threads);
        for (std::size_t rotation : {std::size_t{0}, std::size_t{7}}) {
          std::vector<std::size_t> touched(n, 0);
          for (std::size_t b = 0; b < sh.blocks; ++b)
            for (std::size_t t = 0; t < sh.block; ++t) {
              const std::size_t g = stream_launch_thread(cache, b, t, sh.block, sh.blocks, rotation);
              for (std::size_t j = 0; j < kStreamWrapRows; ++j) {
                const std::size_t access = stream_element(g, j, threads);
                ASSERT_EQ(stream_wrapped_element32(static_cast<std::uint32_t>(access), static_cast<std::uint32_t>(n)),
                          stream_wrapped_element(access, n));  // the kernel's 32-bit form
                ++touched[stream_wrapped_element(access, n)];
              }
            }
          for (std::size_t e = 0; e < n; ++e)
            ASSERT_EQ(touched[e], accesses / n + (e < accesses % n ? 1 : 0)) << "element " << e;
        }
      }
    }
  }
}

// The batches of the rmw/copy loop make exactly a thread's iterations: each access once, in
// order, no slot past the end, for counts below, at and above a batch.
TEST(StreamPattern, BatchesMakeEveryIterationOnce) {
  for (std::uint32_t iterations = 0; iterations < 40; ++iterations) {
    std::vector<int> made(iterations, 0);
    std::uint32_t count = 0;
    for (std::uint32_t batch = 0; batch < stream_batches(iterations); ++batch)
      for (std::uint32_t slot = 0; slot < kStreamBatch; ++slot)
        if (stream_batch_active(iterations, batch, slot)) {
          ASSERT_LT(batch * kStreamBatch + slot, iterations);
          ++made[batch * kStreamBatch + slot];
          ++count;
        }
    EXPECT_EQ(count, iterations);
    for (int m : made) EXPECT_EQ(m, 1);
    EXPECT_EQ(stream_batches(iterations), (iterations + 3) / 4);
  }
}

// Each thread's walk (stream_walk) as the batched kernels take it: for ca/cg/cs it is the grid
// stride of stream_launch_thread; for cs_chunk every block slot streams a contiguous chunk. Either
// way every element is touched exactly once per pass, for whole and ragged sets and every
// rotation, and the warps stay coalesced: each warp request covers consecutive elements from a
// multiple of 32 on, so the sectors of all requests are the launch's sector count.
TEST(StreamPattern, WalksTouchEveryElementOnceAndStayCoalesced) {
  struct Shape {
    std::size_t blocks, block;
  };
  const Shape shapes[] = {{1, 32}, {3, 64}, {5, 96}, {12, 256}};
  for (StreamCache cache : {StreamCache::Ca, StreamCache::Cg, StreamCache::Cs, StreamCache::CsChunk}) {
    for (int bits : {32, 128}) {
      const std::size_t w = stream_element_bytes(bits);
      for (std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{1000}, std::size_t{4096}, std::size_t{20001},
                            std::size_t{65536}}) {
        for (const Shape& sh : shapes) {
          const std::size_t threads = sh.blocks * sh.block;
          for (std::size_t rotation : {std::size_t{0}, sh.blocks / 2, sh.blocks - 1}) {
            std::vector<int> touched(n, 0);
            long long sectors = 0;
            for (std::size_t b = 0; b < sh.blocks; ++b) {
              std::vector<StreamWalk> walks;
              for (std::size_t t = 0; t < sh.block; ++t) {
                const StreamWalk walk = stream_walk(cache, n, b, t, sh.block, sh.blocks, rotation);
                if (cache != StreamCache::CsChunk) {
                  ASSERT_EQ(walk.first, stream_launch_thread(cache, b, t, sh.block, sh.blocks, rotation));
                  ASSERT_EQ(walk.step, threads);
                } else {
                  ASSERT_EQ(walk.step, sh.block);
                }
                for (std::uint32_t i = 0; i < walk.iterations; ++i) {
                  const std::size_t e = walk.first + i * walk.step;
                  ASSERT_LT(e, n) << "cache " << static_cast<int>(cache) << " block " << b << " thread " << t;
                  ++touched[e];
                }
                // One more step would leave the set or the block's chunk: the count is exact.
                if (walk.iterations > 0 && cache == StreamCache::CsChunk) {
                  const std::size_t next = walk.first + walk.iterations * walk.step;
                  const std::size_t chunk = (n + threads - 1) / threads * sh.block;
                  EXPECT_TRUE(next >= n || next / chunk != walk.first / chunk) << "block " << b << " thread " << t;
                }
                walks.push_back(walk);
              }
              for (std::size_t warp = 0; warp < sh.block / 32; ++warp) {
                for (std::uint32_t i = 0;; ++i) {
                  std::uint64_t addresses[kWarpLanes];
                  int lanes = 0;
                  for (std::size_t l = 0; l < kWarpLanes; ++l) {
                    const StreamWalk& walk = walks[warp * kWarpLanes + l];
                    if (i < walk.iterations) addresses[lanes++] = 4096 + (walk.first + i * walk.step) * w;
                  }
                  if (lanes == 0) break;
                  if (lanes == kWarpLanes) {
                    EXPECT_EQ((addresses[0] - 4096) / w % kWarpLanes, 0u) << "warp request from a multiple of 32";
                  }
                  sectors += sectors_per_warp_request(addresses, lanes, static_cast<int>(w));
                }
              }
            }
            for (std::size_t e = 0; e < n; ++e) ASSERT_EQ(touched[e], 1) << "element " << e << " n=" << n;
            EXPECT_DOUBLE_EQ(static_cast<double>(sectors), stream_sectors_per_launch(StreamMode::Read, n, w, 1))
                << "cache " << static_cast<int>(cache) << " width " << bits << " n=" << n << " blocks " << sh.blocks;
          }
        }
      }
    }
  }
  // An H200-like grid (1056 blocks of 256) and a 1 GiB write of 16-byte elements: chunks of
  // ceil(2^26 / 270336) = 249 rows of 256 elements; blocks 0..1051 stream whole chunks, block
  // 1052 the last 50176 elements (196 rows), blocks 1053..1055 nothing.
  EXPECT_EQ(stream_walk(StreamCache::CsChunk, std::size_t{1} << 26, 0, 7, 256, 1056, 0).iterations, 249u);
  EXPECT_EQ(stream_walk(StreamCache::CsChunk, std::size_t{1} << 26, 1052, 0, 256, 1056, 0).iterations, 196u);
  EXPECT_EQ(stream_walk(StreamCache::CsChunk, std::size_t{1} << 26, 1055, 255, 256, 1056, 0).iterations, 0u);
  EXPECT_EQ(stream_accesses_per_pass(StreamMode::Write, StreamCache::CsChunk, 65536, 270336, 16), std::size_t{65536});
}

// The read checksum of a pass is the brute-force sum of the words its accesses read.
TEST(StreamPattern, ReadPassSumCountsTheWrappedAccesses) {
  for (std::size_t words_per_element : {std::size_t{1}, std::size_t{2}, std::size_t{4}}) {
    for (std::size_t n : {std::size_t{32}, std::size_t{96}, std::size_t{1024}}) {
      for (std::size_t accesses : {n, 4 * n, 4 * 3 * 256 + n / 2, std::size_t{5000}}) {
        if (accesses < n) continue;
        std::uint32_t sum = 0;
        for (std::size_t a = 0; a < accesses; ++a)
          for (std::size_t w = 0; w < words_per_element; ++w)
            sum += stream_word_initial((a % n) * words_per_element + w);
        EXPECT_EQ(stream_read_pass_sum(n, accesses, words_per_element), sum)
            << "n=" << n << " accesses=" << accesses << " words " << words_per_element;
      }
    }
  }
}

TEST(StreamPattern, ElementsAndBytesPerLaunch) {
  EXPECT_EQ(stream_elements(StreamMode::Read, 1 << 20, 16), std::size_t{65536});
  EXPECT_EQ(stream_elements(StreamMode::Rmw, 1 << 20, 16), std::size_t{65536});
  EXPECT_EQ(stream_elements(StreamMode::Copy, 1 << 20, 16), std::size_t{32768});  // two arrays
  EXPECT_EQ(stream_elements(StreamMode::Read, 16 * 3 + 15, 16), std::size_t{3});  // rounds down

  const StreamBytes read = stream_bytes_per_launch(StreamMode::Read, 1000, 16, 5);
  EXPECT_DOUBLE_EQ(read.read, 80000);
  EXPECT_DOUBLE_EQ(read.written, 0);
  const StreamBytes rmw = stream_bytes_per_launch(StreamMode::Rmw, 1000, 16, 5);
  EXPECT_DOUBLE_EQ(rmw.read, 80000);
  EXPECT_DOUBLE_EQ(rmw.written, 80000);
  // Copy of a 1 MiB working set moves the whole working set per pass: half read, half written.
  const std::size_t n = stream_elements(StreamMode::Copy, 1 << 20, 16);
  const StreamBytes copy = stream_bytes_per_launch(StreamMode::Copy, n, 16, 1);
  EXPECT_DOUBLE_EQ(copy.read + copy.written, 1 << 20);
  // Write: one array, stores only.
  EXPECT_EQ(stream_elements(StreamMode::Write, 1 << 20, 16), std::size_t{65536});
  const StreamBytes write = stream_bytes_per_launch(StreamMode::Write, 1000, 16, 5);
  EXPECT_DOUBLE_EQ(write.read, 0);
  EXPECT_DOUBLE_EQ(write.written, 80000);
  EXPECT_DOUBLE_EQ(stream_sectors_per_launch(StreamMode::Write, 5, 4, 3), 1.0 * 1 * 3);
}

// What the write kernel stores: the initial word + the pass, in 32-bit arithmetic that agrees
// with the 64-bit stream_word_initial for indices past 2^32 too (a 17 GiB array's last words).
TEST(StreamPattern, WrittenWordIsTheInitialWordPlusThePass) {
  for (std::uint64_t k : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{12345}, (std::uint64_t{1} << 32) - 1,
                          std::uint64_t{1} << 32, (std::uint64_t{5} << 32) + 77}) {
    for (std::uint32_t pass : {1u, 2u, 1000u, 0xffffffffu}) {
      EXPECT_EQ(stream_written_word(k, pass), static_cast<std::uint32_t>(stream_word_initial(k) + pass)) << k;
    }
  }
  // Neighbouring words differ, and so do two passes over one word.
  EXPECT_NE(stream_written_word(7, 1), stream_written_word(8, 1));
  EXPECT_NE(stream_written_word(7, 1), stream_written_word(7, 2));
}

TEST(StreamPattern, WidthsElementsAndSectorsPerLaunch) {
  EXPECT_EQ(stream_element_bytes(32), 4u);
  EXPECT_EQ(stream_element_bytes(64), 8u);
  EXPECT_EQ(stream_element_bytes(128), 16u);
  EXPECT_EQ(stream_words_per_element(32), 1);
  EXPECT_EQ(stream_words_per_element(64), 2);
  EXPECT_EQ(stream_words_per_element(128), 4);
  // The same working set in words, whatever the width.
  for (int bits : {32, 64, 128}) {
    const std::size_t n = stream_elements(StreamMode::Read, 1 << 20, stream_element_bytes(bits));
    EXPECT_EQ(n * stream_words_per_element(bits), std::size_t{1} << 18) << bits;
    // Every 1 KiB-multiple working set: transactions = bytes / 32 exactly.
    for (StreamMode mode : {StreamMode::Read, StreamMode::Rmw, StreamMode::Copy, StreamMode::Write}) {
      const std::size_t m = stream_elements(mode, 3 << 10, stream_element_bytes(bits));
      const StreamBytes b = stream_bytes_per_launch(mode, m, stream_element_bytes(bits), 7);
      EXPECT_DOUBLE_EQ(stream_sectors_per_launch(mode, m, stream_element_bytes(bits), 7),
                       (b.read + b.written) / kSectorBytes);
    }
  }
  // A ragged array: 5 words of 4 bytes = 20 bytes still cost one whole sector per stream.
  EXPECT_DOUBLE_EQ(stream_sectors_per_launch(StreamMode::Rmw, 5, 4, 3), 2.0 * 1 * 3);
}

// The sector count of a launch is what the coalescing model adds up over all warp requests of a
// pass: every width, block shape and rotation (cg), whole and ragged arrays.
TEST(Coalescing, SectorsPerLaunchMatchTheWarpRequests) {
  struct Shape {
    std::size_t blocks, block;
  };
  const Shape shapes[] = {{1, 32}, {3, 64}, {7, 256}};
  for (int bits : {32, 64, 128}) {
    const std::size_t w = stream_element_bytes(bits);
    for (std::size_t n : {std::size_t{1}, std::size_t{33}, std::size_t{1000}, std::size_t{4096}, std::size_t{20001}}) {
      for (StreamCache cache : {StreamCache::Ca, StreamCache::Cg}) {
        for (const Shape& sh : shapes) {
          for (std::size_t rotation : {std::size_t{0}, std::size_t{1}}) {
            const std::size_t threads = sh.blocks * sh.block;
            // The ca read wraps small sets (more accesses than elements), rmw never does.
            for (StreamMode mode : {StreamMode::Read, StreamMode::Rmw, StreamMode::Write}) {
              const std::size_t accesses = stream_accesses_per_pass(mode, cache, n, threads, w);
              const std::size_t iterations = (accesses + threads - 1) / threads;
              long long sectors = 0;
              for (std::size_t b = 0; b < sh.blocks; ++b) {
                for (std::size_t warp = 0; warp < sh.block / 32; ++warp) {
                  for (std::size_t it = 0; it < iterations; ++it) {
                    sectors += stream_launch_sectors_per_request(1 << 20, w, n, mode, cache, sh.blocks, sh.block, b,
                                                                 warp, rotation, it);
                  }
                }
              }
              // One access stream of the launch (rmw's stores repeat its loads' sectors).
              EXPECT_DOUBLE_EQ(static_cast<double>(sectors),
                               stream_sectors_per_launch(StreamMode::Read, accesses, w, 1))
                  << "width " << bits << " n=" << n << " blocks " << sh.blocks;
            }
          }
        }
      }
    }
  }
}

TEST(StreamPattern, InitialSumClosedFormMatchesBruteForce) {
  for (std::size_t n :
       {std::size_t{0}, std::size_t{1}, std::size_t{2}, std::size_t{1000}, std::size_t{65537}, std::size_t{1} << 20}) {
    std::uint32_t sum = 0;
    for (std::size_t e = 0; e < n; ++e) {
      for (int w = 0; w < 4; ++w) sum += stream_initial_word(e, w);
    }
    EXPECT_EQ(stream_initial_sum(n), sum) << "n=" << n;
  }
  EXPECT_NE(stream_initial_word(0, 1), stream_initial_word(1, 0));
  // Word view: any count of words, odd ones included (32-bit elements).
  for (std::uint64_t words : {std::uint64_t{0}, std::uint64_t{1}, std::uint64_t{2}, std::uint64_t{3},
                              std::uint64_t{999}, std::uint64_t{65537}, (std::uint64_t{1} << 20) + 1}) {
    std::uint32_t sum = 0;
    for (std::uint64_t k = 0; k < words; ++k) sum += stream_word_initial(k);
    EXPECT_EQ(stream_words_sum(words), sum) << "words=" << words;
  }
  // Counts past 2^32 words, where the 64-bit products wrap: against exact 128-bit arithmetic.
  for (std::uint64_t words : {(std::uint64_t{1} << 33) + 1, (std::uint64_t{3} << 32) + 7}) {
    const unsigned __int128 exact = static_cast<unsigned __int128>(words) * (words - 1) / 2 * kStreamHash;
    EXPECT_EQ(stream_words_sum(words), static_cast<std::uint32_t>(exact)) << "words=" << words;
  }
  EXPECT_EQ(stream_initial_word(5, 3), stream_word_initial(23));
}

// ---- coalescing model ---------------------------------------------------------------------
std::vector<std::uint64_t> strided(std::uint64_t base, std::uint64_t stride_bytes, int lanes = 32) {
  std::vector<std::uint64_t> a;
  for (int l = 0; l < lanes; ++l) a.push_back(base + l * stride_bytes);
  return a;
}

TEST(Coalescing, SectorsPerWarpRequestForStridePatterns) {
  // The global-memory walls of the instruction roofline (docs/ARCHITECTURE.md).
  EXPECT_EQ(sectors_per_warp_request(strided(4096, 0).data(), 32, 4), 1);     // stride-0
  EXPECT_EQ(sectors_per_warp_request(strided(4096, 4).data(), 32, 4), 4);     // unit, 4-byte
  EXPECT_EQ(sectors_per_warp_request(strided(4096, 8).data(), 32, 8), 8);     // unit, 8-byte
  EXPECT_EQ(sectors_per_warp_request(strided(4096, 32).data(), 32, 4), 32);   // stride-8, 4-byte
  EXPECT_EQ(sectors_per_warp_request(strided(4096, 16).data(), 32, 16), 16);  // unit, 16-byte
  // Misaligned by 8 bytes: the 16-byte accesses straddle one more sector.
  EXPECT_EQ(sectors_per_warp_request(strided(4096 + 8, 16).data(), 32, 16), 17);
  // Half a warp active.
  EXPECT_EQ(sectors_per_warp_request(strided(4096, 4).data(), 16, 4), 2);
  EXPECT_EQ(sectors_per_warp_request(strided(0, 0).data(), 0, 4), 0);
}

// 32 lanes of 4/8/16-byte accesses to consecutive elements: 4/8/16 sectors per warp request,
// i.e. 32 bytes per sector used, nothing wasted, for every width and rotation.
TEST(Coalescing, SectorsPerWarpRequestForEveryLoadWidth) {
  const std::size_t blocks = 5, block = 128, n = blocks * block * 3;
  for (int bits : {32, 64, 128}) {
    const std::size_t w = stream_element_bytes(bits);
    const int want = bits / 8;  // 32 lanes x W bytes / 32 bytes per sector
    for (StreamCache cache : {StreamCache::Ca, StreamCache::Cg}) {
      for (std::size_t b = 0; b < blocks; ++b) {
        for (std::size_t warp = 0; warp < block / 32; ++warp) {
          for (std::size_t rotation : {0, 1, 4}) {
            for (std::size_t it = 0; it < 3; ++it) {
              EXPECT_EQ(stream_launch_sectors_per_request(4096, w, n, StreamMode::Read, cache, blocks, block, b, warp,
                                                          rotation, it),
                        want)
                  << "width " << bits << " block " << b << " warp " << warp;
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(sectors_per_warp_request(strided(0, 4).data(), 32, 4), 4);
  EXPECT_EQ(sectors_per_warp_request(strided(0, 8).data(), 32, 8), 8);
  EXPECT_EQ(sectors_per_warp_request(strided(0, 16).data(), 32, 16), 16);
}

TEST(Coalescing, StreamWarpRequestsUseWholeSectors) {
  const std::size_t threads = 7 * 256;
  const std::size_t n = 100003;
  for (std::size_t warp = 0; warp < threads; warp += 32) {
    for (std::size_t it = 0; it < 3; ++it) {
      const int sectors = stream_sectors_per_request(1 << 20, 16, n, n, threads, warp, it);
      // Full warps: 32 lanes x 16 bytes = 512 contiguous bytes = 16 sectors, nothing wasted.
      EXPECT_EQ(sectors, 16) << "warp at thread " << warp << " iteration " << it;
    }
  }
  // The last, partial request of the array: only lanes below n are active.
  const std::size_t last_it = (n - 1) / threads;
  const std::size_t first_tail_warp = ((n - 1) % threads) / 32 * 32;
  const std::size_t active = (n - 1) % threads - first_tail_warp + 1;
  EXPECT_EQ(stream_sectors_per_request(0, 16, n, n, threads, first_tail_warp, last_it),
            static_cast<int>((active * 16 + 31) / 32));
}

// ---- architecture figures vs the published peaks (docs/ARCHITECTURE.md reference table) ----------
struct Reference {
  const char* gpu;
  int major, minor, sms;
  double mhz, fp64_tflops, fp32_tflops;
};

TEST(GpuArch, PeaksMatchPublishedFigures) {
  const Reference refs[] = {
      // clang-format off
      {"V100 SXM2", 7, 0, 80, 1530, 7.8, 15.7},
      {"A100 SXM", 8, 0, 108, 1410, 9.7, 19.5},
      {"H100 SXM", 9, 0, 132, 1980, 33.5, 66.9},
      {"H200 SXM", 9, 0, 132, 1980, 34, 67},
      {"RTX 4090", 8, 9, 128, 2520, 1.29, 82.6},
      // clang-format on
  };
  for (const Reference& r : refs) {
    const GpuArchFigures a = gpu_arch_figures(r.major, r.minor);
    const double fp64 = gpu_peak_gflops(r.sms, a.fp64_lanes_per_sm, r.mhz, true) / 1000;
    const double fp32 = gpu_peak_gflops(r.sms, a.fp32_lanes_per_sm, r.mhz, true) / 1000;
    // Published figures are rounded (H200: 33.45 -> "34"), hence 2%.
    EXPECT_NEAR(fp64, r.fp64_tflops, 0.02 * r.fp64_tflops) << r.gpu;
    EXPECT_NEAR(fp32, r.fp32_tflops, 0.02 * r.fp32_tflops) << r.gpu;
    EXPECT_DOUBLE_EQ(gpu_peak_gflops(r.sms, a.fp32_lanes_per_sm, r.mhz, false), 1000 * fp32 / 2)
        << r.gpu << ": noFMA is half the FMA peak";
    EXPECT_EQ(a.schedulers_per_sm, 4) << r.gpu;
  }
}

TEST(GpuArch, L1SizesAndUnknownArchitectures) {
  EXPECT_EQ(gpu_arch_figures(7, 0).l1_bytes_per_sm, 128u * 1024);
  EXPECT_EQ(gpu_arch_figures(8, 0).l1_bytes_per_sm, 192u * 1024);
  EXPECT_EQ(gpu_arch_figures(8, 6).l1_bytes_per_sm, 128u * 1024);
  EXPECT_EQ(gpu_arch_figures(8, 9).l1_bytes_per_sm, 128u * 1024);
  EXPECT_EQ(gpu_arch_figures(9, 0).l1_bytes_per_sm, 256u * 1024);
  const GpuArchFigures unknown = gpu_arch_figures(42, 0);
  EXPECT_EQ(unknown.fp32_lanes_per_sm, 0);
  EXPECT_EQ(unknown.fp64_lanes_per_sm, 0);
  EXPECT_EQ(unknown.l1_bytes_per_sm, 0u);
}

TEST(GpuArch, MemoryPeakAndName) {
  // H100 SXM: 2619 MHz HBM3 on a 5120-bit bus -> 3352 GB/s (spec: 3350).
  EXPECT_NEAR(gpu_memory_peak_gbs(2619000, 5120), 3352.3, 0.1);
  // V100 SXM2: 877 MHz HBM2, 4096 bits -> 898 GB/s (spec: 900).
  EXPECT_NEAR(gpu_memory_peak_gbs(877000, 4096), 898.0, 0.1);
  EXPECT_EQ(gpu_memory_name(5120), "HBM");
  EXPECT_EQ(gpu_memory_name(384), "DRAM");
}

// ---- axis defaults ----------------------------------------------------------------------------
TEST(CudaProbeAxes, GeometricWorkingSetDefaults) {
  const std::vector<std::string> sizes = cuda::geometric_bytes(16 * 1024, 1ull << 30, 2, 1024);
  ASSERT_EQ(sizes.size(), 33u);  // 16 octaves x 2 + 1
  EXPECT_EQ(sizes.front(), "16384");
  EXPECT_EQ(sizes[1], "23552");  // 16 KiB x sqrt(2) = 23170 -> nearest multiple of 1 KiB
  EXPECT_EQ(sizes[2], "32768");
  EXPECT_EQ(sizes.back(), "1073741824");
  std::uint64_t previous = 0;
  for (const std::string& s : sizes) {
    const std::uint64_t v = std::stoull(s);
    EXPECT_EQ(v % 1024, 0u) << s;
    EXPECT_GT(v, previous) << s;
    previous = v;
  }
}

// ---- NVML throttle reasons --------------------------------------------------------------------
// Only the reasons that lower the clock are recorded: idle, application clocks, sync boost and
// display clocks describe a setting or an empty GPU, not a measurement slowed down.
TEST(ThrottleReasons, OnlyClockLoweringReasonsAreNamed) {
  EXPECT_EQ(cuda::throttle_text(0), "");
  EXPECT_EQ(cuda::throttle_text(0x1 | 0x2 | 0x10 | 0x100), "");
  EXPECT_EQ(cuda::throttle_text(0x4), "sw-power");
  EXPECT_EQ(cuda::throttle_text(0x4 | 0x40 | 0x2), "sw-power+hw-thermal");
  EXPECT_EQ(cuda::throttle_text(0x8 | 0x20 | 0x80), "hw-slowdown+sw-thermal+power-brake");
}

// ---- the CUDA probes declare what the CPU probes declare ------------------------------------
// The fitter and the plots treat both backends' samples alike only if the feeds and the shared
// axes are the same.
const Axis* find_axis(const ProbeInfo& info, const std::string& name) {
  for (const Axis& a : info.axes) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

void expect_same_declarations(const std::string& probe, const std::vector<std::string>& axes) {
  const Probe* gpu = Registry::instance().probe("cuda", probe);
  const Probe* cpu = Registry::instance().probe("cpu", probe);
  if (gpu == nullptr) GTEST_SKIP() << "the CUDA backend is not built";
  ASSERT_NE(cpu, nullptr);
  ASSERT_EQ(gpu->info().feeds.size(), cpu->info().feeds.size());
  for (std::size_t i = 0; i < gpu->info().feeds.size(); ++i) {
    const FeedSpec& g = gpu->info().feeds[i];
    const FeedSpec& c = cpu->info().feeds[i];
    EXPECT_EQ(g.kind, c.kind) << probe;
    EXPECT_EQ(g.metric, c.metric) << probe;
    EXPECT_EQ(g.x_axis, c.x_axis) << probe;
    EXPECT_EQ(g.name_pattern, c.name_pattern) << probe;
    // Series axes may differ: each backend's samples are fitted with its own feeds.
  }
  for (const std::string& name : axes) {
    const Axis* g = find_axis(gpu->info(), name);
    const Axis* c = find_axis(cpu->info(), name);
    ASSERT_NE(g, nullptr) << probe << "." << name;
    ASSERT_NE(c, nullptr) << probe << "." << name;
    EXPECT_EQ(g->type, c->type) << probe << "." << name;
    EXPECT_EQ(g->choices, c->choices) << probe << "." << name;
    EXPECT_EQ(g->defaults, c->defaults) << probe << "." << name;
  }
}

TEST(CudaProbeDeclarations, FlopsMatchesTheCpuProbe) {
  expect_same_declarations("flops", {"form", "flops_per_element"});
  const Probe* gpu = Registry::instance().probe("cuda", "flops");
  if (gpu == nullptr) return;
  // The GPU adds fp16/bf16/int32; every CPU precision exists on the GPU under the same name.
  const Axis* gp = find_axis(gpu->info(), "precision");
  const Axis* cp = find_axis(Registry::instance().probe("cpu", "flops")->info(), "precision");
  ASSERT_TRUE(gp != nullptr && cp != nullptr);
  for (const std::string& c : cp->choices)
    EXPECT_NE(std::find(gp->choices.begin(), gp->choices.end(), c), gp->choices.end()) << c;
  const Axis* ws = find_axis(gpu->info(), "working_set_bytes");
  ASSERT_NE(ws, nullptr);
  EXPECT_EQ(ws->type, AxisType::Bytes);
}

TEST(CudaProbeDeclarations, BandwidthMatchesTheCpuProbe) {
  expect_same_declarations("bandwidth", {});
  const Probe* gpu = Registry::instance().probe("cuda", "bandwidth");
  if (gpu == nullptr) return;
  // The modes both backends have are the same, in the same order; the CPU adds likwid-bench's
  // non-temporal store kernel (write_nt), which has no GPU counterpart (kernels/cuda/bandwidth/
  // probe.cu says why).
  const Axis* g = find_axis(gpu->info(), "mode");
  const Axis* c = find_axis(Registry::instance().probe("cpu", "bandwidth")->info(), "mode");
  ASSERT_NE(g, nullptr);
  ASSERT_NE(c, nullptr);
  const std::vector<std::string> shared = {"read", "rmw", "copy", "write"};
  EXPECT_EQ(g->choices, shared);
  EXPECT_EQ(g->defaults, shared);
  EXPECT_EQ(c->choices, (std::vector<std::string>{"read", "rmw", "copy", "write", "write_nt"}));
  EXPECT_EQ(c->defaults, c->choices);
  const Axis* ws = find_axis(gpu->info(), "working_set_bytes");
  ASSERT_NE(ws, nullptr);
  EXPECT_EQ(ws->type, AxisType::Bytes);
  EXPECT_EQ(ws->defaults.size(), 33u);
}

// A CUDA bandwidth sweep of one access kernel (`kernel`: "cache_op=cg;mode=read") from 1 MiB to
// 1 GiB, two sizes per octave, 5 samples each within 0.4% of rate_at(size), appended to `samples`.
template <class RateAt>
void append_cuda_bandwidth_curve(std::vector<Sample>& samples, int& point, const std::string& kernel, RateAt rate_at) {
  for (double w = 1 << 20; w <= (1u << 30); w *= std::sqrt(2.0), ++point)
    for (int i = 0; i < 5; ++i) {
      Sample s;
      s.backend = "cuda";
      s.probe = "bandwidth";
      s.point = point;
      s.sample = i;
      s.params = params_from_string(kernel + ";working_set_bytes=" + std::to_string(static_cast<long long>(w)));
      s.working_set_bytes = w;
      s.gbs = rate_at(w) * (1 + 0.002 * (i - 2));
      s.seconds = 0.01;
      s.bytes = s.gbs * 1e9 * s.seconds;
      samples.push_back(s);
    }
}

// A CUDA bandwidth sweep is fitted with the CUDA probe's feed, not the CPU probe's of the same
// name (the fitter once took any backend's: ca and cg mixed into one curve, an H100's L1 and
// L2 fitted as one 20 TB/s "L2"). H100-like curves: the ca read at L1 rate until the L1s
// (33.8 MB) and past them a mixture at 28 TB/s, the cg read and the copy at L2 rate until 50 MB,
// all at HBM rate beyond. Expected: L1 from the ca read, L2 from the cg read or copy (never the
// ca read's mixture), HBM; nearest first.
TEST(CudaProbeDeclarations, BandwidthSweepFitsWithTheCudaFeeds) {
  if (Registry::instance().probe("cuda", "bandwidth") == nullptr) GTEST_SKIP() << "the CUDA backend is not built";
  Machine machine;
  machine.device.backend = "cuda";
  machine.device.memory_name = "HBM";
  machine.device.caches = {{"L1", 256 * 1024, 132}, {"L2", 50u << 20, 1}};
  std::vector<Sample> samples;
  int point = 0;
  auto curve = [&](const std::string& kernel, auto rate_at) {
    append_cuda_bandwidth_curve(samples, point, kernel, rate_at);
  };
  auto step = [](double w, double fast, double knee, double slow) { return w < knee ? fast : slow; };
  curve("cache_op=ca;mode=read", [&](double w) { return w < 20e6 ? 32000.0 : step(w, 28000, 52e6, 3100); });
  curve("cache_op=cg;mode=read", [&](double w) { return step(w, 7500, 52e6, 3100); });
  curve("cache_op=ca;mode=copy", [&](double w) { return step(w, 7700, 52e6, 2840); });
  fit_samples(samples, machine);
  std::vector<std::string> names;
  for (const MemoryLevel& l : machine.memory) names.push_back(l.level);
  ASSERT_EQ(names, (std::vector<std::string>{"L1", "L2", "HBM"}));
  EXPECT_NEAR(machine.memory[0].gbs, 32000, 32000 * 0.05);
  EXPECT_EQ(machine.memory[0].headline_series, "cache_op=ca;mode=read");
  EXPECT_NEAR(machine.memory[1].gbs, 7700, 7700 * 0.05);  // not the ca read's 28000
  EXPECT_EQ(machine.memory[1].by_series.count("cache_op=ca;mode=read"), 0u);
  EXPECT_NEAR(machine.memory[2].gbs, 3100, 3100 * 0.05);
  EXPECT_EQ(machine.memory[1].capacity_note, "");  // its knee at 52 MB is the 50 MiB L2's
}

// An H200-like GPU (60 MiB of L2) fitted from one cg read: 11.2 TB/s below `fast_until` bytes,
// 8.8 from there to 64 MB, HBM's 4.55 beyond; its sizes from 1 MiB up, as the probe's.
Machine h200_like_cg_read(double fast_until) {
  Machine machine;
  machine.device.backend = "cuda";
  machine.device.memory_name = "HBM";
  machine.device.caches = {{"L1", 256 * 1024, 132}, {"L2", 60u << 20, 1}};
  machine.device.kind = "gpu";
  machine.device.name = "an H200-like GPU";
  std::vector<Sample> samples;
  int point = 0;
  append_cuda_bandwidth_curve(samples, point, "cache_op=cg;mode=read", [&](double w) {
    return w < fast_until ? 11200.0 : w < 64e6 ? 8800.0 : 4550.0;
  });
  fit_samples(samples, machine);
  return machine;
}

std::vector<MemoryLevel>::const_iterator level_named(const Machine& m, const std::string& name) {
  return std::find_if(m.memory.begin(), m.memory.end(), [&](const MemoryLevel& l) { return l.level == name; });
}

// A cg read at 11.2 TB/s from 1 to 5.7 MiB and 8.8 from there to the 60 MiB L2: its L2 level
// ends at a knee near 7 MB, 9x below the cache the device reports. The machine file says so
// beside the capacity.
TEST(CudaProbeDeclarations, BandwidthL2KneeFarBelowTheCacheIsExplained) {
  if (Registry::instance().probe("cuda", "bandwidth") == nullptr) GTEST_SKIP() << "the CUDA backend is not built";
  const Machine machine = h200_like_cg_read(6.5e6);
  const auto l2 = level_named(machine, "L2");
  ASSERT_NE(l2, machine.memory.end());
  EXPECT_NEAR(l2->gbs, 11200, 11200 * 0.05);
  EXPECT_NE(l2->capacity_note.find("below the 60 MiB the device reports for L2"), std::string::npos)
      << l2->capacity_note;
  // The summary prints it under the levels.
  std::ostringstream summary;
  print_summary(summary, machine, "dir");
  EXPECT_NE(summary.str().find("  L2: the knee at "), std::string::npos) << summary.str();
  // The note survives the machine file.
  const Machine back = read_machine_text(machine_to_yaml(machine), "round trip");
  ASSERT_GT(back.memory.size(), 0u);
  EXPECT_EQ(std::find_if(back.memory.begin(), back.memory.end(), [](const MemoryLevel& l) { return l.level == "L2"; })
                ->capacity_note,
            l2->capacity_note);
}

// An H200's cg read ran at 11.2 TB/s on its 1 MiB set alone (its smaller sets were underfilled
// and left out) and at 8.5-10.8 from 2 MiB to the 60 MiB L2. One size is not a plateau: L2 is
// the level its sizes locate, and the one size is named under missing: with an interval that
// holds it.
TEST(CudaProbeDeclarations, BandwidthFirstSizeAloneIsNamedNotPublished) {
  if (Registry::instance().probe("cuda", "bandwidth") == nullptr) GTEST_SKIP() << "the CUDA backend is not built";
  const Machine machine = h200_like_cg_read(1.2e6);
  const auto l2 = level_named(machine, "L2");
  ASSERT_NE(l2, machine.memory.end());
  EXPECT_NEAR(l2->gbs, 8800, 8800 * 0.02);
  EXPECT_EQ(l2->capacity_note, "");  // its knee is the 60 MiB L2's
  const auto note = std::find_if(machine.missing.begin(), machine.missing.end(), [](const std::string& n) {
    return n.find("the first level of the curve") != std::string::npos;
  });
  ASSERT_NE(note, machine.missing.end()) << ::testing::PrintToString(machine.missing);
  std::smatch ci;
  ASSERT_TRUE(std::regex_search(*note, ci, std::regex("95% CI ([0-9.]+) - ([0-9.]+)"))) << *note;
  EXPECT_LE(std::stod(ci[1]), 11200);
  EXPECT_GE(std::stod(ci[2]), 11200);
}

// The CUDA-only axes of the bandwidth probe and their defaults (the default run: 4 modes x
// ca/cg and 3 writing modes x cs/cs_chunk, x 33 sizes = 462 points; a cs or cs_chunk read does
// not exist and is not planned).
TEST(CudaProbeDeclarations, BandwidthAxesAndDefaults) {
  const Probe* gpu = Registry::instance().probe("cuda", "bandwidth");
  if (gpu == nullptr) GTEST_SKIP() << "the CUDA backend is not built";
  const Axis* width = find_axis(gpu->info(), "load_width");
  ASSERT_NE(width, nullptr);
  EXPECT_EQ(width->type, AxisType::Choice);
  EXPECT_EQ(width->choices, (std::vector<std::string>{"32", "64", "128"}));
  EXPECT_EQ(width->defaults, (std::vector<std::string>{"128"}));
  const Axis* cache = find_axis(gpu->info(), "cache_op");
  ASSERT_NE(cache, nullptr);
  EXPECT_EQ(cache->choices, (std::vector<std::string>{"ca", "cg", "cs", "cs_chunk"}));
  EXPECT_EQ(cache->defaults, (std::vector<std::string>{"ca", "cg", "cs", "cs_chunk"}));
  const Axis* blocks = find_axis(gpu->info(), "blocks_per_sm");
  ASSERT_NE(blocks, nullptr);
  EXPECT_EQ(blocks->type, AxisType::Integer);
  EXPECT_EQ(blocks->defaults, (std::vector<std::string>{"0"}));
  const Axis* threads = find_axis(gpu->info(), "threads_per_block");
  ASSERT_NE(threads, nullptr);
  EXPECT_EQ(threads->type, AxisType::Integer);
  EXPECT_EQ(threads->min, 32);
  EXPECT_EQ(threads->max, 1024);
  EXPECT_EQ(threads->defaults, (std::vector<std::string>{"256"}));
  std::size_t others = 1;  // every default axis but mode and cache_op
  for (const Axis& a : gpu->info().axes)
    if (a.name != "mode" && a.name != "cache_op") others *= a.defaults.size();
  const Axis* mode = find_axis(gpu->info(), "mode");
  ASSERT_NE(mode, nullptr);
  std::size_t points = 0;
  for (const std::string& m : mode->defaults)
    for (const std::string& c : cache->defaults)
      if (gpu->exists_on(Params{{"mode", m}, {"cache_op", c}}, DeviceInfo{})) points += others;
  EXPECT_EQ(points, 462u);
  EXPECT_FALSE(gpu->exists_on(Params{{"mode", "read"}, {"cache_op", "cs"}}, DeviceInfo{}));
  EXPECT_NE(gpu->unsupported_reason(Params{{"mode", "read"}, {"cache_op", "cs_chunk"}, {"working_set_bytes", "65536"}},
                                    DeviceInfo{})
                .find("store streams"),
            std::string::npos);
  // A block size that is not whole warps is refused before anything runs, with the reason.
  const Params odd{{"mode", "read"},       {"cache_op", "cg"},           {"load_width", "64"},
                   {"blocks_per_sm", "0"}, {"threads_per_block", "100"}, {"working_set_bytes", "65536"}};
  EXPECT_NE(gpu->unsupported_reason(odd, DeviceInfo{}).find("multiple of 32"), std::string::npos);
  EXPECT_THROW(gpu->prepare(odd, DeviceInfo{}), std::invalid_argument);
}

}  // namespace
}  // namespace roofprobe

// NVML's list contract (nvmlDeviceGetComputeRunningProcesses): room in, entries written or
// entries needed out. A device with `running` processes, `starting` more before each next call.
struct NvmlProcessTable {
  unsigned int running = 0, starting = 0;
  int calls = 0;
  int operator()(unsigned int* count, unsigned int* pids) {
    ++calls;
    const unsigned int room = *count;
    *count = running;
    if (running > room) {
      running += starting;
      return roofprobe::cuda::kNvmlInsufficientSize;
    }
    for (unsigned int i = 0; i < running; ++i) pids[i] = 1000 + i;
    return roofprobe::cuda::kNvmlSuccess;
  }
};

TEST(NvmlProcessList, ReadsEveryProcessPastTheFirstBuffer) {
  using roofprobe::cuda::read_nvml_list;
  NvmlProcessTable few{3, 0};
  const auto short_list = read_nvml_list<unsigned int>(few);
  ASSERT_TRUE(short_list.complete);
  EXPECT_EQ(short_list.entries, (std::vector<unsigned int>{1000, 1001, 1002}));
  EXPECT_EQ(few.calls, 1);

  NvmlProcessTable many{200, 0};  // more than the first buffer holds
  const auto long_list = read_nvml_list<unsigned int>(many);
  ASSERT_TRUE(long_list.complete);
  ASSERT_EQ(long_list.entries.size(), 200u);
  EXPECT_EQ(long_list.entries.back(), 1199u);
  EXPECT_EQ(many.calls, 2);

  NvmlProcessTable growing{100, 10};  // processes start between the calls
  const auto grown = read_nvml_list<unsigned int>(growing);
  ASSERT_TRUE(grown.complete);
  EXPECT_EQ(grown.entries.size(), 110u);
}

TEST(NvmlProcessList, AnUnreadableListIsUnknownAndAnEndlessOneIsUse) {
  using roofprobe::cuda::read_nvml_list;
  const auto refused = read_nvml_list<unsigned int>([](unsigned int*, unsigned int*) { return 3; });  // not supported
  EXPECT_FALSE(refused.complete);
  EXPECT_FALSE(refused.outgrew);
  EXPECT_TRUE(refused.entries.empty());
  // Each call finds the list ten times longer than the room it was given.
  const auto endless = read_nvml_list<unsigned int>([](unsigned int* count, unsigned int*) {
    *count *= 10;
    return roofprobe::cuda::kNvmlInsufficientSize;
  });
  EXPECT_FALSE(endless.complete);
  EXPECT_TRUE(endless.outgrew);
}
