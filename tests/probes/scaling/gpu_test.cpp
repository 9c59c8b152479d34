// GPU tests of the "scaling" probe: the work restricted to k SMs verifies (checksum, every item
// exactly once, exactly the k SMs chosen ran blocks), no point beats its share of the
// theoretical peak, and all SMs beat one. Skipped without a CUDA device.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "kernels/contract/probe.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace roofprobe {
namespace {

using gpu_test::CudaProbeTest;
using gpu_test::device;
using gpu_test::kTolerance;

class CudaScalingTest : public CudaProbeTest, public ::testing::WithParamInterface<const char*> {
 protected:
  // GB/s (memory_read) or GFLOP/s (fp64_fma) of the point on `sm_count` SMs (0: all).
  static double rate(const std::string& kernel, int sm_count) {
    const Params params{{"kernel", kernel}, {"sm_count", std::to_string(sm_count)}};
    Work work;
    const double s = best_seconds("scaling", params, 3, &work);
    const double r = kernel == "fp64_fma" ? rates_of(work, s).gflops : rates_of(work, s).gbs;
    std::printf("scaling %s sm_count=%d: %.1f %s, launch %.3f ms\n", kernel.c_str(), sm_count, r,
                kernel == "fp64_fma" ? "GFLOP/s" : "GB/s", s * 1e3);
    return r;
  }

  // The theoretical bound of `sms` of the device's SMs.
  static double bound(const std::string& kernel, int sms) {
    const DeviceInfo& d = device();
    if (kernel == "fp64_fma") {
      auto it = d.theoretical_gflops.find("FP64.FMA");
      return it == d.theoretical_gflops.end() ? 0 : it->second * sms / d.compute_units;
    }
    return std::stod(d.extra.at("memory_peak_gbs"));  // the DRAM's, whatever the SM count
  }
};

TEST_P(CudaScalingTest, AllSmsBeatOneAndNoPointBeatsItsPeak) {
  const std::string kernel = GetParam();
  const DeviceInfo& d = device();
  const double one = rate(kernel, 1);
  const int some_sms = std::min(8, d.compute_units);
  const double some = rate(kernel, some_sms);
  const double all = rate(kernel, 0);
  EXPECT_GT(all, one) << "all SMs no faster than one";
  EXPECT_GE(some, one * 0.9) << some_sms << " SMs slower than one";
  const double b1 = bound(kernel, 1), bs = bound(kernel, some_sms), ball = bound(kernel, d.compute_units);
  if (ball > 0) {
    EXPECT_LE(one, b1 * kTolerance) << "1 SM faster than its theoretical share";
    EXPECT_LE(some, bs * kTolerance) << some_sms << " SMs faster than their theoretical share";
    EXPECT_LE(all, ball * kTolerance) << "faster than the theoretical peak";
  }
}

TEST_P(CudaScalingTest, MoreSmsThanTheDeviceHasIsUnsupported) {
  const Probe* probe = Registry::instance().probe("cuda", "scaling");
  ASSERT_NE(probe, nullptr);
  const int too_many = device().compute_units + 1;
  const Params params{{"kernel", GetParam()}, {"sm_count", std::to_string(too_many)}};
  EXPECT_EQ(probe->unsupported_reason(params, device()),
            "device has " + std::to_string(device().compute_units) + " SMs");
}

INSTANTIATE_TEST_SUITE_P(Kernels, CudaScalingTest, ::testing::Values("memory_read", "fp64_fma"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
}  // namespace roofprobe
