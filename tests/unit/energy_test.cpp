// Energy: the CPU's RAPL counters through powercap sysfs (on a tree laid out as the kernel lays
// it), the engine's energy per point, sweep.csv's energy_j column, the counter's
// characterization, and the energy figures the fit derives.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "driver/fit/energy.hpp"
#include "driver/model/errors.hpp"
#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"
#include "driver/report/summary.hpp"
#include "driver/run/energy_counter.hpp"
#include "driver/run/engine.hpp"
#include "kernels/cpu/rapl.hpp"
#include "tests/unit/energy_sweep_support.hpp"
#include "temp_dir.hpp"

namespace fs = std::filesystem;

namespace roofprobe {
namespace {

void write(const fs::path& file, const std::string& text) {
  fs::create_directories(file.parent_path());
  std::ofstream(file) << text << "\n";
}

// One zone as /sys/class/powercap/intel-rapl:... holds it (the files the reader opens).
void zone(const fs::path& root, const std::string& dir, const std::string& name, std::uint64_t energy_uj,
          std::uint64_t range_uj) {
  write(root / dir / "name", name);
  write(root / dir / "energy_uj", std::to_string(energy_uj));
  write(root / dir / "max_energy_range_uj", std::to_string(range_uj));
  write(root / dir / "enabled", "1");
}

TEST(Rapl, SumsPackagesAndDramButNotTheirPartsOrThePlatform) {
  TempDir d;
  const fs::path root = d.path() / "powercap";
  zone(root, "intel-rapl:0", "package-0", 1000000, 262143328850);
  zone(root, "intel-rapl:0:0", "core", 500000, 262143328850);  // inside the package
  zone(root, "intel-rapl:0:1", "dram", 200000, 65712999613);   // beside it
  zone(root, "intel-rapl:1", "psys", 9000000, 262143328850);   // the platform: holds the package
  write(root / "intel-rapl" / "enabled", "1");                 // the control type's own folder
  cpu::RaplEnergy rapl(root.string());
  ASSERT_EQ(rapl.unavailable_reason(), "");
  EXPECT_EQ(rapl.domains(), "package-0+dram");
  ASSERT_EQ(rapl.joules().value_or(-1), 0.0);
  write(root / "intel-rapl:0" / "energy_uj", "3500000");    // +2.5 J
  write(root / "intel-rapl:0:0" / "energy_uj", "9500000");  // ignored
  write(root / "intel-rapl:0:1" / "energy_uj", "700000");   // +0.5 J
  write(root / "intel-rapl:1" / "energy_uj", "99000000");   // ignored
  EXPECT_NEAR(rapl.joules().value_or(-1), 3.0, 1e-9);
}

TEST(Rapl, ACounterThatWrapsKeepsCounting) {
  TempDir d;
  const fs::path root = d.path() / "powercap";
  zone(root, "intel-rapl:0", "package-0", 999000, 999999);  // 1 mJ below the wrap
  cpu::RaplEnergy rapl(root.string());
  ASSERT_TRUE(rapl.joules());
  write(root / "intel-rapl:0" / "energy_uj", "4000");  // wrapped: 999999 -> 0 -> 4000
  EXPECT_NEAR(rapl.joules().value_or(-1), (999999 - 999000 + 1 + 4000) * 1e-6, 1e-12);
  write(root / "intel-rapl:0" / "energy_uj", "5000");
  EXPECT_NEAR(rapl.joules().value_or(-1), (999999 - 999000 + 1 + 5000) * 1e-6, 1e-12);
}

TEST(Rapl, SaysWhyWhereThereIsNoCounter) {
  TempDir d;
  cpu::RaplEnergy absent((d.path() / "no-such-dir").string());
  EXPECT_NE(absent.unavailable_reason().find("does not exist"), std::string::npos) << absent.unavailable_reason();
  EXPECT_FALSE(absent.joules());

  const fs::path root = d.path() / "powercap";
  zone(root, "intel-rapl:0", "package-0", 0, 100);
  write(root / "intel-rapl:0" / "energy_uj", "");  // what a non-root read of a 0400 file yields here
  cpu::RaplEnergy unreadable(root.string());
  EXPECT_NE(unreadable.unavailable_reason().find("energy_uj"), std::string::npos) << unreadable.unavailable_reason();
  EXPECT_FALSE(unreadable.joules());

  // The counter vanishing after the start (a module unloaded) ends the readings.
  const fs::path other = d.path() / "other";
  zone(other, "intel-rapl:0", "package-0", 10, 100);
  cpu::RaplEnergy vanishing(other.string());
  ASSERT_TRUE(vanishing.joules());
  fs::remove(other / "intel-rapl:0" / "energy_uj");
  EXPECT_FALSE(vanishing.joules());
}

// A point whose launches take a fixed time, on a backend whose energy counter advances at a
// fixed power while launches run.
class SteadyPoint : public PreparedPoint {
 public:
  Work work() const override {
    Work w;
    w.flops = 1e9;
    w.working_set_bytes = 4096;
    return w;
  }
  void launch() override {}
  Check verify() override { return Check{true, ""}; }
  void set_repetitions(std::int64_t) override {}
  std::int64_t repetitions() const override { return 1; }
};

class PoweredBackend : public Backend {
 public:
  // in_real_time: each launch also takes its time on the wall clock, as a device's does, for the
  // phases whose length is wall time.
  explicit PoweredBackend(double watts, bool in_real_time = false) : watts_(watts), in_real_time_(in_real_time) {}
  std::string name() const override { return "powered"; }
  std::string unavailable_reason() const override { return {}; }
  DeviceInfo identify() override { return {}; }
  DeviceInfo describe(int) override { return {}; }
  double time_launch(PreparedPoint& p) override {
    p.launch();
    const double seconds = 0.01 + 0.001 * (++launches_ % 3);  // launches of varying length
    joules_ += watts_ * seconds;
    if (in_real_time_) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    return seconds;
  }
  double measure_clock_mhz() override { return 2000; }
  std::optional<double> energy_joules() override { return joules_; }
  EnergyCounterInfo energy_counter() const override { return {true, "test counter", ""}; }

