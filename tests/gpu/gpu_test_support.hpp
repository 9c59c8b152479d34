// What every GPU test file shares: the CUDA backend, the device described once per binary, and
// a fixture that skips (with the backend's reason) where no CUDA device is usable and runs a
// probe point the way the engine does (prepare, time launches, verify).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "kernels/contract/probe.hpp"

namespace roofprobe::gpu_test {

// Clock drift between the clock measurement and a launch.
inline constexpr double kTolerance = 1.03;

inline Backend* cuda_backend() { return Registry::instance().backend("cuda"); }

// The device, described once for the whole binary (describe() measures the clock: ~50 ms).
inline const DeviceInfo& device() {
  static const DeviceInfo info = cuda_backend()->describe(0);
  return info;
}

class CudaProbeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Backend* backend = cuda_backend();
    ASSERT_NE(backend, nullptr) << "the CUDA backend is not registered";
    const std::string why = backend->unavailable_reason();
    if (!why.empty()) GTEST_SKIP() << why;
  }

  // Prepares `params` of `probe`, times `launches` launches and returns the fastest, after
  // checking that the device computed what the host predicts.
  static double best_seconds(const char* probe_name, const Params& params, int launches, Work* work) {
    const Probe* probe = Registry::instance().probe("cuda", probe_name);
    EXPECT_NE(probe, nullptr) << "probe " << probe_name << " is not registered";
    if (probe == nullptr) return 0;
    EXPECT_EQ(probe->unsupported_reason(params, device()), "");
    std::unique_ptr<PreparedPoint> point = probe->prepare(params, device());
    double best = 1e30;
    for (int i = 0; i < launches; ++i) best = std::min(best, cuda_backend()->time_launch(*point));
    const Check check = point->verify();
    EXPECT_TRUE(check.ok) << params_to_string(params) << ": " << check.detail;
    *work = point->work();
    EXPECT_GT(best, 0);
    return best;
  }
};

}  // namespace roofprobe::gpu_test
