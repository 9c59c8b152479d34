// run_sweep's handling of points that cannot be measured: out of device memory, a sticky device
// fault with and without a successful reset, a failing launch, a stop signal. Fake probes and a
// fake backend stand in for the GPU (the faults are what a GPU would raise; the CUDA mapping of
// error codes onto them lives in kernels/cuda/backend/cuda_support.hpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include "driver/run/sweep_runner.hpp"

namespace roofprobe {
namespace {

class SimplePoint : public PreparedPoint {
 public:
  Work work() const override {
    Work w;
    w.bytes_read = 1e6;
    w.working_set_bytes = 1e6;
    return w;
  }
  void launch() override {}
  Check verify() override { return {}; }
};

// A probe whose points raise what `fail` says when their size is in the failing set.
class FaultyProbe : public Probe {
 public:
  enum class Fail { None, OutOfMemory, Fault, Error };
  FaultyProbe(std::string name, Fail fail, double fail_from_bytes) : fail_(fail), from_(fail_from_bytes) {
    info_.name = std::move(name);
    info_.backend = "fake";
  }
  const ProbeInfo& info() const override { return info_; }
  std::uint64_t footprint_bytes(const Params& p) const override {
    return static_cast<std::uint64_t>(param_int(p, "bytes"));
  }
  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo&) const override {
    ++prepared;
    const double bytes = static_cast<double>(param_int(p, "bytes"));
    if (bytes >= from_) {
      if (fail_ == Fail::OutOfMemory) throw DeviceOutOfMemory("cudaMalloc failed: cudaErrorMemoryAllocation");
      if (fail_ == Fail::Fault) throw DeviceFault("cudaErrorIllegalAddress: an illegal memory access");
      if (fail_ == Fail::Error) throw std::runtime_error("cudaErrorInvalidConfiguration");
    }
    return std::make_unique<SimplePoint>();
  }
  mutable int prepared = 0;

 private:
  ProbeInfo info_;
  Fail fail_;
  double from_;
};

class ResettableBackend : public Backend {
 public:
  explicit ResettableBackend(bool can_recover) : can_recover_(can_recover) {}
  std::string name() const override { return "fake"; }
  std::string unavailable_reason() const override { return {}; }
  DeviceInfo identify() override { return {}; }
  DeviceInfo describe(int) override { return {}; }
  double time_launch(PreparedPoint& p) override {
    p.launch();
    return 1e-3;
  }
  double measure_clock_mhz() override { return 1000; }
  bool recover() override {
    ++recoveries;
    return can_recover_;
  }
  int recoveries = 0;

 private:
  bool can_recover_;
};

MeasurementSettings quick() {
  MeasurementSettings s;
  s.warmup_seconds = 0;
  s.min_samples = 3;
  s.min_seconds = 0;
  s.timeout_seconds = 0.01;
  s.target_launch_seconds = 1e-3;
  return s;
}

Plan plan_of(const std::vector<std::pair<const Probe*, double>>& points) {
  Plan plan;
  for (const auto& [probe, bytes] : points) {
    PlanPoint p;
    p.index = static_cast<int>(plan.points.size());
    p.probe = probe;
    p.params = {{"bytes", std::to_string(static_cast<long long>(bytes))}};
    plan.points.push_back(p);
  }
  return plan;
}

class SweepRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "sweep_runner_" + std::to_string(::getpid()) + ".csv";
    std::remove(path_.c_str());
  }
  void TearDown() override { std::remove(path_.c_str()); }
  SweepOutcome run(Backend& backend, const Plan& plan, SweepHooks hooks = {}) {
    SweepWriter writer(path_);
    hooks.report = [&](const std::string& line) { reports.push_back(line); };
    return run_sweep(backend, DeviceInfo{}, plan, quick(), {}, writer, hooks);
  }
  static bool any_contains(const std::vector<std::string>& lines, const std::string& what) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const std::string& l) { return l.find(what) != std::string::npos; });
  }
  std::string path_;
  std::vector<std::string> reports;
};

TEST_F(SweepRunnerTest, OutOfMemoryStopsTheProbeAtTheLargestSizeThatFits) {
  ResettableBackend backend(true);
  FaultyProbe big("bandwidth", FaultyProbe::Fail::OutOfMemory, 4e9);
  FaultyProbe other("flops", FaultyProbe::Fail::None, 0);
  // Sizes out of order, as a Cartesian product over modes lists them.
  Plan plan = plan_of({{&big, 1e9}, {&big, 4e9}, {&big, 8e9}, {&big, 2e9}, {&other, 1e6}});
  SweepOutcome out = run(backend, plan);
  EXPECT_EQ(out.failures, 0) << "running out of memory is a limit of the device, not a failure";
  EXPECT_FALSE(out.device_lost);
  EXPECT_EQ(big.prepared, 3) << "8 GB is skipped without trying once 4 GB did not fit; 2 GB still runs";
  std::set<int> measured;
  for (const Sample& s : out.samples) measured.insert(s.point);
  EXPECT_EQ(measured, (std::set<int>{0, 3, 4}));
  EXPECT_TRUE(any_contains(out.missing, "out of device memory"));
  EXPECT_TRUE(any_contains(out.missing, "bandwidth bytes=8000000000: skipped"));
  EXPECT_TRUE(any_contains(reports, "sweep stops below"));
  EXPECT_EQ(backend.recoveries, 0);
}

