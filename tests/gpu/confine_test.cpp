// Launches confined to part of the GPU (Backend::confine, a green context): the census sees no
// more SMs than granted, an FP64 FMA point prepared for those SMs verifies and runs at about their
// share of the whole device's rate, and the device is whole again once the handle is gone. Skips
// with the backend's reason where the driver has no green contexts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"
#include "kernels/cuda/backend/green_context.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace roofprobe {
namespace {

using gpu_test::cuda_backend;
using gpu_test::CudaProbeTest;
using gpu_test::device;

// Seconds of the fastest of three launches of `point`, after which it must verify.
double best_of_three(PreparedPoint& point) {
  double best = 1e30;
  for (int i = 0; i < 3; ++i) best = std::min(best, cuda_backend()->time_launch(point));
  const Check check = point.verify();
  EXPECT_TRUE(check.ok) << check.detail;
  return best;
}

class ConfinedLaunchTest : public CudaProbeTest {};

TEST_F(ConfinedLaunchTest, AQuarterOfTheSmsDoesAQuarterOfTheFmaRate) {
  Backend& backend = *cuda_backend();
  const int n = device().compute_units;
  const int k = backend.confinable_workers(n / 4);
  if (k <= 0 || k >= n) {
    std::string why = "no partition smaller than the device";
    try {
      backend.confine(n / 4);
    } catch (const std::exception& e) {
      why = e.what();
    }
    GTEST_SKIP() << why;
  }
  const Probe* flops = Registry::instance().probe("cuda", "flops");
  ASSERT_NE(flops, nullptr);
  const Params params{{"precision", "fp64"},
                      {"form", "fma"},
                      {"flops_per_element", "64"},
                      {"working_set_bytes", std::to_string(32u << 20)}};
  std::unique_ptr<PreparedPoint> whole_point = flops->prepare(params, device());
  const double whole = whole_point->work().flops / best_of_three(*whole_point);
  whole_point.reset();

  double part = 0;
  {
    std::unique_ptr<Confinement> confined = backend.confine(k);
    ASSERT_EQ(confined->workers(), k);
    const std::vector<std::uint32_t> ids = cuda::sm_ids_in_use(k);
    EXPECT_LE(static_cast<int>(ids.size()), k);
    EXPECT_GE(static_cast<int>(ids.size()), k * 3 / 4) << "most of the partition's SMs host the census";
    DeviceInfo on_part = device();
    on_part.compute_units = k;
    std::unique_ptr<PreparedPoint> point = flops->prepare(params, on_part);
    part = point->work().flops / best_of_three(*point);
    // Preparing and timing the point left the partition current.
    EXPECT_LE(static_cast<int>(cuda::sm_ids_in_use(k).size()), k) << "after the point's launches";
  }
  const double share = static_cast<double>(k) / n;
  EXPECT_LT(part / whole, share * 1.15) << k << " of " << n << " SMs";
  EXPECT_GT(part / whole, share * 0.7) << k << " of " << n << " SMs";
  std::printf("[   INFO   ] FP64 FMA on %d of %d SMs: %.1f of %.1f GFLOP/s (%.3f; share %.3f)\n", k, n, part * 1e-9,
              whole * 1e-9, part / whole, share);
  EXPECT_EQ(static_cast<int>(cuda::sm_ids_in_use().size()), n) << "the whole device once the partition is gone";
}

}  // namespace
}  // namespace roofprobe