 private:
  double watts_;
  bool in_real_time_;
  double joules_ = 0;
  int launches_ = 0;
};

TEST(EnergyEngine, EachSampleGetsItsShareOfThePointsEnergy) {
  PoweredBackend backend(300);
  SteadyPoint point;
  const PointMeasurement m = measure_point(backend, point, energy_testing::quick_settings());
  ASSERT_TRUE(m.energy_j);
  double seconds = 0;
  for (double t : m.seconds) seconds += t;
  EXPECT_NEAR(*m.energy_j, 300 * seconds, 1e-9) << "the counter is read around the sampled launches only";
  double sum = 0;
  for (const Sample& s : samples_of(m, "powered", "probe", {}, 0, 0)) {
    EXPECT_NEAR(s.energy_j / s.seconds, 300, 1e-6);
    sum += s.energy_j;
  }
  EXPECT_NEAR(sum, *m.energy_j, 1e-9);

  // A backend without a counter leaves every sample at 0.
  class Unpowered : public PoweredBackend {
   public:
    Unpowered() : PoweredBackend(0) {}
    std::optional<double> energy_joules() override { return std::nullopt; }
  } none;
  const PointMeasurement n = measure_point(none, point, energy_testing::quick_settings());
  EXPECT_FALSE(n.energy_j);
  for (const Sample& s : samples_of(n, "x", "probe", {}, 0, 0)) EXPECT_EQ(s.energy_j, 0);
}

TEST(EnergyEngine, ASettledPhaseRunsOnUntilTheCounterCanResolveIt) {
  // Steady launches settle after three windows; a phase stops then once half its time is over,
  // unless the energy counter needs longer (least_seconds). The phase's length is wall time, and
  // the launches' own times are bounded by it however loaded this machine is: a stall lengthens
  // the wall time, never the launches.
  PoweredBackend backend(300, true);
  SteadyPoint point;
  const auto launched = [](const SustainedMeasurement& m) {
    double seconds = 0;
    for (const SustainedWindow& w : m.windows) seconds += w.seconds;
    return seconds;
  };
  // 0.6 s: windows of 0.03 s, three launches each (the launches' lengths repeat every three).
  const SustainedMeasurement early = measure_sustained(backend, point, energy_testing::quick_settings(), 0.6);
  ASSERT_TRUE(early.settled);
  EXPECT_LT(launched(early), 0.45) << "a settled phase stops after half its time";
  const auto start = std::chrono::steady_clock::now();
  const SustainedMeasurement held =
      measure_sustained(backend, point, energy_testing::quick_settings(), 0.6, {}, {}, 0.55);
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0.55);
  ASSERT_TRUE(held.settled);
  EXPECT_GT(held.windows.size(), early.windows.size());
  // The windows are read back to back: their energies add up to the counter's advance.
  double joules = 0;
  for (const SustainedWindow& w : held.windows) {
    ASSERT_TRUE(w.energy_j);
    joules += *w.energy_j;
  }
  EXPECT_NEAR(joules, 300 * launched(held), 1e-6 * joules);
}

TEST(EnergySweep, EnergyRoundTripsAndOlderSweepsReadAsUnmeasured) {
  TempDir d;
  Sample s;
  s.backend = "cpu";
  s.probe = "flops";
  s.params = {{"precision", "fp64"}};
  s.seconds = 0.01;
  s.flops = 1e9;
  s.gflops = 100;
  s.energy_j = 1.25;
  const std::string path = (d.path() / "sweep.csv").string();
  {
    SweepWriter w(path);
    w.append_point({s});
  }
  const std::vector<Sample> back = read_sweep_csv(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_DOUBLE_EQ(back[0].energy_j, 1.25);

  // A sweep written before the column existed: its header ends at throttle (energy_j and the
  // later power_cap_w and phase cut off).
  std::string header = sweep_csv_header();
  header = header.substr(0, header.rfind(",energy_j"));
  std::string row = sweep_csv_row(s);
  for (int i = 0; i < 3; ++i) row = row.substr(0, row.rfind(','));
  const std::string old_path = (d.path() / "old.csv").string();
  std::ofstream(old_path) << header << "\n" << row << "\n";
  const std::vector<Sample> old = read_sweep_csv(old_path);
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].energy_j, 0);

