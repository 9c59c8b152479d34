// roofprobe run --power-caps through the backend interface: the real CPU backend measures, and a
// fake NVML stands behind the power-limit control (kernels/cuda/backend/nvml_power_limit.hpp), so
// no test can reach the real nvmlDeviceSetPowerManagementLimit. The limit must be set to each cap
// in order and be the original one again after a normal end, an exception and a stop signal;
// refused caps must never change it.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "driver/fit/fit.hpp"
#include "driver/model/errors.hpp"
#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"
#include "driver/report/summary.hpp"
#include "driver/run/signals.hpp"
#include "driver/session/power_caps.hpp"
#include "kernels/cuda/backend/nvml_power_limit.hpp"
#include "temp_dir.hpp"

namespace roofprobe {
namespace {

constexpr unsigned kOriginalMw = 250000;

// What the fake driver holds and every call it was asked.
struct FakeDriver {
  unsigned limit_mw = kOriginalMw;
  unsigned min_mw = 100000;
  unsigned max_mw = 700000;
  bool root = true;
  std::vector<unsigned> sets;  // every nvmlDeviceSetPowerManagementLimit argument, in order
};

// NVML's three power-limit calls with its return codes, over a FakeDriver.
struct FakeNvml {
  FakeDriver* driver;
  int constraints(unsigned* min_mw, unsigned* max_mw) {
    *min_mw = driver->min_mw;
    *max_mw = driver->max_mw;
    return 0;
  }
  int limit(unsigned* mw) {
    *mw = driver->limit_mw;
    return 0;
  }
  int set_limit(unsigned mw) {
    driver->sets.push_back(mw);
    if (!driver->root) return cuda::kNvmlNoPermission;
    if (mw < driver->min_mw || mw > driver->max_mw) return 2;  // NVML_ERROR_INVALID_ARGUMENT
    driver->limit_mw = mw;
    return 0;
  }
  std::string error_text(int code) const {
    return code == cuda::kNvmlNoPermission ? "Insufficient Permissions" : "Invalid Argument";
  }
  std::string device_id() const { return "00000000:01:00.0"; }
};

// The CPU backend, measuring for real, with a power limit behind a fake NVML.
class CappableCpuBackend final : public Backend {
 public:
  explicit CappableCpuBackend(FakeDriver& driver)
      : cpu_(*Registry::instance().backend("cpu")), limit_(FakeNvml{&driver}) {}
  std::string name() const override { return cpu_.name(); }
  std::string unavailable_reason() const override { return cpu_.unavailable_reason(); }
  DeviceInfo identify() override { return cpu_.identify(); }
  DeviceInfo describe(int threads) override { return cpu_.describe(threads); }
  double time_launch(PreparedPoint& point) override { return cpu_.time_launch(point); }
  double measure_clock_mhz() override { return cpu_.measure_clock_mhz(); }
  LaunchTelemetry last_launch_telemetry() const override { return cpu_.last_launch_telemetry(); }
  int max_threads() const override { return cpu_.max_threads(); }
  ForeignUse foreign_use() override { return cpu_.foreign_use(); }
  PowerLimitControl* power_limit_control(std::string&) override { return &limit_; }