TEST_F(SweepRunnerTest, DeviceFaultEndsTheProbeAndTheResetLetsTheOthersRun) {
  ResettableBackend backend(true);
  FaultyProbe bad("stride", FaultyProbe::Fail::Fault, 2e6);
  FaultyProbe good("flops", FaultyProbe::Fail::None, 0);
  Plan plan = plan_of({{&bad, 1e6}, {&bad, 2e6}, {&bad, 1e6}, {&good, 1e6}, {&good, 2e6}});
  SweepOutcome out = run(backend, plan);
  EXPECT_EQ(backend.recoveries, 1);
  EXPECT_FALSE(out.device_lost);
  EXPECT_EQ(out.failures, 1);
  EXPECT_EQ(bad.prepared, 2) << "the probe ends at its fault";
  std::set<int> measured;
  for (const Sample& s : out.samples) measured.insert(s.point);
  EXPECT_EQ(measured, (std::set<int>{0, 3, 4}));
  EXPECT_TRUE(any_contains(out.missing, "device fault"));
  EXPECT_TRUE(any_contains(out.missing, "1 points not measured after a device fault (their probe had ended)"));
  EXPECT_TRUE(any_contains(reports, "device was reset"));
}

TEST_F(SweepRunnerTest, UnrecoverableFaultStopsTheRunKeepingWhatWasMeasured) {
  ResettableBackend backend(false);
  FaultyProbe first("bandwidth", FaultyProbe::Fail::None, 0);
  FaultyProbe bad("tensor", FaultyProbe::Fail::Fault, 0);
  FaultyProbe later("flops", FaultyProbe::Fail::None, 0);
  Plan plan = plan_of({{&first, 1e6}, {&first, 2e6}, {&bad, 1e6}, {&later, 1e6}, {&later, 2e6}});
  SweepOutcome out = run(backend, plan);
  EXPECT_TRUE(out.device_lost);
  EXPECT_EQ(later.prepared, 0);
  std::set<int> measured;
  for (const Sample& s : out.samples) measured.insert(s.point);
  EXPECT_EQ(measured, (std::set<int>{0, 1}));
  EXPECT_TRUE(any_contains(out.missing, "2 points not measured after a device fault (the device could not be reset)"));
  EXPECT_TRUE(any_contains(reports, "could not be reset"));
  // The samples measured before the fault are on disk.
  EXPECT_EQ(read_sweep_csv(path_).size(), out.samples.size());
}

TEST_F(SweepRunnerTest, AFailingPointIsReportedAndTheSweepGoesOn) {
  ResettableBackend backend(true);
  FaultyProbe probe("shared", FaultyProbe::Fail::Error, 2e6);
  Plan plan = plan_of({{&probe, 1e6}, {&probe, 2e6}, {&probe, 1.5e6}});
  SweepOutcome out = run(backend, plan);
  EXPECT_EQ(out.failures, 1);
  EXPECT_EQ(probe.prepared, 3);
  EXPECT_EQ(backend.recoveries, 0) << "an ordinary error needs no reset";
  EXPECT_TRUE(any_contains(out.missing, "shared bytes=2000000: failed: cudaErrorInvalidConfiguration"));
}

TEST_F(SweepRunnerTest, AStopSignalListsTheRestAsNotMeasured) {
  ResettableBackend backend(true);
  FaultyProbe probe("flops", FaultyProbe::Fail::None, 0);
  Plan plan = plan_of({{&probe, 1e6}, {&probe, 2e6}, {&probe, 3e6}});
  // The signal arrives once the second point has started: the first is kept, the second (cut
  // short) and the third are listed as not measured.
  int started = 0;
  SweepHooks hooks;
  hooks.progress = [&](int, const std::string&) { ++started; };
  hooks.stop_requested = [&] { return started > 1 ? 15 : 0; };
  SweepOutcome out = run(backend, plan, hooks);
  EXPECT_EQ(out.stopped_by, 15);
  EXPECT_EQ(out.not_measured, (std::vector<std::string>{"flops bytes=2000000", "flops bytes=3000000"}));
  EXPECT_EQ(probe.prepared, 2);
  ASSERT_FALSE(out.samples.empty());
  for (const Sample& s : out.samples) EXPECT_EQ(s.point, 0);
}

