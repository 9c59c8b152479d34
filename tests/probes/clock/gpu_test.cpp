// GPU tests of the "clock" probe: both loads verify (every block spun the declared cycles, the
// FFMA chains ended where the host predicts) and the derived clock, declared cycles / measured
// seconds, is plausible. Skipped without a CUDA device.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "kernels/contract/probe.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace roofprobe {
namespace {

using gpu_test::CudaProbeTest;
using gpu_test::device;

class CudaClockTest : public CudaProbeTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(CudaClockTest, VerifiesAndGivesAPlausibleClock) {
  const Params params{{"load", GetParam()}};
  Work work;
  const double s = best_seconds("clock", params, 3, &work);
  ASSERT_GT(work.clock_cycles, 0) << "a clock probe declares the cycles it spins";
  const double mhz = work.clock_cycles / s / 1e6;
  const DeviceInfo& d = device();
  std::printf("clock %s: %.0f MHz (%.0f cycles in %.3f ms); backend measured %.0f, max %.0f\n", GetParam(), mhz,
              work.clock_cycles, s * 1e3, d.clock_measured_mhz, d.clock_max_mhz);
  EXPECT_GT(mhz, 100);
  // Consumer boards boost past the rated clock (see DescribesTheDevice), hence 1.3x.
  if (d.clock_max_mhz > 0) EXPECT_LT(mhz, d.clock_max_mhz * 1.3);
}

INSTANTIATE_TEST_SUITE_P(Loads, CudaClockTest, ::testing::Values("idle", "fp32_fma"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
}  // namespace roofprobe