 private:
  Backend& cpu_;
  cuda::NvmlPowerLimit<FakeNvml> limit_;
};

MeasurementSettings short_settings() {
  MeasurementSettings s;
  s.warmup_seconds = 1e-3;
  s.min_samples = 3;
  s.min_seconds = 5e-3;
  s.max_noise = 0.5;
  s.timeout_seconds = 0.05;
  s.target_launch_seconds = 1e-3;
  return s;
}

const DeviceInfo& cpu_device() {
  static const DeviceInfo device = Registry::instance().backend("cpu")->describe(1);
  return device;
}

// Two points of the CPU flops probe: FP64 FMA (measured again under a cap) and FP64 no-FMA (not).
Plan flops_plan() {
  const Probe* flops = Registry::instance().probe("cpu", "flops");
  std::string chain;
  for (const Axis& a : flops->info().axes)
    if (a.name == "flops_per_element") chain = a.choices.front();
  Plan plan;
  plan.backend = "cpu";
  int index = 0;
  for (const char* form : {"fma", "nofma"})
    plan.points.push_back(
        {index++,
         flops,
         {{"precision", "fp64"}, {"form", form}, {"flops_per_element", chain}, {"bytes_per_thread", "16384"}}});
  return plan;
}

std::vector<unsigned> mw(std::initializer_list<double> watts) {
  std::vector<unsigned> out;
  for (double w : watts) out.push_back(static_cast<unsigned>(w * 1000));
  return out;
}

TEST(PowerCaps, ParsesPositiveFiniteDistinctWatts) {
  EXPECT_EQ(parse_power_caps("300,400,500,700"), (std::vector<double>{300, 400, 500, 700}));
  EXPECT_EQ(parse_power_caps("250.5"), (std::vector<double>{250.5}));
  for (const char* bad : {"", "300,", ",300", "300,,400", "0", "-300", "nan", "inf", "300W", "abc", "300,300", "1e999"})
    EXPECT_THROW(parse_power_caps(bad), InputError) << bad;
  try {
    parse_power_caps("300,400,300");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("300 W is listed twice"), std::string::npos) << e.what();
  }
}

TEST(PowerCaps, TheCpuBackendRefusesWithItsReason) {
  try {
    power_limit_control_of(*Registry::instance().backend("cpu"));
    FAIL() << "the CPU backend offered a power limit";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("--power-caps: the cpu backend cannot set a power limit"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
}

TEST(PowerCaps, ACapOutsideTheConstraintsIsRefusedBeforeAnySet) {
  FakeDriver driver;
  CappableCpuBackend backend(driver);
  PowerLimitControl& control = power_limit_control_of(backend);
  for (double cap : {99.0, 701.0}) {
    try {
      check_power_caps(control, {300, cap});
      FAIL() << cap;
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("outside the device's limits, 100 to 700 W"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos);
    }
  }
  EXPECT_TRUE(driver.sets.empty());
  EXPECT_EQ(driver.limit_mw, kOriginalMw);
}

TEST(PowerCaps, WithoutPermissionTheRunSaysRootIsNeededAndTheLimitStays) {
  FakeDriver driver;
  driver.root = false;
  CappableCpuBackend backend(driver);
  try {
    check_power_caps(power_limit_control_of(backend), {300, 400});
    FAIL() << "no permission went unnoticed";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("needs root"), std::string::npos) << what;
    EXPECT_NE(what.find("Insufficient Permissions"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  // The one question NVML answers about the right: setting the limit it has. Never a cap.
  for (unsigned set : driver.sets) EXPECT_EQ(set, kOriginalMw);
  EXPECT_EQ(driver.limit_mw, kOriginalMw);
}

// NVML counts milliwatts: a cap of 300.4 W is 300400 mW, not 300 W; and the command printed for a
// SIGKILLed run names the GPU by the bus id nvidia-smi takes.
TEST(PowerCaps, WattsBecomeMilliwattsAndTheRestoreCommandNamesTheGpu) {
  FakeDriver driver;
  cuda::NvmlPowerLimit<FakeNvml> limit(FakeNvml{&driver});
  limit.set_w(300.4);
  EXPECT_EQ(driver.sets, (std::vector<unsigned>{300400}));
  EXPECT_DOUBLE_EQ(limit.current_w(), 300.4);
  const PowerLimitRange range = limit.constraints();
  EXPECT_DOUBLE_EQ(range.min_w, 100);
  EXPECT_DOUBLE_EQ(range.max_w, 700);
  EXPECT_EQ(limit.restore_command(250), "nvidia-smi -i 00000000:01:00.0 -pl 250");
  EXPECT_THROW(limit.set_w(800), PowerLimitError);  // the driver's refusal is not swallowed
}

TEST(PowerCaps, OnlyTheFmaTensorAndDeviceMemoryPointsAreMeasuredAgain) {
  Plan plan = flops_plan();
  const Probe* bandwidth = Registry::instance().probe("cpu", "bandwidth");
  int index = static_cast<int>(plan.points.size());
  for (const char* size : {"1048576", "67108864"})
    for (const char* mode : {"read", "copy"})
      plan.points.push_back({index++, bandwidth, {{"working_set_bytes", size}, {"mode", mode}}});
  DeviceInfo device;
  device.caches = {{"L1", 32768, 4}, {"L2", 4u << 20, 1}};  // 4 MiB largest: memory from 16 MiB
  const Plan capped = power_cap_plan(plan, device);
  ASSERT_EQ(capped.points.size(), 2u);
  EXPECT_EQ(capped.points[0].params.at("form"), "fma");
  EXPECT_EQ(capped.points[0].index, 0);
  EXPECT_EQ(capped.points[1].params.at("working_set_bytes"), "67108864");
  EXPECT_EQ(capped.points[1].params.at("mode"), "read");
}

struct CapRun {
  std::vector<Sample> own;
  SweepOutcome capped;
};

// The run's own plan, then its FMA point under each cap, as run_session does.
CapRun run_with_caps(CappableCpuBackend& backend, const std::vector<double>& caps, const std::string& sweep_path,
                     const SweepHooks& hooks) {
  PowerLimitControl& control = power_limit_control_of(backend);
  const double original = check_power_caps(control, caps);
  const Plan plan = flops_plan();
  SweepWriter sweep(sweep_path);
  CapRun run;
  run.own = run_sweep(backend, cpu_device(), plan, short_settings(), {}, sweep, hooks).samples;
  run.capped = run_power_caps(backend, control, original, cpu_device(), power_cap_plan(plan, cpu_device()), caps,
                              short_settings(), sweep, hooks);
  return run;
}

TEST(PowerCaps, EachCapIsSetInOrderAndTheLimitRestoredAtTheEnd) {
  FakeDriver driver;
  CappableCpuBackend backend(driver);
  TempDir dir;
  const std::string path = (dir.path() / "sweep.csv").string();
  SweepHooks hooks;
  hooks.report = [](const std::string&) {};
  const CapRun run = run_with_caps(backend, {300, 400, 500}, path, hooks);
  // The permission check (the limit it has), the caps in order, the original again.
  EXPECT_EQ(driver.sets, mw({250, 300, 400, 500, 250}));
  EXPECT_EQ(driver.limit_mw, kOriginalMw);
  EXPECT_EQ(run.capped.failures, 0);
  EXPECT_EQ(run.capped.stopped_by, 0);

  // Every sample names the cap it ran under, in sweep.csv too; the run's own carry none.
  const std::vector<Sample> back = read_sweep_csv(path);
  std::vector<double> caps_seen;
  for (const Sample& s : back) {
    if (s.power_cap_w == 0) continue;
    EXPECT_EQ(s.params.at("form"), "fma");
    if (caps_seen.empty() || caps_seen.back() != s.power_cap_w) caps_seen.push_back(s.power_cap_w);
  }
  EXPECT_EQ(caps_seen, (std::vector<double>{300, 400, 500}));
  for (const Sample& s : run.own) EXPECT_EQ(s.power_cap_w, 0);

  // The fit keeps them apart: the machine's own ceilings from the uncapped samples, one block per cap.
  Machine machine;
  machine.device = cpu_device();
  machine.device.extra[kExtraPowerLimitSetW] = "250";
  fit_samples(back, machine);
  ASSERT_TRUE(machine.power_caps.has_value());
  EXPECT_EQ(machine.power_caps->restored_w, 250);
  ASSERT_EQ(machine.power_caps->caps.size(), 3u);
  double own_fma = 0;
  for (const ComputeCeiling& c : machine.compute)
    if (c.name == "FP64.FMA") own_fma = c.gflops;
  EXPECT_GT(own_fma, 0);
  for (std::size_t i = 0; i < 3; ++i) {
    const PowerCapResult& cap = machine.power_caps->caps[i];
    EXPECT_EQ(cap.cap_w, 300 + 100 * static_cast<double>(i));
    ASSERT_EQ(cap.ceilings.size(), 1u);
    EXPECT_EQ(cap.ceilings[0].name, "FP64.FMA");
    EXPECT_EQ(cap.ceilings[0].kind, "compute");
    EXPECT_GT(cap.ceilings[0].rate, 0);
    EXPECT_GT(cap.ceilings[0].samples, 0);
  }

  // The summary's table: one row per cap and ceiling, beside the rate under the device's own limit.
  std::ostringstream summary;
  print_summary(summary, machine, "dir");
  EXPECT_NE(summary.str().find("under power caps (limit restored to 250 W)"), std::string::npos) << summary.str();
  for (const char* cap : {"300 W", "400 W", "500 W"})
    EXPECT_NE(summary.str().find(std::string("\n  ") + cap + "    FP64.FMA"), std::string::npos) << summary.str();

  // Written, read back and validated.
  const std::string yaml = machine_to_yaml(machine);
  const Machine read = read_machine_text(yaml, "machine.yaml");
  ASSERT_TRUE(read.power_caps.has_value());
  ASSERT_EQ(read.power_caps->caps.size(), 3u);
  EXPECT_EQ(read.power_caps->caps[1].cap_w, 400);
  EXPECT_DOUBLE_EQ(read.power_caps->caps[1].ceilings[0].rate, machine.power_caps->caps[1].ceilings[0].rate);
  EXPECT_EQ(read.power_caps->caps[1].ceilings[0].samples, machine.power_caps->caps[1].ceilings[0].samples);
  EXPECT_EQ(machine_to_yaml(read), yaml);
  EXPECT_TRUE(validate_machine_text(yaml, "machine.yaml").empty());
}

TEST(PowerCaps, TheLimitIsRestoredWhenTheRunThrowsMidway) {
  FakeDriver driver;
  CappableCpuBackend backend(driver);
  TempDir dir;
  SweepHooks hooks;
  hooks.report = [](const std::string&) {};
  hooks.progress = [&](int, const std::string& label) {
    if (label.rfind("power cap 400 W", 0) == 0) throw std::runtime_error("disk full");
  };
  EXPECT_THROW(run_with_caps(backend, {300, 400, 500}, (dir.path() / "sweep.csv").string(), hooks), std::runtime_error);
  EXPECT_EQ(driver.sets, mw({250, 300, 400, 250}));
  EXPECT_EQ(driver.limit_mw, kOriginalMw);
}

// In a child process (gtest's threadsafe death tests run the test again in a fresh process: the
// stop signal stays set for the rest of a process, and OpenMP is not fork-safe): SIGTERM while the
// second cap is measured stops the run there and sets the limit back; exit status 0 when the
// driver saw exactly that.
TEST(PowerCapsDeathTest, ASigtermMidRunStopsAndRestoresTheLimit) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempDir dir;
  EXPECT_EXIT(
      {
        install_stop_handlers();
        FakeDriver driver;
        CappableCpuBackend backend(driver);
        SweepHooks hooks;
        hooks.stop_requested = [] { return stop_requested(); };
        hooks.report = [](const std::string&) {};
        hooks.progress = [&](int, const std::string& label) {
          if (label.rfind("power cap 400 W", 0) == 0) std::raise(SIGTERM);
        };
        const CapRun run = run_with_caps(backend, {300, 400, 500}, (dir.path() / "sweep.csv").string(), hooks);
        const bool ok = driver.sets == mw({250, 300, 400, 250}) && driver.limit_mw == kOriginalMw &&
                        run.capped.stopped_by == SIGTERM;
        std::filesystem::remove_all(dir.path());  // std::exit runs no destructor
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// A second SIGTERM (normally "stop now") waits until the limit is set back, then ends the process.
TEST(PowerCapsDeathTest, ASecondSignalEndsTheRunOnlyAfterTheRestore) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TempDir dir;
  EXPECT_EXIT(
      {
        install_stop_handlers();
        FakeDriver driver;
        CappableCpuBackend backend(driver);
        SweepHooks hooks;
        hooks.stop_requested = [] { return stop_requested(); };
        hooks.report = [&](const std::string& line) {
          std::fprintf(stderr, "%s (driver: %u mW)\n", line.c_str(), driver.limit_mw);
          // The process ends right after the restore: its directory goes first.
          if (line.find("restored") != std::string::npos) std::filesystem::remove_all(dir.path());
        };
        hooks.progress = [&](int, const std::string& label) {
          if (label.rfind("power cap 400 W", 0) == 0) {
            std::raise(SIGTERM);
            std::raise(SIGTERM);
          }
        };
        run_with_caps(backend, {300, 400, 500}, (dir.path() / "sweep.csv").string(), hooks);
        std::exit(0);  // not reached: the held signal ends the process
      },
      ::testing::KilledBySignal(SIGTERM), "power limit restored to 250 W \\(driver: 250000 mW\\)");
}

TEST(PowerCaps, SweepsWithoutThePowerCapColumnStillRead) {
  TempDir dir;
  Sample s;
  s.backend = "cpu";
  s.probe = "flops";
  s.params = {{"precision", "fp64"}};
  s.seconds = 1;
  s.point_samples = 1;
  s.power_cap_w = 300;
  // A sweep written before the column: its header and rows end at energy_j.
  std::string header = sweep_csv_header();
  header = header.substr(0, header.rfind(",power_cap_w"));
  std::string row = sweep_csv_row(s);
  for (int i = 0; i < 2; ++i) row = row.substr(0, row.rfind(','));
  const std::string old_path = (dir.path() / "old.csv").string();
  std::ofstream(old_path) << header << "\n" << row << "\n";
  const std::vector<Sample> old = read_sweep_csv(old_path);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].power_cap_w, 0);
  const std::string new_path = (dir.path() / "new.csv").string();
  std::ofstream(new_path) << sweep_csv_header() << "\n" << sweep_csv_row(s) << "\n";
  EXPECT_EQ(read_sweep_csv(new_path).at(0).power_cap_w, 300);
}

}  // namespace
}  // namespace roofprobe