// Hundreds of points a stop left out make one missing: line per probe, so the real gaps stay
// readable; a lone point, or a label without parameters, keeps its own line.
TEST(NotMeasuredLines, OneLinePerProbeWithItsCountAndFirstPoint) {
  const std::vector<std::string> labels = {"bandwidth op=read bytes=1",
                                           "bandwidth op=read bytes=2",
                                           "flops precision=fp64",
                                           "bandwidth op=copy bytes=1",
                                           "cap 300 W: shared bytes=1",
                                           "cap 300 W: shared bytes=2",
                                           "cap 400 W"};
  EXPECT_EQ(not_measured_lines(labels, "interrupted"),
            (std::vector<std::string>{
                "bandwidth: 3 points not measured (interrupted), the first: bandwidth op=read bytes=1",
                "flops precision=fp64: not measured (interrupted)",
                "cap 300 W: shared: 2 points not measured (interrupted), the first: cap 300 W: shared bytes=1",
                "cap 400 W: not measured (interrupted)"}));
  EXPECT_TRUE(not_measured_lines({}, "interrupted").empty());
}

// A stop signal that arrives inside a point (during its warm-up or sampling) is honoured at the
// next launch, not at the end of the point: nothing more is launched, and the point is listed as
// not measured so a resumed run measures it whole.
TEST_F(SweepRunnerTest, AStopInsideAPointEndsItAtTheNextLaunch) {
  class CountingBackend : public ResettableBackend {
   public:
    CountingBackend() : ResettableBackend(true) {}
    double time_launch(PreparedPoint& p) override {
      ++launches;
      return ResettableBackend::time_launch(p);
    }
    int launches = 0;
  } backend;
  FaultyProbe probe("bandwidth", FaultyProbe::Fail::None, 0);
  Plan plan = plan_of({{&probe, 1e6}, {&probe, 2e6}});
  SweepHooks hooks;
  int launches_at_stop = -1;
  hooks.stop_requested = [&] {
    if (launches_at_stop < 0 && backend.launches >= 4) launches_at_stop = backend.launches;
    return launches_at_stop >= 0 ? SIGTERM : 0;
  };
  SweepOutcome out = run(backend, plan, hooks);
  EXPECT_EQ(out.stopped_by, SIGTERM);
  EXPECT_EQ(backend.launches, launches_at_stop) << "no launch after the stop was asked for";
  EXPECT_TRUE(out.samples.empty()) << "a point cut short keeps no samples";
  EXPECT_EQ(out.not_measured, (std::vector<std::string>{"bandwidth bytes=1000000", "bandwidth bytes=2000000"}));
  EXPECT_EQ(out.failures, 0);
}

// Another process on the run's cores: the point is measured again; a load that stays is flagged
// on every sample (so the fit never takes it for the device's rate) and named under missing:.
class LoadedBackend : public ResettableBackend {
 public:
  explicit LoadedBackend(int loaded_readings) : ResettableBackend(true), loaded_readings_(loaded_readings) {}
  ForeignUse foreign_use() override {
    ForeignUse use;
    use.known = true;
    use.measures_time = true;
    // Each reading after a loaded point adds far more foreign time than any point lasts.
    if (readings_++ % 2 == 1 && loaded_readings_-- > 0) busy_ += 1000;
    use.busy_seconds = busy_;
    use.processes = {"4242 stress-ng"};
    return use;
  }

 private:
  int loaded_readings_;
  int readings_ = 0;
  double busy_ = 0;
};

TEST_F(SweepRunnerTest, APointMeasuredBesideAnotherProcessIsRetriedThenFlaggedAndNamed) {
  LoadedBackend backend(100);  // loaded all along
  FaultyProbe probe("flops", FaultyProbe::Fail::None, 0);
  SweepOutcome out = run(backend, plan_of({{&probe, 1e6}}));
  EXPECT_EQ(probe.prepared, 1);
  EXPECT_EQ(out.foreign_points, 1);
  ASSERT_FALSE(out.samples.empty());
  for (const Sample& s : out.samples) {
    EXPECT_NE(s.flags.find("foreign-load"), std::string::npos);
    EXPECT_TRUE(is_noisy(s)) << "a foreign-load sample is never a clean one";
  }
  ASSERT_EQ(out.missing.size(), 1u);
  EXPECT_EQ(out.missing[0].rfind("flops bytes=1000000: measured while other processes used ", 0), 0u) << out.missing[0];
  EXPECT_NE(out.missing[0].find("4242 stress-ng"), std::string::npos) << out.missing[0];
  EXPECT_EQ(std::count_if(reports.begin(), reports.end(),
                          [](const std::string& r) { return r.find("measuring it again") != std::string::npos; }),
            2);
  EXPECT_TRUE(any_contains(reports, "1 points were measured while other processes used the device"));
}