  // A negative energy is not a measurement.
  const std::string bad_path = (d.path() / "bad.csv").string();
  std::string bad = sweep_csv_row(s);
  bad = bad.substr(0, bad.rfind(','));
  bad = bad.substr(0, bad.rfind(','));
  bad = bad.substr(0, bad.rfind(',')) + ",-1,0,";
  std::ofstream(bad_path) << sweep_csv_header() << "\n" << bad << "\n" << sweep_csv_row(s) << "\n";
  EXPECT_THROW(read_sweep_csv(bad_path), InputError);
}

// A counter that the driver updates every 20 ms at 50 W, as NVML's and RAPL's are updated at
// their own intervals, read against the real clock.
class TickingBackend : public PoweredBackend {
 public:
  TickingBackend() : PoweredBackend(0), start_(std::chrono::steady_clock::now()) {}
  std::optional<double> energy_joules() override {
    const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    return 50.0 * 0.02 * std::floor(t / 0.02);
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

TEST(EnergyCounter, MeasuresTheUpdateIntervalAndTheIdlePower) {
  TickingBackend backend;
  DeviceInfo device;
  describe_energy_counter(backend, device, 0.4);
  EXPECT_EQ(device.extra[kEnergyCounterKey], "test counter");
  const double update = std::stod(device.extra[kEnergyUpdateKey]);
  const double idle = std::stod(device.extra[kIdlePowerKey]);
  // Bounds wide enough for a loaded machine that oversleeps its 1 ms polls.
  EXPECT_GT(update, 0.015);
  EXPECT_LT(update, 0.045);
  EXPECT_NEAR(idle, 50, 10);

  class NoCounter : public PoweredBackend {
   public:
    NoCounter() : PoweredBackend(0) {}
    EnergyCounterInfo energy_counter() const override { return {false, "", "no RAPL here"}; }
  } none;
  DeviceInfo bare;
  describe_energy_counter(none, bare, 0.01);
  EXPECT_EQ(bare.extra[kEnergyCounterKey], "none: no RAPL here");
  EXPECT_EQ(bare.extra.count(kEnergyUpdateKey), 0u);
}

// Samples of one compute ceiling's point and of one memory level's plateau, with energies.
std::vector<Sample> powered_samples(double point_seconds) {
  std::vector<Sample> out;
  auto add = [&](const std::string& probe, const Params& p, double ws, double flops, double bytes, int point,
                 double watts) {
    const int n = 5;
    for (int i = 0; i < n; ++i) {
      Sample s;
      s.backend = "cpu";
      s.probe = probe;
      s.params = p;
      s.point = point;
      s.working_set_bytes = ws;
      s.seconds = point_seconds / n;
      s.flops = flops;
      s.bytes = bytes;
      s.energy_j = watts * s.seconds;
      out.push_back(s);
    }
  };
  add("flops", {{"precision", "fp64"}, {"form", "fma"}}, 32768, 2e9, 0, 0, 100);
  add("bandwidth", {{"mode", "read"}, {"working_set_bytes", "1073741824"}}, 1073741824, 0, 4e9, 1, 80);
  add("bandwidth", {{"mode", "read"}, {"working_set_bytes", "4096"}}, 4096, 0, 4e9, 2, 60);  // another level
  return out;
}

Machine fitted_machine(const std::string& counter) {
  Machine m;
  m.device.kind = "cpu";
  m.device.backend = "cpu";
  m.device.name = "test CPU";
  m.device.extra[kEnergyCounterKey] = counter;
  m.device.extra[kEnergyUpdateKey] = "0.001";
  m.device.extra[kIdlePowerKey] = "20";
  ComputeCeiling c;
  c.name = "FP64.FMA";
  c.gflops = 400;
  c.probe = "flops";
  c.params = {{"precision", "fp64"}, {"form", "fma"}};
  m.compute.push_back(c);
  MemoryLevel l;
  l.level = "DRAM";
  l.gbs = 40;
  l.probe = "bandwidth";
  l.params = {{"mode", "read"}};
  l.working_set_lo = 1e8;
  l.working_set_hi = 2e9;
  m.memory.push_back(l);
  return m;
}

TEST(FitEnergy, PowerAndEnergyPerFlopAndPerByteOfEachCeiling) {
  Machine m = fitted_machine("RAPL package-0 (powercap sysfs)");
  fit_energy(powered_samples(0.5), m);
  ASSERT_TRUE(m.energy) << (m.missing.empty() ? "" : m.missing.back());
  EXPECT_EQ(m.energy->idle_power_w, 20);
  EXPECT_DOUBLE_EQ(m.energy->min_point_seconds, kEnergyIntervalsPerPoint * 0.001);
  ASSERT_EQ(m.energy->ceilings.size(), 2u);
  const EnergyFigure& fma = m.energy->ceilings[0];
  EXPECT_EQ(fma.name, "FP64.FMA");
  EXPECT_NEAR(fma.power_w, 100, 1e-9);
  // 100 W x 0.1 s per sample / 2e9 FLOP = 5 nJ/FLOP = 5000 pJ/FLOP.
  EXPECT_NEAR(fma.pj_per_flop, 5000, 1e-6);
  EXPECT_EQ(fma.samples, 5);
  const EnergyFigure& dram = m.energy->ceilings[1];
  EXPECT_EQ(dram.name, "DRAM");
  EXPECT_NEAR(dram.power_w, 80, 1e-9) << "only the samples inside the level's plateau";
  EXPECT_NEAR(dram.pj_per_byte, 80 * 0.1 / 4e9 * 1e12, 1e-6);

  // The section survives the machine file.
  const Machine back = read_machine_text(machine_to_yaml(m), "m.yaml");
  ASSERT_TRUE(back.energy);
  EXPECT_EQ(back.energy->counter, "RAPL package-0 (powercap sysfs)");
  ASSERT_EQ(back.energy->ceilings.size(), 2u);
  EXPECT_NEAR(back.energy->ceilings[1].pj_per_byte, dram.pj_per_byte, 1e-6 * dram.pj_per_byte);
  const std::vector<std::string> problems = validate_machine_text(machine_to_yaml(m), "m.yaml");
  EXPECT_TRUE(problems.empty()) << problems.front();

  // The summary shows each figure with its unit.
  std::ostringstream summary;
  print_summary(summary, m, "dir");
  EXPECT_NE(summary.str().find("energy (RAPL package-0 (powercap sysfs), idle 20.0 W)"), std::string::npos)
      << summary.str();
  EXPECT_NE(summary.str().find("100.0 W     5000.00 pJ/FLOP"), std::string::npos) << summary.str();
  EXPECT_NE(summary.str().find("80.0 W      2000.0 pJ/B"), std::string::npos) << summary.str();
}

TEST(FitEnergy, SustainedWindowsCountApartFromTheSweepsSamples) {
  // The sweep's samples of a point and its sustained windows are two stretches of counter
  // readings, each off by up to an update at both ends: a short sweep stretch added to a long
  // sustained one would add its error. Only the stretch long enough on its own counts.
  Machine m = fitted_machine("NVML total energy");
  m.device.extra[kEnergyUpdateKey] = "0.1";  // 40 updates: 4 s
  std::vector<Sample> samples;
  for (int i = 0; i < 20; ++i) {
    Sample s;
    s.backend = "cuda";
    s.probe = "flops";
    s.params = {{"precision", "fp64"}, {"form", "fma"}};
    s.point = 0;
    s.flops = 2e9;
    const bool sustained = i >= 4;
    s.seconds = sustained ? 0.25 : 0.05;               // 4 s of windows, 0.2 s of sweep samples
    s.energy_j = (sustained ? 500 : 900) * s.seconds;  // the short stretch read high
    if (sustained) s.phase = std::string(kSustainedPhase) + "FP64.FMA";
    samples.push_back(s);
  }
  fit_energy(samples, m);
  ASSERT_TRUE(m.energy) << (m.missing.empty() ? "" : m.missing.back());
  ASSERT_EQ(m.energy->ceilings.size(), 1u);
  EXPECT_NEAR(m.energy->ceilings[0].power_w, 500, 1e-9);
  EXPECT_EQ(m.energy->ceilings[0].samples, 16);

  // Without the sustained stretch, nothing is long enough, and the note says what to raise.
  samples.resize(4);
  Machine short_only = fitted_machine("NVML total energy");
  short_only.device.extra[kEnergyUpdateKey] = "0.1";
  fit_energy(samples, short_only);
  EXPECT_FALSE(short_only.energy);
  ASSERT_EQ(short_only.missing.size(), 1u);
  EXPECT_NE(short_only.missing[0].find("sustained_seconds"), std::string::npos) << short_only.missing[0];
}

TEST(FitEnergy, NamesWhyThereAreNoEnergyFigures) {
  Machine none = fitted_machine("none: no RAPL energy counters: /sys/class/powercap does not exist");
  fit_energy(powered_samples(0.5), none);
  EXPECT_FALSE(none.energy);
  ASSERT_EQ(none.missing.size(), 1u);
  EXPECT_EQ(none.missing[0], "energy ceilings: no RAPL energy counters: /sys/class/powercap does not exist");

  // Points shorter than 40 updates of the counter (0.03 s < 40 ms) give no figure.
  Machine short_points = fitted_machine("RAPL package-0 (powercap sysfs)");
  fit_energy(powered_samples(0.03), short_points);
  EXPECT_FALSE(short_points.energy);
  ASSERT_EQ(short_points.missing.size(), 1u);
  EXPECT_NE(short_points.missing[0].find("0.04 s or longer"), std::string::npos) << short_points.missing[0];

  // A point another process disturbed carries that process's energy too: it gives no figure.
  Machine disturbed = fitted_machine("RAPL package-0 (powercap sysfs)");
  std::vector<Sample> foreign = powered_samples(0.5);
  for (Sample& s : foreign) s.flags = kForeignLoadFlag;
  fit_energy(foreign, disturbed);
  EXPECT_FALSE(disturbed.energy);

  // A sweep from before energy was read says nothing about energy.
  Machine old;
  fit_energy(powered_samples(0.5), old);
  EXPECT_FALSE(old.energy);
  EXPECT_TRUE(old.missing.empty());
}

TEST(FitEnergy, AnEnergySectionOfAnotherSchemaIsRefused) {
  Machine m = fitted_machine("c");
  fit_energy(powered_samples(0.5), m);
  std::string yaml = machine_to_yaml(m);
  const std::string schema = std::string("schema: ") + kEnergySchema;
  ASSERT_NE(yaml.find(schema), std::string::npos);
  yaml.replace(yaml.find(schema), schema.size(), "schema: roofprobe.energy/9");
  EXPECT_THROW(read_machine_text(yaml, "m.yaml"), InputError);
}

}  // namespace
}  // namespace roofprobe
