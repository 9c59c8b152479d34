// GPU tests of the "system" probe (host <-> device link): every transfer verifies, and the h2d
// rate is plausible for a PCIe or NVLink-C2C link. Skipped without a CUDA device.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "kernels/contract/probe.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace roofprobe {
namespace {

using gpu_test::CudaProbeTest;

class CudaSystemTest : public CudaProbeTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(CudaSystemTest, VerifiesAndMovesAPlausibleRate) {
  const Params params{{"transfer", GetParam()}, {"bytes", std::to_string(64u << 20)}};
  Work work;
  const double s = best_seconds("system", params, 3, &work);
  const double gbs = rates_of(work, s).gbs;
  std::printf("system %s 64 MiB: %.1f GB/s, launch %.3f ms\n", GetParam(), gbs, s * 1e3);
  EXPECT_DOUBLE_EQ(work.bytes(), work.transactions * 32);
  // Sanity bounds of a host link: PCIe 3 x8 moves ~6 GB/s, NVLink-C2C at most 450 GB/s per
  // direction; anything past 1000 GB/s is device memory being timed instead of the link.
  EXPECT_GT(gbs, 1.0);
  EXPECT_LT(gbs, 1000.0);
}

INSTANTIATE_TEST_SUITE_P(Transfers, CudaSystemTest, ::testing::Values("h2d", "d2h", "mapped_read", "mapped_write"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

class CudaSystemDefaultTest : public CudaProbeTest {};

// The default size (256 MiB pinned) must be allocatable and give the same kind of figure.
TEST_F(CudaSystemDefaultTest, H2dVerifies) {
  const Params params{{"transfer", "h2d"}, {"bytes", "268435456"}};
  Work work;
  const double s = best_seconds("system", params, 2, &work);
  const double gbs = rates_of(work, s).gbs;
  std::printf("system h2d 256 MiB: %.1f GB/s\n", gbs);
  EXPECT_DOUBLE_EQ(work.bytes_read, static_cast<double>(work.bytes()));
  EXPECT_GT(gbs, 1.0);
  EXPECT_LT(gbs, 1000.0);
}

}  // namespace
}  // namespace roofprobe
