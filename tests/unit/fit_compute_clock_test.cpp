// Compute ceilings' theoretical peaks use the clock measured with the ceiling's own samples, a
// ceiling whose samples were throttled says so, and a device without a theoretical figure says why
// under `missing`.
#include <gtest/gtest.h>

#include <map>

#include "driver/fit/fit.hpp"
#include "driver/model/machine.hpp"
#include "kernels/contract/device_power.hpp"
#include "tests/unit/fit_only_probe.hpp"

namespace roofprobe {
namespace {

using testing::FitOnlyProbe;

void register_probe() {
  static const bool registered = [] {
    Registry::instance().add_probe(
        std::make_unique<FitOnlyProbe>(testing::flops_like_probe("clock_test_flops", "clock_test")));
    return true;
  }();
  (void)registered;
}

// Point `fpe` of FP64.FMA: three samples at `gflops`, measured at `mhz`.
void add_point(std::vector<Sample>& out, int fpe, double gflops, double mhz) {
  for (int k = 0; k < 3; ++k) {
    Sample s;
    s.backend = "clock_test";
    s.probe = "clock_test_flops";
    s.params = {{"precision", "fp64"}, {"form", "fma"}, {"flops_per_element", std::to_string(fpe)}};
    s.point = fpe;
    s.sample = k;
    s.gflops = gflops;
    s.clock_mhz = mhz + k;  // median mhz + 1
    out.push_back(s);
  }
}

TEST(FitComputeClock, TheoreticalPeakScalesToTheCeilingsOwnClock) {
  register_probe();
  std::vector<Sample> samples;
  add_point(samples, 16, 80, 3999);   // a slower point at a higher clock: not the ceiling
  add_point(samples, 64, 100, 2699);  // the ceiling, measured while the clock sagged to 2700
  Machine m;
  m.device.clock_measured_mhz = 3000;                 // start-up clock
  m.device.theoretical_gflops = {{"FP64.FMA", 120}};  // at 3000 MHz
  fit_samples(samples, m);
  ASSERT_EQ(m.compute.size(), 1u);
  const ComputeCeiling& c = m.compute[0];
  EXPECT_DOUBLE_EQ(c.clock_mhz, 2700);
  EXPECT_DOUBLE_EQ(c.theoretical_gflops, 120 * 2700.0 / 3000);
  EXPECT_DOUBLE_EQ(c.fraction_of_theoretical, 100 / 108.0);
  EXPECT_TRUE(m.missing.empty());
}

TEST(FitComputeClock, SamplesWithoutAClockKeepTheDeviceClock) {
  register_probe();
  std::vector<Sample> samples;
  add_point(samples, 64, 100, 0);
  for (Sample& s : samples) s.clock_mhz = 0;  // not measured
  Machine m;
  m.device.clock_measured_mhz = 3000;
  m.device.theoretical_gflops = {{"FP64.FMA", 120}};
  fit_samples(samples, m);
  ASSERT_EQ(m.compute.size(), 1u);
  EXPECT_DOUBLE_EQ(m.compute[0].clock_mhz, 3000);
  EXPECT_DOUBLE_EQ(m.compute[0].theoretical_gflops, 120);
}

// NVML's throttle reasons of the ceiling's own point reach the machine file (the union over its
// samples); a throttled point that is not the ceiling's does not.
TEST(FitComputeClock, AThrottledCeilingSaysWhatThrottledIt) {
  register_probe();
  std::vector<Sample> samples;
  add_point(samples, 16, 80, 1980);
  add_point(samples, 64, 100, 1755);
  samples[0].throttle = "hw-thermal";  // the slower point: not the ceiling's
  samples[3].throttle = "sw-power";    // the ceiling's point
  samples[5].throttle = "sw-power+sw-thermal";
  Machine m;
  m.device.kind = "gpu";
  m.device.name = "a GPU";
  m.device.clock_measured_mhz = 1980;
  fit_samples(samples, m);
  ASSERT_EQ(m.compute.size(), 1u);
  EXPECT_EQ(m.compute[0].throttled, "sw-power+sw-thermal");
  EXPECT_EQ(m.compute[0].limited_by, "power cap and temperature");  // no power limit reported
  const Machine back = read_machine_text(machine_to_yaml(m), "throttled.yaml");
  ASSERT_EQ(back.compute.size(), 1u);
  EXPECT_EQ(back.compute[0].throttled, "sw-power+sw-thermal");
  EXPECT_EQ(back.compute[0].limited_by, "power cap and temperature");
}

// The limit names the cap's watts where the device reported them, and "clock" where NVML
// watched the launches and nothing lowered the clock; a device without throttle reasons (a CPU)
// names no limit.
TEST(FitComputeClock, ACeilingNamesTheLimitThatBoundIt) {
  register_probe();
  const auto fitted = [](const std::string& throttle, const std::map<std::string, std::string>& extra) {
    std::vector<Sample> samples;
    add_point(samples, 64, 100, 1755);
    for (Sample& s : samples) s.throttle = throttle;
    Machine m;
    m.device.clock_measured_mhz = 1980;
    m.device.extra = extra;
    fit_samples(samples, m);
    return m.compute.at(0).limited_by;
  };
  const std::map<std::string, std::string> nvml = {{"telemetry", "NVML: SM clock, board power and throttle reasons"},
                                                   {kExtraPowerLimitW, "700"}};
  EXPECT_EQ(fitted("sw-power", nvml), "power cap 700 W");
  EXPECT_EQ(fitted("power-brake+hw-slowdown", nvml), "power cap 700 W and hardware slowdown");
  EXPECT_EQ(fitted("hw-thermal", nvml), "temperature");
  EXPECT_EQ(fitted("", nvml), "clock");
  EXPECT_EQ(fitted("", {{"telemetry", "none: NVML not loaded"}}), "");
  EXPECT_EQ(fitted("", {}), "");
}

// One FP64.FMA point fitted on a device with no theoretical peak, `extra` saying why.
Machine fitted_without_a_peak(const std::map<std::string, std::string>& extra) {
  register_probe();
  std::vector<Sample> samples;
  add_point(samples, 64, 100, 2999);
  Machine m;
  m.device.clock_measured_mhz = 3000;
  for (const auto& [key, value] : extra) m.device.extra[key] = value;
  fit_samples(samples, m);
  return m;
}

TEST(FitComputeClock, UnknownTheoreticalPeakIsListedWithTheReason) {
  const Machine m = fitted_without_a_peak({{"theoretical_unknown", "Intel hybrid client: hybrid part"}});
  ASSERT_EQ(m.compute.size(), 1u);
  EXPECT_DOUBLE_EQ(m.compute[0].theoretical_gflops, 0);
  ASSERT_EQ(m.missing.size(), 1u);
  EXPECT_EQ(m.missing[0], "FP64.FMA: no theoretical peak: Intel hybrid client: hybrid part");
}

// A ceiling's own reason (a tensor type the peak table lacks on this GPU) comes before the device's.
TEST(FitComputeClock, AnUnknownPeakOfOneCeilingSaysItsOwnReason) {
  const Machine m =
      fitted_without_a_peak({{"theoretical_unknown", "the device's reason"},
                             {"theoretical_unknown.FP64.FMA", "no figure for this type on compute capability 12.1"}});
  ASSERT_EQ(m.missing.size(), 1u);
  EXPECT_EQ(m.missing[0], "FP64.FMA: no theoretical peak: no figure for this type on compute capability 12.1");
}

}  // namespace
}  // namespace roofprobe
