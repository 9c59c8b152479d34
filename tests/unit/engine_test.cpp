// The measurement engine on synthetic launches: stopping rule, launch sizing, derived rates.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "driver/run/engine.hpp"
#include "driver/run/progress.hpp"

namespace roofprobe {
namespace {

MeasurementSettings settings() {
  MeasurementSettings s;
  s.min_samples = 5;
  s.min_seconds = 0.1;
  s.max_noise = 0.01;
  s.timeout_seconds = 1.0;
  s.warmup_seconds = 0.001;
  s.target_launch_seconds = 0.01;
  return s;
}

TEST(NoiseCriterion, StopsWhenQuietAndLongEnough) {
  NoiseCriterion c(settings());
  for (int i = 0; i < 4; ++i) c.add(0.03);
  EXPECT_FALSE(c.done()) << "fewer than min_samples";
  c.add(0.03);
  EXPECT_TRUE(c.done());
  EXPECT_TRUE(c.converged());
  EXPECT_DOUBLE_EQ(c.relative_noise(), 0.0);
}

TEST(NoiseCriterion, NeedsMinimumTime) {
  NoiseCriterion c(settings());
  for (int i = 0; i < 9; ++i) c.add(0.0105);
  EXPECT_FALSE(c.done()) << "0.0945 s < min_seconds";
  c.add(0.0105);
  EXPECT_TRUE(c.done());
}

TEST(NoiseCriterion, NoisySequenceRunsToTimeout) {
  NoiseCriterion c(settings());
  std::mt19937 rng(1);
  std::uniform_real_distribution<double> u(0.01, 0.02);  // ~20% noise
  int n = 0;
  while (!c.done()) {
    c.add(u(rng));
    ++n;
  }
  EXPECT_FALSE(c.converged());
  EXPECT_GE(c.elapsed(), 1.0);
  EXPECT_GT(c.relative_noise(), 0.05);
  EXPECT_LT(n, 120);
}

TEST(NoiseCriterion, RelativeNoiseMatchesDefinition) {
  NoiseCriterion c(settings());
  for (double v : {1.0, 2.0, 3.0, 4.0}) c.add(v);
  double mean = 2.5, sd = std::sqrt((2.25 + 0.25 + 0.25 + 2.25) / 3.0);
  EXPECT_NEAR(c.relative_noise(), sd / mean, 1e-12);
}

// A point whose launch time is proportional to repetitions, with a fixed overhead, and a
// "clock" that only advances in the backend below: the engine must size launches to the target.
class FakePoint : public PreparedPoint {
 public:
  Work work() const override {
    Work w;
    w.bytes_read = 1e6 * static_cast<double>(reps_);
    w.flops = 2e6 * static_cast<double>(reps_);
    w.transactions = w.bytes_read / 32;
    w.working_set_bytes = 1e6;
    return w;
  }
  void launch() override { ++launches; }
  Check verify() override { return Check{launches > 0, "never launched"}; }
  void set_repetitions(std::int64_t r) override { reps_ = r; }
  std::int64_t repetitions() const override { return reps_; }
  double seconds_per_launch() const { return overhead + 1e-6 * static_cast<double>(reps_); }
  int launches = 0;
  double overhead = 1e-5;

 private:
  std::int64_t reps_ = 1;
};

class FakeBackend : public Backend {
 public:
  std::string name() const override { return "fake"; }
  std::string unavailable_reason() const override { return {}; }
  DeviceInfo identify() override { return {}; }
  DeviceInfo describe(int) override { return {}; }
  double time_launch(PreparedPoint& p) override {
    p.launch();
    return static_cast<FakePoint&>(p).seconds_per_launch();
  }
  double measure_clock_mhz() override { return 2000; }
};

TEST(Engine, SizesLaunchesAndDerivesRates) {
  FakeBackend backend;
  FakePoint point;
  PointMeasurement m = measure_point(backend, point, settings());
  EXPECT_GE(point.repetitions(), 4000) << "launch should last >= half the 10 ms target";
  EXPECT_TRUE(m.check.ok);
  EXPECT_TRUE(m.converged);
  EXPECT_GE(m.seconds.size(), 5u);
  EXPECT_EQ(m.clock_mhz, 2000);
  auto samples = samples_of(m, "fake", "probe", Params{{"a", "1"}}, 3, 0);
  ASSERT_EQ(samples.size(), m.seconds.size());
  const Sample& s = samples.front();
  double expected_gbs = 1e6 * point.repetitions() / point.seconds_per_launch() / 1e9;
  EXPECT_NEAR(s.gbs, expected_gbs, 1e-9 * expected_gbs);
  EXPECT_NEAR(s.gflops, 2 * expected_gbs, 1e-9 * expected_gbs);
  EXPECT_NEAR(s.gtxn_s, expected_gbs / 32, 1e-9 * expected_gbs);
  EXPECT_EQ(s.point, 3);
  EXPECT_EQ(s.working_set_bytes, 1e6);
}

TEST(Engine, GrowsLaunchesPastAFixedOverhead) {
  // 8 ms per launch whatever the work (a sleeping thread woken on a busy machine): a launch of
  // one repetition already exceeds the target, but measures only the overhead.
  FakeBackend backend;
  FakePoint point;
  point.overhead = 8e-3;
  measure_point(backend, point, settings());
  EXPECT_GE(point.repetitions(), 8192);
  EXPECT_GE(1e-6 * point.repetitions() / point.seconds_per_launch(), 0.5)
      << "the work must be at least half of each launch";
}

// A backend that measures the clock during each launch (CPU compute probes): every sample
// carries its own launch's clock, not the reading taken after the point.
class ClockingBackend : public FakeBackend {
 public:
  double time_launch(PreparedPoint& p) override {
    last_ = 3000 + (++launches_ % 7);
    return FakeBackend::time_launch(p);
  }
  LaunchTelemetry last_launch_telemetry() const override {
    return {last_, 250 + last_ / 100, last_ > 3005 ? "sw-power" : ""};
  }

