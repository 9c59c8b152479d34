// Host tests of the scaling probe's work split and accounting (kernels/cuda/scaling/model.hpp):
// items tile the working set exactly once per pass with coalesced warps, launch-wide items map
// back onto their pass, the declared bytes and FLOPs, the checksums the host predicts, and the
// choice of k SMs from the SM ids a census found.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "kernels/cuda/scaling/model.hpp"
#include "kernels/cuda/backend/stream_pattern.hpp"

namespace roofprobe {
namespace {

TEST(ScalingWork, ParsesKernelsAndRejectsOthers) {
  EXPECT_EQ(parse_scaling_kernel("memory_read"), ScalingKernel::MemoryRead);
  EXPECT_EQ(parse_scaling_kernel("fp64_fma"), ScalingKernel::Fp64Fma);
  EXPECT_THROW(parse_scaling_kernel("fp32_fma"), std::invalid_argument);
}

TEST(ScalingWork, ItemsTileTheWorkingSetExactlyOncePerPass) {
  const std::size_t n = 3 * kScalingItemElements;
  const std::uint32_t per_pass = scaling_items_per_pass(ScalingKernel::MemoryRead, n);
  ASSERT_EQ(per_pass, 3u);
  std::vector<int> touched(n, 0);
  const std::int64_t reps = 2;
  for (std::uint64_t item = 0; item < per_pass * static_cast<std::uint64_t>(reps); ++item) {
    const std::uint32_t in_pass = scaling_item_in_pass(item, per_pass);
    for (int l = 0; l < kScalingLoadsPerThread; ++l)
      for (int t = 0; t < kScalingBlock; ++t) {
        const std::size_t e = scaling_item_element(in_pass, l, t);
        ASSERT_LT(e, n);
        ++touched[e];
      }
  }
  for (std::size_t e = 0; e < n; ++e) ASSERT_EQ(touched[e], reps) << "element " << e;
}

TEST(ScalingWork, EveryWarpLoadCoversSixteenWholeSectors) {
  // 32 lanes x 16 bytes = 512 contiguous bytes = 16 sectors of 32 bytes: no partial sector.
  for (std::uint32_t item : {0u, 1u, 777u})
    for (int l = 0; l < kScalingLoadsPerThread; ++l)
      for (int warp = 0; warp < kScalingBlock / 32; ++warp) {
        std::uint64_t addresses[32];
        for (int lane = 0; lane < 32; ++lane)
          addresses[lane] = scaling_item_element(item, l, warp * 32 + lane) * kScalingElementBytes;
        EXPECT_EQ(sectors_per_warp_request(addresses, 32, 16), 16);
      }
}

TEST(ScalingWork, LaunchItemsMapOntoTheirPass) {
  EXPECT_EQ(scaling_item_in_pass(0, 1024), 0u);
  EXPECT_EQ(scaling_item_in_pass(1023, 1024), 1023u);
  EXPECT_EQ(scaling_item_in_pass(1024, 1024), 0u);
  EXPECT_EQ(scaling_item_in_pass((std::uint64_t{1} << 40) + 5, 16384), 5u);
  EXPECT_EQ(scaling_items_per_pass(ScalingKernel::Fp64Fma, 0), kScalingFmaItemsPerPass);
}

TEST(ScalingWork, WorkingSetIsHbmSizedAndFitsTheDevice) {
  const std::uint64_t GiB = std::uint64_t{1} << 30, MiB = std::uint64_t{1} << 20;
  EXPECT_EQ(scaling_working_set_bytes(50 * MiB, 80 * GiB), GiB);                   // H100: 1 GiB > 4x L2
  EXPECT_EQ(scaling_working_set_bytes(512 * MiB, 80 * GiB), 2 * GiB);              // a huge L2: 4x it
  EXPECT_EQ(scaling_working_set_bytes(4 * MiB, GiB), 512 * MiB);                   // small card: half
  EXPECT_EQ(scaling_working_set_bytes(4 * MiB, GiB + 3) % kScalingItemBytes, 0u);  // whole items
  EXPECT_EQ(scaling_elements(GiB), GiB / 16);
  EXPECT_EQ(scaling_elements(kScalingItemBytes - 1), 0u);
  EXPECT_EQ(scaling_elements(kScalingItemBytes + 100), kScalingItemElements);
}

TEST(ScalingWork, DeclaresTheBytesAndFlopsTheKernelsDo) {
  const std::size_t n = scaling_elements(std::uint64_t{1} << 30);
  const ScalingWork read = scaling_work_per_launch(ScalingKernel::MemoryRead, n, 3);
  EXPECT_DOUBLE_EQ(read.bytes_read, 3.0 * (1u << 30));
  EXPECT_DOUBLE_EQ(read.transactions, 3.0 * (1u << 30) / 32);
  EXPECT_DOUBLE_EQ(read.flops, 0);
  // 256 threads x 8 chains x 128 steps x 2 FLOPs per item, 1024 items per pass.
  EXPECT_DOUBLE_EQ(scaling_fma_flops_per_item(), 524288.0);
  const ScalingWork fma = scaling_work_per_launch(ScalingKernel::Fp64Fma, 0, 5);
  EXPECT_DOUBLE_EQ(fma.flops, 5.0 * 1024 * 524288.0);
  EXPECT_DOUBLE_EQ(fma.bytes_read, 0);
}

TEST(ScalingWork, FmaChainsStayExactAndTheirChecksumIsClosedForm) {
  // Simulate two threads that ran 3 and 2 items: x - x0 = items x steps x (j + 1), exactly.
  std::uint64_t sum = 0;
  const int items_of[2] = {3, 2};
  for (int t = 0; t < 2; ++t)
    for (int j = 0; j < kScalingFmaChains; ++j) {
      const double x0 = scaling_fma_start(static_cast<std::uint64_t>(t) + 1000, j);
      EXPECT_GE(x0, 0);
      EXPECT_LT(x0, 65536);
      EXPECT_EQ(x0, static_cast<double>(static_cast<long long>(x0)));  // an integer
      double x = x0;
      for (int i = 0; i < items_of[t] * kScalingFmaSteps; ++i) x = x * 1.0 + scaling_fma_step(j);
      sum += static_cast<std::uint64_t>(static_cast<long long>(x - x0));
    }
  // Per thread-item: steps x (1 + 2 + ... + 8) = 128 x 36.
  EXPECT_EQ(sum, 5u * 128u * 36u);
  // A whole item runs on 256 threads.
  EXPECT_EQ(scaling_fma_checksum(1), 256u * 128u * 36u);
  EXPECT_EQ(scaling_fma_checksum(7), 7 * scaling_fma_checksum(1));
}

TEST(ScalingWork, ReadChecksumIsPassesTimesTheWordSum) {
  const std::size_t n = kScalingItemElements;
  std::uint32_t one_pass = 0;
  for (std::size_t e = 0; e < n; ++e)
    for (int w = 0; w < 4; ++w) one_pass += stream_initial_word(e, w);
  EXPECT_EQ(scaling_read_checksum(n, 1), one_pass);
  EXPECT_EQ(scaling_read_checksum(n, 3), 3u * one_pass);
}

TEST(ScalingWork, PicksExactlyKSmIdsEvenWhenIdsHaveGaps) {
  EXPECT_EQ(scaling_active_sms(0, 132), 132);
  EXPECT_EQ(scaling_active_sms(8, 132), 8);
  EXPECT_EQ(scaling_active_sms(200, 132), 132);
  // Contiguous ids 0..131: k SMs = ids below k.
  std::vector<std::uint32_t> ids;
  for (std::uint32_t i = 0; i < 132; ++i) ids.push_back(i);
  EXPECT_EQ(scaling_smid_limit(ids, 1), 1u);
  EXPECT_EQ(scaling_smid_limit(ids, 64), 64u);
  EXPECT_EQ(scaling_smid_limit(ids, 0), 0xFFFFFFFFu);    // all
  EXPECT_EQ(scaling_smid_limit(ids, 132), 0xFFFFFFFFu);  // all
  // Gaps and duplicates (the census sees each SM several times), unsorted.
  const std::vector<std::uint32_t> gappy{9, 2, 4, 4, 0, 9, 7};
  EXPECT_EQ(scaling_smid_limit(gappy, 1), 1u);  // {0}
  EXPECT_EQ(scaling_smid_limit(gappy, 2), 3u);  // {0, 2}
  EXPECT_EQ(scaling_smid_limit(gappy, 4), 8u);  // {0, 2, 4, 7}
  EXPECT_EQ(scaling_smid_limit(gappy, 5), 0xFFFFFFFFu);
  for (int k = 1; k < 5; ++k) {
    int below = 0;
    for (std::uint32_t id : {0u, 2u, 4u, 7u, 9u}) below += id < scaling_smid_limit(gappy, k);
    EXPECT_EQ(below, k) << "k=" << k;
  }
  EXPECT_THROW(scaling_smid_limit({}, 1), std::runtime_error);
}

}  // namespace
}  // namespace roofprobe
