// GPU tests of the CUDA global-stride probe ("stride"): points of every stride verify (the sum of
// every loaded word is what the host predicts), their load instruction rate stays below the warp
// issue peak (SMs x schedulers x clock), and scattered requests (stride 32: 32 sectors each) move
// fewer sectors per second than coalesced ones (unit stride). Skipped without a usable CUDA
// device.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "kernels/contract/probe.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace roofprobe {
namespace {

using gpu_test::CudaProbeTest;
using gpu_test::device;
using gpu_test::kTolerance;

class StrideProbeTest : public CudaProbeTest {
 public:
  using CudaProbeTest::best_seconds;
};

struct StrideRate {
  double gtxn_s = 0;
  double gips = 0;
};

StrideRate run_stride(const std::string& stride, const std::string& word_bytes) {
  const Params params{{"stride", stride}, {"word_bytes", word_bytes}, {"working_set_bytes", std::to_string(4u << 20)}};
  Work work;
  const double s = StrideProbeTest::best_seconds("stride", params, 3, &work);
  StrideRate r;
  if (s <= 0) return r;
  r.gtxn_s = rates_of(work, s).gtxn_s;
  r.gips = rates_of(work, s).gips;
  std::printf(
      "stride=%s word_bytes=%s: %.1f GTXN/s (%.1f GB/s), %.1f load GIPS, %.2f sectors "
      "per request, launch %.3f ms\n",
      stride.c_str(), word_bytes.c_str(), r.gtxn_s, per_second_1e9(work.bytes_read, s), r.gips,
      work.transactions / work.warp_instructions, s * 1e3);
  return r;
}

struct StrideCase {
  const char* stride;
  const char* word_bytes;
};

class CudaStrideTest : public StrideProbeTest, public ::testing::WithParamInterface<StrideCase> {};

TEST_P(CudaStrideTest, VerifiesAndStaysBelowTheIssuePeak) {
  const DeviceInfo& d = device();
  const StrideRate r = run_stride(GetParam().stride, GetParam().word_bytes);
  EXPECT_GT(r.gtxn_s, 0);
  auto schedulers = d.extra.find("schedulers_per_sm");
  if (schedulers == d.extra.end()) GTEST_SKIP() << "schedulers per SM unknown on this device";
  const double issue_gips = d.compute_units * std::stod(schedulers->second) * d.clock_measured_mhz * 1e-3;
  EXPECT_LE(r.gips, issue_gips * kTolerance) << "more load instructions than the SMs can issue";
}

INSTANTIATE_TEST_SUITE_P(Points, CudaStrideTest,
                         ::testing::Values(StrideCase{"0", "4"}, StrideCase{"1", "4"}, StrideCase{"2", "4"},
                                           StrideCase{"8", "4"}, StrideCase{"32", "4"}, StrideCase{"0", "8"},
                                           StrideCase{"1", "8"}, StrideCase{"4", "8"}, StrideCase{"32", "8"}),
                         [](const ::testing::TestParamInfo<StrideCase>& i) {
                           return std::string("stride") + i.param.stride + "_w" + i.param.word_bytes;
                         });

class CudaStrideOrderTest : public StrideProbeTest {};

TEST_F(CudaStrideOrderTest, ScatteredRequestsMoveFewerSectorsPerSecondThanCoalesced) {
  for (const char* word_bytes : {"4", "8"}) {
    const StrideRate coalesced = run_stride("1", word_bytes);
    const StrideRate scattered = run_stride("32", word_bytes);
    EXPECT_LT(scattered.gtxn_s, coalesced.gtxn_s) << word_bytes << "-byte words";
  }
}

}  // namespace
}  // namespace roofprobe