 private:
  double last_ = 0;
  int launches_ = 0;
};

TEST(Engine, SamplesCarryTheClockMeasuredDuringTheirLaunch) {
  ClockingBackend backend;
  FakePoint point;
  PointMeasurement m = measure_point(backend, point, settings());
  ASSERT_EQ(m.launch_telemetry.size(), m.seconds.size());
  auto samples = samples_of(m, "fake", "probe", Params{{"a", "1"}}, 0, 0);
  bool varied = false;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].clock_mhz, m.launch_telemetry[i].clock_mhz);
    EXPECT_EQ(samples[i].power_w, m.launch_telemetry[i].power_w);  // and the power and throttle of that launch
    EXPECT_EQ(samples[i].throttle, samples[i].clock_mhz > 3005 ? "sw-power" : "");
    EXPECT_GE(samples[i].clock_mhz, 3000);
    varied |= samples[i].clock_mhz != samples[0].clock_mhz;
  }
  EXPECT_TRUE(varied) << "each sample has its own launch's clock";
  // Without a launch clock the samples keep the after-point reading.
  FakeBackend plain;
  FakePoint other;
  PointMeasurement n = measure_point(plain, other, settings());
  for (const Sample& s : samples_of(n, "fake", "probe", Params{{"a", "1"}}, 0, 0)) EXPECT_EQ(s.clock_mhz, 2000);
}

TEST(Engine, FlagsNoisyPointsAndClockSag) {
  PointMeasurement m;
  m.converged = true;
  m.clock_mhz = 1800;
  EXPECT_EQ(point_flags(m, 1900), "");
  EXPECT_EQ(point_flags(m, 2100), "clock-sag");  // 1800 < 0.9 x 2100
  m.converged = false;
  EXPECT_EQ(point_flags(m, 2100), "noisy|clock-sag");
  EXPECT_EQ(point_flags(m, 0), "noisy");  // no reference clock: no sag verdict
}

TEST(Engine, AClockThePowerCapLowersIsNotASag) {
  // A tensor point at the 700 W cap runs at 1770 MHz of 1980: that is its ceiling under the cap
  // (limited_by: power cap), not a disturbance to leave out of the ceilings.
  PointMeasurement m;
  m.converged = true;
  m.clock_mhz = 1770;
  m.launch_telemetry = {{1980, 240, ""}, {1843, 240, "sw-power"}, {1770, 240, "sw-power"}};
  EXPECT_EQ(point_flags(m, 1980), "");
  m.launch_telemetry = {{1770, 240, "hw-slowdown+power-brake"}};
  EXPECT_EQ(point_flags(m, 1980), "");
  m.launch_telemetry = {{1770, 240, "sw-thermal"}, {1770, 240, ""}};  // heat: still a sag
  EXPECT_EQ(point_flags(m, 1980), "clock-sag");
}

TEST(Progress, RendersBarCountsAndEta) {
  EXPECT_EQ(Progress::render(5, 10, 30, "bandwidth", 10), "[#####.....]  5/10  0:30 elapsed, ETA 0:30  bandwidth");
  EXPECT_EQ(Progress::render(0, 3, 0, "x", 4), "[....] 0/3  0:00 elapsed, ETA ?  x");
}

}  // namespace
}  // namespace roofprobe