// A load that persists is not retried at every point: after two points that stayed loaded, the
// next are measured once (and flagged), so a run beside a steady load takes about its own time.
TEST_F(SweepRunnerTest, APersistentLoadStopsTheRetries) {
  LoadedBackend backend(1000);
  FaultyProbe probe("flops", FaultyProbe::Fail::None, 0);
  SweepOutcome out = run(backend, plan_of({{&probe, 1e6}, {&probe, 2e6}, {&probe, 3e6}, {&probe, 4e6}}));
  EXPECT_EQ(out.foreign_points, 4);
  EXPECT_EQ(std::count_if(reports.begin(), reports.end(),
                          [](const std::string& r) { return r.find("measuring it again") != std::string::npos; }),
            4);
  EXPECT_TRUE(any_contains(reports, "(1 try)")) << "the fourth point is measured once";
  // One note for the probe's four points, not four.
  ASSERT_EQ(out.missing.size(), 1u);
  EXPECT_EQ(out.missing[0].rfind("probe 'flops': 4 points measured while other processes used ", 0), 0u)
      << out.missing[0];
  EXPECT_NE(out.missing[0].find("(the first: flops bytes=1000000;"), std::string::npos) << out.missing[0];
}

TEST_F(SweepRunnerTest, ALoadThatGoesAwayCostsOneRetryAndLeavesNoMark) {
  LoadedBackend backend(1);  // only the first measurement is disturbed
  FaultyProbe probe("flops", FaultyProbe::Fail::None, 0);
  SweepOutcome out = run(backend, plan_of({{&probe, 1e6}}));
  EXPECT_EQ(out.foreign_points, 0);
  EXPECT_TRUE(out.missing.empty());
  for (const Sample& s : out.samples) EXPECT_EQ(s.flags.find("foreign-load"), std::string::npos);
  EXPECT_TRUE(any_contains(reports, "measuring it again"));
}

TEST(ForeignLoadReason, CountsOnlyTimeBeyondTheIdleCoresAndNamesTheProcess) {
  ForeignUse before, after;
  before.known = after.known = before.measures_time = after.measures_time = true;
  before.busy_seconds = 10;
  after.busy_seconds = 10.1;  // 0.1 core over one second: daemons
  EXPECT_EQ(foreign_load_reason(before, after, 1.0), "");
  after.busy_seconds = 11;  // a whole core ...
  after.idle_slack = 1;     // ... on a core the run does not use
  EXPECT_EQ(foreign_load_reason(before, after, 1.0), "");
  after.idle_slack = 0;
  after.processes = {"4242 stress-ng"};
  EXPECT_EQ(foreign_load_reason(before, after, 1.0), "other processes used 1.00 of the run's cores: 4242 stress-ng");
  // The kernel's tick counting: 0.03 s over a 0.1 s point is 0.3 cores, or nothing at a
  // resolution of 3 ticks of 10 ms (two CPUs and the process).
  after.processes.clear();
  after.busy_seconds = 10.03;
  EXPECT_EQ(foreign_load_reason(before, after, 0.1), "other processes used 0.30 of the run's cores");
  after.resolution_seconds = 0.03;
  EXPECT_EQ(foreign_load_reason(before, after, 0.1), "");
  after.busy_seconds = 10.08;  // a whole core for most of the point is still seen
  EXPECT_EQ(foreign_load_reason(before, after, 0.1), "other processes used 0.50 of the run's cores");
  // The threads' wait for their CPUs, exact to the nanosecond, sees what the ticks round away:
  // 0.04 s of a 0.1 s point is 0.4 cores; 0.01 s is a daemon's wake-up.
  after.busy_seconds = 10.03;
  before.measures_wait = after.measures_wait = true;
  before.waited_seconds = 2;
  after.waited_seconds = 2.04;
  EXPECT_EQ(foreign_load_reason(before, after, 0.1), "other processes used 0.40 of the run's cores");
  after.waited_seconds = 2.01;
  EXPECT_EQ(foreign_load_reason(before, after, 0.1), "");
  after.waited_seconds = 2.04;
  before.measures_wait = false;  // one reading without it: ticks only
  EXPECT_EQ(foreign_load_reason(before, after, 0.1), "");
  ForeignUse unknown;
  EXPECT_EQ(foreign_load_reason(unknown, after, 1.0), "");
  // A GPU: any other compute process is foreign use.
  ForeignUse gpu_before, gpu_after;
  gpu_before.known = gpu_after.known = true;
  EXPECT_EQ(foreign_load_reason(gpu_before, gpu_after, 1.0), "");
  gpu_after.processes = {"777 python"};
  EXPECT_EQ(foreign_load_reason(gpu_before, gpu_after, 1.0), "other processes ran on the device: 777 python");
}

}  // namespace
}  // namespace roofprobe
