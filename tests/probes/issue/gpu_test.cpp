// GPU tests of the issue probe: each point verifies (every thread's checksum as the host predicts
// it) and its warp GIPS stay below the issue peak, SMs x schedulers x measured clock
// (docs/ARCHITECTURE.md), within the clock tolerance. Skips without a CUDA device.
#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <string>

#include "kernels/contract/probe.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace roofprobe {
namespace {

using gpu_test::CudaProbeTest;
using gpu_test::device;
using gpu_test::kTolerance;

struct IssueCase {
  const char* stream;
  int active_lanes;
  int intensity;
  double min_fraction;  // of the issue peak; 0: no lower bound
};

void PrintTo(const IssueCase& c, std::ostream* os) {
  *os << c.stream << " lanes=" << c.active_lanes << " n=" << c.intensity;
}

class CudaIssueTest : public CudaProbeTest, public ::testing::WithParamInterface<IssueCase> {};

TEST_P(CudaIssueTest, VerifiesAndStaysBelowTheIssuePeak) {
  const IssueCase& c = GetParam();
  const DeviceInfo& d = device();
  const Params params{{"stream", c.stream},
                      {"active_lanes", std::to_string(c.active_lanes)},
                      {"instructions_per_transaction", std::to_string(c.intensity)}};
  Work work;
  const double s = best_seconds("issue", params, 3, &work);
  ASSERT_GT(work.warp_instructions, 0);
  const double gips = rates_of(work, s).gips;
  auto it = d.extra.find("schedulers_per_sm");
  const double schedulers = it != d.extra.end() ? std::stod(it->second) : 4.0;
  const double peak = d.compute_units * schedulers * d.clock_measured_mhz * 1e-3;
  std::printf("issue %s lanes=%d n=%d: %.1f warp GIPS of %.1f (%.1f%%), %.2f GTXN/s, launch %.3f ms\n", c.stream,
              c.active_lanes, c.intensity, gips, peak, 100 * gips / peak, rates_of(work, s).gtxn_s, s * 1e3);
  EXPECT_LE(gips, peak * kTolerance) << "faster than the issue peak";
  EXPECT_GE(gips, peak * c.min_fraction) << "far below the issue peak";
  if (c.intensity > 0) {
    // The declared intensity is what the accounting says (the epilogue store aside).
    EXPECT_NEAR(work.warp_instructions / work.transactions, c.intensity, 0.02 * c.intensity);
  }
}

INSTANTIATE_TEST_SUITE_P(Points, CudaIssueTest,
                         ::testing::Values(IssueCase{"fp32", 32, 0, 0.5}, IssueCase{"mixed", 32, 0, 0.5},
                                           IssueCase{"int32", 32, 0, 0.2}, IssueCase{"fp32", 1, 0, 0.5},
                                           IssueCase{"mixed", 8, 16, 0.0}, IssueCase{"fp32", 32, 1, 0.0},
                                           IssueCase{"int32", 16, 64, 0.0}),
                         [](const ::testing::TestParamInfo<IssueCase>& i) {
                           return std::string(i.param.stream) + "_lanes" + std::to_string(i.param.active_lanes) + "_n" +
                                  std::to_string(i.param.intensity);
                         });

}  // namespace
}  // namespace roofprobe
