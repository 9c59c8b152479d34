// GPU tests of the bandwidth probe's load_width, cache_op and occupancy axes: every width x
// cache_op point verifies (the read checksum, rmw/copy/write word by word) and stays below the bound of
// the level it lands in at the measured clock. Skipped, with the backend's reason, without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <tuple>

#include "kernels/contract/probe.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace roofprobe {
namespace {

using gpu_test::CudaProbeTest;
using gpu_test::device;
using gpu_test::kTolerance;

Params stream_params(const std::string& mode, const std::string& cache, const std::string& width,
                     std::uint64_t working_set, int blocks_per_sm = 0, int threads = 256) {
  return Params{{"mode", mode},
                {"cache_op", cache},
                {"load_width", width},
                {"blocks_per_sm", std::to_string(blocks_per_sm)},
                {"threads_per_block", std::to_string(threads)},
                {"working_set_bytes", std::to_string(working_set)}};
}

// Loads served by L1 at most: 128 B/clk/SM at the measured clock (nothing on chip reads faster).
double l1_load_bound_gbs() {
  const DeviceInfo& d = device();
  return d.compute_units * 128.0 * d.clock_measured_mhz * 1e-3;
}

double dram_peak_gbs() { return std::stod(device().extra.at("memory_peak_gbs")); }

// At least 4x L2 and 256 MiB: DRAM-bound whatever the caching.
std::uint64_t dram_working_set() { return std::max<std::uint64_t>(256u << 20, 4 * device().caches[1].bytes); }

using WidthCache = std::tuple<const char*, const char*>;  // load_width, cache_op

class CudaBandwidthAxesTest : public CudaProbeTest, public ::testing::WithParamInterface<WidthCache> {};

// 4 MiB: L1 (ca) or L2 (cg) on every reference GPU; neither may beat the L1 load bound.
TEST_P(CudaBandwidthAxesTest, ReadOnChipVerifiesAndStaysBelowL1) {
  const auto [width, cache] = GetParam();
  Work work;
  const double s = best_seconds("bandwidth", stream_params("read", cache, width, 4u << 20), 3, &work);
  const double gbs = rates_of(work, s).gbs;
  std::printf("read %s %s-bit 4 MiB: %.1f GB/s, %.2f GTXN/s (L1 load bound %.1f)\n", cache, width, gbs,
              rates_of(work, s).gtxn_s, l1_load_bound_gbs());
  EXPECT_DOUBLE_EQ(work.transactions, work.bytes() / 32) << "coalesced: 32 bytes per sector";
  EXPECT_LE(gbs, l1_load_bound_gbs() * kTolerance);
}

// 4x L2: DRAM-bound, below the DRAM's theoretical bandwidth.
TEST_P(CudaBandwidthAxesTest, ReadBeyondL2VerifiesAndStaysBelowDram) {
  const auto [width, cache] = GetParam();
  const std::uint64_t ws = dram_working_set();
  if (ws > device().memory_bytes / 2) GTEST_SKIP() << "device memory too small for " << ws;
  Work work;
  const double s = best_seconds("bandwidth", stream_params("read", cache, width, ws), 3, &work);
  const double gbs = rates_of(work, s).gbs;
  std::printf("read %s %s-bit %llu MiB: %.1f GB/s of %.1f theoretical (%.1f%%)\n", cache, width,
              static_cast<unsigned long long>(ws >> 20), gbs, dram_peak_gbs(), 100 * gbs / dram_peak_gbs());
  EXPECT_LE(gbs, dram_peak_gbs() * kTolerance) << "faster than the DRAM's theoretical bandwidth";
}

INSTANTIATE_TEST_SUITE_P(Axes, CudaBandwidthAxesTest,
                         ::testing::Combine(::testing::Values("32", "64", "128"), ::testing::Values("ca", "cg")),
                         [](const ::testing::TestParamInfo<WidthCache>& i) {
                           return std::string("w") + std::get<0>(i.param) + "_" + std::get<1>(i.param);
                         });

class CudaBandwidthPointsTest : public CudaProbeTest {};

// The store-only kernel: on chip (every store goes to L2) below the L1 bound for both cache
// operators, and the cg write past L2 below the DRAM's theoretical bandwidth (the ca write there
// is CudaBandwidthTest's Modes/write, with its lower bound too).
TEST_F(CudaBandwidthPointsTest, WriteVerifiesAndStaysBelowItsBounds) {
  // 4 MiB: wrapped (4 stores per thread and pass) on a full grid of every reference GPU.
  for (const char* cache : {"ca", "cg", "cs", "cs_chunk"}) {
    Work work;
    const double s = best_seconds("bandwidth", stream_params("write", cache, "128", 4u << 20), 3, &work);
    EXPECT_DOUBLE_EQ(work.bytes_read, 0) << cache;
    EXPECT_DOUBLE_EQ(work.transactions, work.bytes() / 32) << "coalesced: 32 bytes per sector";
    const double gbs = rates_of(work, s).gbs;
    std::printf("write %s 128-bit 4 MiB: %.1f GB/s\n", cache, gbs);
    EXPECT_LE(gbs, l1_load_bound_gbs() * kTolerance) << cache;
  }
  const std::uint64_t dram = dram_working_set();
  if (dram > device().memory_bytes / 2) GTEST_SKIP() << "device memory too small for " << dram;
  for (const char* mode : {"write", "copy"}) {
    for (const char* cache : {"cg", "cs", "cs_chunk"}) {
      Work work;
      const double s = best_seconds("bandwidth", stream_params(mode, cache, "128", dram), 3, &work);
      const double gbs = rates_of(work, s).gbs;
      std::printf("%s %s 128-bit %llu MiB: %.1f GB/s of %.1f theoretical (%.1f%%)\n", mode, cache,
                  static_cast<unsigned long long>(dram >> 20), gbs, dram_peak_gbs(), 100 * gbs / dram_peak_gbs());
      EXPECT_LE(gbs, dram_peak_gbs() * kTolerance) << mode << " " << cache << ": faster than the DRAM's peak";
    }
  }
}

// rmw, copy and write under cg, cs and cs_chunk rotate the block assignment between launches
// (best_seconds launches three times): every word must still have been updated exactly once per
// pass (write: hold what the last pass stored, also where the 1 MiB write wraps). The ragged size
// (not a multiple of 32 bytes, nor of a block's elements) exercises the tails, 48 MiB the rmw
// and copy batches with several rows per thread.
TEST_F(CudaBandwidthPointsTest, WritingModesVerifyUnderRotation) {
  for (const char* cache : {"cg", "cs", "cs_chunk"}) {
    for (const char* mode : {"rmw", "copy", "write"}) {
      for (const char* width : {"32", "64", "128"}) {
        for (std::uint64_t ws : {std::uint64_t{1} << 20, std::uint64_t{1000004}, std::uint64_t{48} << 20}) {
          Work work;
          best_seconds("bandwidth", stream_params(mode, cache, width, ws), 3, &work);
          EXPECT_GT(work.bytes_written, 0) << mode << " " << cache << " " << width;
        }
      }
    }
  }
}

// cs and cs_chunk are store streams: the read has no such kernel, and says so.
TEST_F(CudaBandwidthPointsTest, ReadHasNoStreamingStoreKernel) {
  const Probe* probe = Registry::instance().probe("cuda", "bandwidth");
  ASSERT_NE(probe, nullptr);
  for (const char* cache : {"cs", "cs_chunk"}) {
    const Params p = stream_params("read", cache, "128", 1u << 20);
    EXPECT_FALSE(probe->exists_on(p, device())) << cache;
    EXPECT_NE(probe->unsupported_reason(p, device()).find("store"), std::string::npos) << cache;
    EXPECT_TRUE(probe->exists_on(stream_params("copy", cache, "128", 1u << 20), device())) << cache;
  }
}

// Occupancy axes: one big block per SM, many small ones, and the cg rotation across few blocks.
TEST_F(CudaBandwidthPointsTest, OccupancyPointsVerify) {
  const std::uint64_t ws = 8u << 20;
  for (const char* cache : {"ca", "cg"}) {
    Work work;
    best_seconds("bandwidth", stream_params("read", cache, "128", ws, 1, 1024), 3, &work);
    best_seconds("bandwidth", stream_params("read", cache, "32", ws, 2, 64), 3, &work);
    best_seconds("bandwidth", stream_params("rmw", cache, "64", ws, 1, 32), 3, &work);
  }
}

// More blocks per SM than the occupancy API allows is refused with a reason, never run.
TEST_F(CudaBandwidthPointsTest, OverSubscribedBlocksPerSmIsUnsupported) {
  const Probe* probe = Registry::instance().probe("cuda", "bandwidth");
  ASSERT_NE(probe, nullptr);
  const std::string why = probe->unsupported_reason(stream_params("read", "ca", "128", 1u << 20, 32, 1024), device());
  EXPECT_NE(why.find("occupancy"), std::string::npos) << why;
  EXPECT_EQ(probe->unsupported_reason(stream_params("read", "cg", "64", 1u << 20, 1, 256), device()), "");
}

}  // namespace
}  // namespace roofprobe
