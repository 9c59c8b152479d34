// GPU tests of the fma_mix probe: each point verifies (sampled values as the host's exact
// arithmetic predicts them) and its GFLOP/s stay below the FMA-mix ceiling
// fma_peak x (1 + a) / 2 at the measured clock, within the clock tolerance. Skips without a CUDA
// device; bf16 points skip on devices older than sm_80 (the probe says why).
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

struct MixCase {
  const char* precision;
  const char* fraction;
  const char* ceiling;
};

void PrintTo(const MixCase& c, std::ostream* os) { *os << c.ceiling; }

class CudaFmaMixTest : public CudaProbeTest, public ::testing::WithParamInterface<MixCase> {};

TEST_P(CudaFmaMixTest, VerifiesAndStaysBelowTheMixCeiling) {
  const MixCase& c = GetParam();
  const Params params{{"precision", c.precision}, {"fma_fraction", c.fraction}};
  const Probe* probe = Registry::instance().probe("cuda", "fma_mix");
  ASSERT_NE(probe, nullptr);
  const std::string why = probe->unsupported_reason(params, device());
  if (!why.empty()) GTEST_SKIP() << why;
  Work work;
  const double s = best_seconds("fma_mix", params, 3, &work);
  const double gflops = rates_of(work, s).gflops;
  const auto peak = device().theoretical_gflops.find(c.ceiling);
  if (peak == device().theoretical_gflops.end())
    GTEST_SKIP() << "no theoretical " << c.ceiling << " for this compute capability";
  std::printf("%s: %.1f GFLOP/s of %.1f theoretical (%.1f%%), launch %.3f ms\n", c.ceiling, gflops, peak->second,
              100 * gflops / peak->second, s * 1e3);
  EXPECT_LE(gflops, peak->second * kTolerance) << "faster than the theoretical ceiling";
  EXPECT_GE(gflops, peak->second * 0.3) << "far below the theoretical ceiling";
}

INSTANTIATE_TEST_SUITE_P(Points, CudaFmaMixTest,
                         ::testing::Values(MixCase{"fp64", "0.5", "FP64.MIX0.5"}, MixCase{"fp64", "0", "FP64.MIX0"},
                                           MixCase{"fp32", "1", "FP32.MIX1"}, MixCase{"fp32", "0.25", "FP32.MIX0.25"},
                                           MixCase{"fp16", "0.75", "FP16.MIX0.75"},
                                           MixCase{"bf16", "0.5", "BF16.MIX0.5"}),
                         [](const ::testing::TestParamInfo<MixCase>& i) {
                           std::string name = std::string(i.param.precision) + "_a" + i.param.fraction;
                           for (char& ch : name)
                             if (ch == '.') ch = '_';
                           return name;
                         });

}  // namespace
}  // namespace roofprobe
