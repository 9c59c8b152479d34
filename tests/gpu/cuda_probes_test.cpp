// Runs the CUDA probes on the GPU through the Registry, as the engine does: prepare a point,
// time a few launches with the backend, verify, and check the rate against the theoretical
// ceiling at the measured clock (docs/ARCHITECTURE.md: a result above it is a bug until proven
// otherwise). Every test skips, with the backend's reason, where no CUDA device is usable.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>

#include "kernels/contract/probe.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace roofprobe {
namespace {

using gpu_test::CudaProbeTest;
using gpu_test::device;
using gpu_test::kTolerance;

TEST_F(CudaProbeTest, DescribesTheDevice) {
  const DeviceInfo& d = device();
  EXPECT_EQ(d.backend, "cuda");
  EXPECT_EQ(d.kind, "gpu");
  EXPECT_FALSE(d.name.empty());
  EXPECT_GT(d.compute_units, 0);
  ASSERT_EQ(d.caches.size(), 2u);
  EXPECT_EQ(d.caches[0].name, "L1");
  EXPECT_EQ(d.caches[0].instances, d.compute_units);
  EXPECT_EQ(d.caches[1].name, "L2");
  EXPECT_GT(d.caches[1].bytes, d.caches[0].bytes);
  EXPECT_GT(d.memory_bytes, 0u);
  EXPECT_FALSE(d.extra.at("compute_capability").empty());
  // The measured SM clock is plausible. Consumer boards boost past the rated clock the runtime
  // reports (an RTX 4090 rated 2520 MHz often runs at 2700+), hence the loose upper bound.
  EXPECT_GT(d.clock_measured_mhz, 100);
  EXPECT_LE(d.clock_measured_mhz, d.clock_max_mhz * 1.3);
  std::printf("device: %s, %d SMs, cc %s, clock %.0f MHz measured / %.0f max, memory %s %s GB/s\n", d.name.c_str(),
              d.compute_units, d.extra.at("compute_capability").c_str(), d.clock_measured_mhz, d.clock_max_mhz,
              d.memory_name.c_str(), d.extra.at("memory_peak_gbs").c_str());
}

// NVML telemetry during a launch: where the driver has NVML (device.extra.telemetry), an FMA
// launch of a few milliseconds reports the SM clock it ran at, near the clock measured with
// clock64(), and the board power; without NVML the reason is printed and the readings are 0.
TEST_F(CudaProbeTest, LaunchesReportTheClockAndPowerNvmlSawDuringThem) {
  const DeviceInfo& d = device();
  const std::string telemetry = d.extra.count("telemetry") ? d.extra.at("telemetry") : "";
  std::printf("telemetry: %s\n", telemetry.c_str());
  const Params params{{"precision", "fp32"},
                      {"form", "fma"},
                      {"flops_per_element", "1024"},
                      {"working_set_bytes", std::to_string(32u << 20)}};
  Work work;
  best_seconds("flops", params, 3, &work);
  const LaunchTelemetry t = gpu_test::cuda_backend()->last_launch_telemetry();
  std::printf("last launch: SM clock %.0f MHz (clock64: %.0f MHz), %.0f W, throttle '%s'\n", t.clock_mhz,
              d.clock_measured_mhz, t.power_w, t.throttle.c_str());
  if (telemetry.rfind("NVML", 0) != 0) {
    EXPECT_EQ(t.clock_mhz, 0);
    GTEST_SKIP() << "no NVML: " << telemetry;
  }
  EXPECT_GT(t.clock_mhz, 0.5 * d.clock_measured_mhz);
  EXPECT_LT(t.clock_mhz, 1.1 * d.clock_measured_mhz);
  EXPECT_GT(t.power_w, 0);
}

class CudaBandwidthTest : public CudaProbeTest, public ::testing::WithParamInterface<const char*> {};

// Small: inside the SMs' L1s, bounded by 128 B/clk/SM (loads) at the measured clock.
TEST_P(CudaBandwidthTest, SmallWorkingSetVerifiesAndStaysBelowL1) {
  const DeviceInfo& d = device();
  const Params params{{"mode", GetParam()}, {"working_set_bytes", std::to_string(4u << 20)}};
  Work work;
  const double s = best_seconds("bandwidth", params, 3, &work);
  const double gbs = rates_of(work, s).gbs;
  const double l1_loads = d.compute_units * 128.0 * d.clock_measured_mhz * 1e-3;
  std::printf("%s 4 MiB: %.1f GB/s (L1 load bound %.1f)\n", GetParam(), gbs, l1_loads);
  // Stores go through to L2, so rmw/copy may move up to twice the load bound.
  const double bound = std::string(GetParam()) == "read" ? l1_loads : 2 * l1_loads;
  EXPECT_LE(gbs, bound * kTolerance);
}

// Large: at least 4x L2 (256 MiB or more), bounded by the DRAM's theoretical bandwidth.
TEST_P(CudaBandwidthTest, LargeWorkingSetVerifiesAndStaysBelowDram) {
  const DeviceInfo& d = device();
  const std::uint64_t ws = std::max<std::uint64_t>(256u << 20, 4 * d.caches[1].bytes);
  if (ws > d.memory_bytes / 2) GTEST_SKIP() << "device memory too small for " << ws << " bytes";
  const Params params{{"mode", GetParam()}, {"working_set_bytes", std::to_string(ws)}};
  Work work;
  const double s = best_seconds("bandwidth", params, 3, &work);
  const double gbs = rates_of(work, s).gbs;
  const double dram = std::stod(d.extra.at("memory_peak_gbs"));
  std::printf("%s %llu MiB: %.1f GB/s of %.1f theoretical (%.1f%%)\n", GetParam(),
              static_cast<unsigned long long>(ws >> 20), gbs, dram, 100 * gbs / dram);
  EXPECT_LE(gbs, dram * kTolerance) << "faster than the DRAM's theoretical bandwidth";
  EXPECT_GE(gbs, dram * 0.4) << "far below the DRAM's theoretical bandwidth";
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaBandwidthTest, ::testing::Values("read", "rmw", "copy", "write"),
                         [](const ::testing::TestParamInfo<const char*>& i) { return std::string(i.param); });

}  // namespace
}  // namespace roofprobe
