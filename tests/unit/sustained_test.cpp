// The sustained phase: the settle rule, the fit of sustained rows, their sweep.csv column and
// machine-file key, the config key. Rows here are built (synthetic), not recorded: each test
// builds the windows it needs.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "driver/fit/fit.hpp"
#include "driver/model/errors.hpp"
#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"
#include "driver/run/config.hpp"
#include "driver/run/engine.hpp"
#include "driver/run/plan.hpp"
#include "driver/session/sustained_phase.hpp"
#include "tests/unit/temp_file.hpp"

namespace roofprobe {
namespace {

// ---- settle rule ------------------------------------------------------------------------------

TEST(SustainedSettle, NeedsThreeWindows) {
  EXPECT_FALSE(windows_settled({}, {}));
  EXPECT_FALSE(windows_settled({100, 100}, {3000, 3000}));
  EXPECT_TRUE(windows_settled({100, 100, 100}, {3000, 3000, 3000}));
}

TEST(SustainedSettle, RatesWithinOnePercentOfTheirMean) {
  EXPECT_TRUE(windows_settled({100, 100.5, 99.6}, {0, 0, 0}));  // spread 0.9%
  EXPECT_FALSE(windows_settled({100, 101.5, 100}, {0, 0, 0}));  // spread 1.5%
  // Only the last three count: a ramp before them is the device settling.
  EXPECT_TRUE(windows_settled({150, 130, 100, 100.2, 99.9}, {0, 0, 0, 0, 0}));
}

TEST(SustainedSettle, TurboDecayIsNotSettledUntilTheTailIsFlat) {
  // A clock decaying by 2% a window: each window's rate follows it.
  std::vector<double> rates, clocks;
  for (int i = 0; i < 6; ++i) {
    clocks.push_back(3500 * (1 - 0.02 * i));
    rates.push_back(clocks.back() * 0.032);
    EXPECT_FALSE(windows_settled(rates, clocks)) << "window " << i;
  }
  for (int i = 0; i < 3; ++i) {
    clocks.push_back(3000);
    rates.push_back(96);
  }
  EXPECT_TRUE(windows_settled(rates, clocks));
}

TEST(SustainedSettle, ClockMustBeSteadyWhereMeasured) {
  EXPECT_FALSE(windows_settled({100, 100, 100}, {3000, 2900, 3000}));
  EXPECT_TRUE(windows_settled({100, 100, 100}, {3000, 3010, 3005}));
  // A window without a clock reading: the rates alone decide.
  EXPECT_TRUE(windows_settled({100, 100, 100}, {3000, 0, 2500}));
}

TEST(SustainedSettle, WindowLengthIsATwentiethWithAFloor) {
  EXPECT_DOUBLE_EQ(sustained_window_seconds(5), 0.25);
  EXPECT_DOUBLE_EQ(sustained_window_seconds(0.1), 0.02);
}

// ---- fit of sustained rows (built rows) -------------------------------------------------------

Machine burst_machine() {
  Machine m;
  m.device.kind = "cpu";
  m.device.memory_name = "DRAM";
  ComputeCeiling c;
  c.name = "FP64.FMA";
  c.gflops = 100;
  c.probe = "flops";
  m.compute.push_back(c);
  MemoryLevel l;
  l.level = "DRAM";
  l.gbs = 20;
  l.probe = "bandwidth";
  m.memory.push_back(l);
  return m;
}

// One built window of `ceiling` at `rate` (GFLOP/s for flops rows, GB/s for bandwidth rows).
Sample window(const std::string& ceiling, int index, double rate, double clock, double energy_j = 0) {
  Sample s;
  s.backend = "cpu";
  s.probe = ceiling == "DRAM" ? "bandwidth" : "flops";
  s.sample = index;
  s.seconds = 0.1;
  if (ceiling == "DRAM") {
    s.gbs = rate;
    s.bytes = rate * 1e9 * s.seconds;
  } else {
    s.gflops = rate;
    s.flops = rate * 1e9 * s.seconds;
  }
  s.clock_mhz = clock;
  s.energy_j = energy_j;
  s.phase = std::string(kSustainedPhase) + ceiling;
  return s;
}

TEST(SustainedFit, SettledWindowsGiveMeanIntervalClockAndPower) {
  Machine m = burst_machine();
  std::vector<Sample> rows;
  const double rates[] = {99, 95, 92, 91, 91.5, 91.2};
  for (int i = 0; i < 6; ++i) rows.push_back(window("FP64.FMA", i, rates[i], i < 3 ? 3400 - 100 * i : 3100, 2.0));
  fit_sustained(rows, m);
  ASSERT_TRUE(m.compute[0].sustained.has_value());
  const SustainedFigure& f = *m.compute[0].sustained;
  EXPECT_TRUE(f.settled);
  EXPECT_NEAR(f.rate, (91 + 91.5 + 91.2) / 3, 1e-9);
  // Student's t over three windows 0.25 apart: about 0.6 either side, not a bound at the mean.
  EXPECT_LT(f.ci95.lo, f.rate - 0.3);
  EXPECT_GT(f.ci95.hi, f.rate + 0.3);
  EXPECT_GT(f.ci95.lo, 90);
  EXPECT_LT(f.ci95.hi, 93);
  EXPECT_DOUBLE_EQ(f.clock_mhz, 3100);
  EXPECT_NEAR(f.power_w, 20, 1e-9);  // 2 J per 0.1 s window
  // The last three windows' energy (2 J each) over their FLOPs (rate x 1e9 x 0.1 each), in
  // picojoules: the counter updates every millisecond here, so three windows resolve it.
  const double pj = 3 * 2.0 / ((91 + 91.5 + 91.2) * 1e9 * 0.1) * 1e12;
  EXPECT_NEAR(f.pj_per_unit, pj, 1e-9);
  EXPECT_LT(f.pj_ci95.lo, pj);
  EXPECT_GT(f.pj_ci95.hi, pj);
  EXPECT_EQ(f.windows, 6);
  EXPECT_NEAR(f.seconds, 0.6, 1e-12);
  EXPECT_FALSE(m.memory[0].sustained.has_value()) << "no DRAM rows: no DRAM figure";
}

TEST(SustainedFit, EnergyRestsOnWindowsTheCounterCanResolve) {
  // A counter that updates every 0.1 s needs 4 s of windows: six settled windows of 0.1 s give a
  // rate but no energy figure, and the power is the board's reported one.
  Machine m = burst_machine();
  m.device.extra["energy_update_seconds"] = "0.1";
  std::vector<Sample> rows;
  for (int i = 0; i < 6; ++i) rows.push_back(window("FP64.FMA", i, 91, 3100, 2.0));
  for (Sample& r : rows) r.power_w = 25;
  fit_sustained(rows, m);
  ASSERT_TRUE(m.compute[0].sustained.has_value());
  EXPECT_TRUE(m.compute[0].sustained->settled);
  EXPECT_EQ(m.compute[0].sustained->pj_per_unit, 0);
  EXPECT_DOUBLE_EQ(m.compute[0].sustained->power_w, 25);

  // Forty-five windows: the last forty (4 s) carry the figure, the early ones, at another power,
  // do not.
  Machine longer = burst_machine();
  longer.device.extra["energy_update_seconds"] = "0.1";
  rows.clear();
  for (int i = 0; i < 45; ++i) rows.push_back(window("FP64.FMA", i, 91, 3100, i < 3 ? 9.0 : 2.0));
  fit_sustained(rows, longer);
  ASSERT_TRUE(longer.compute[0].sustained.has_value());
  EXPECT_NEAR(longer.compute[0].sustained->power_w, 20, 1e-9);
  EXPECT_NEAR(longer.compute[0].sustained->pj_per_unit, 2.0 / (91e9 * 0.1) * 1e12, 1e-9);
}

TEST(SustainedFit, AnEnergyTheWindowsDisagreeOnKeepsAPositiveInterval) {
  // Settled rates, but one window's counter took in another process's cores (a CPU package
  // counter does): 2, 2 and 8 J. Normal noise would reach below 0 picojoules; the file would then
  // be refused. The interval is the log-normal one, about the figure, and the file reads back.
  Machine m = burst_machine();
  std::vector<Sample> rows;
  const double joules[] = {2.0, 2.0, 8.0};
  for (int i = 0; i < 3; ++i) rows.push_back(window("FP64.FMA", i, 91, 3100, joules[i]));
  fit_sustained(rows, m);
  ASSERT_TRUE(m.compute[0].sustained.has_value());
  const SustainedFigure& f = *m.compute[0].sustained;
  const double pj = 12.0 / (3 * 91e9 * 0.1) * 1e12;
  EXPECT_NEAR(f.pj_per_unit, pj, 1e-9);
  ASSERT_TRUE(f.pj_ci95.known());
  EXPECT_GT(f.pj_ci95.lo, 0);
  EXPECT_LT(f.pj_ci95.lo, pj / 2) << "as wide as the windows' disagreement";
  EXPECT_GT(f.pj_ci95.hi, 2 * pj);
  EXPECT_NEAR(f.pj_ci95.lo * f.pj_ci95.hi, pj * pj, 1e-9 * pj * pj) << "symmetric in the logarithm";
  const Machine back = read_machine_text(machine_to_yaml(m), "m.yaml");
  ASSERT_TRUE(back.compute[0].sustained.has_value());
  EXPECT_NEAR(back.compute[0].sustained->pj_ci95.lo, f.pj_ci95.lo, 1e-4 * f.pj_ci95.lo);
}

TEST(SustainedFit, UnsettledIsMarkedWithoutInterval) {
  Machine m = burst_machine();
  std::vector<Sample> rows;
  for (int i = 0; i < 5; ++i) rows.push_back(window("DRAM", i, 20 - i, 0));
  fit_sustained(rows, m);
  ASSERT_TRUE(m.memory[0].sustained.has_value());
  EXPECT_FALSE(m.memory[0].sustained->settled);
  EXPECT_FALSE(m.memory[0].sustained->ci95.known());
  EXPECT_EQ(m.memory[0].sustained->pj_per_unit, 0) << "no energy counter: no energy figure";
  EXPECT_FALSE(m.compute[0].sustained.has_value());
}

TEST(SustainedFit, RowsOfAnUnknownCeilingAreNamed) {
  Machine m = burst_machine();
  fit_sustained({window("FP32.FMA", 0, 10, 0)}, m);
  ASSERT_EQ(m.missing.size(), 1u);
  EXPECT_NE(m.missing[0].find("FP32.FMA"), std::string::npos);
}

TEST(SustainedFit, ThrottleReasonsGiveWhatLimitedIt) {
  Machine m = burst_machine();
  m.device.extra["power_limit_w"] = "700";
  std::vector<Sample> rows;
  for (int i = 0; i < 3; ++i) {
    rows.push_back(window("FP64.FMA", i, 60, 1440));
    rows.back().throttle = "sw-power";
  }
  fit_sustained(rows, m);
  ASSERT_TRUE(m.compute[0].sustained.has_value());
  EXPECT_EQ(m.compute[0].sustained->throttled, "sw-power");
  EXPECT_EQ(m.compute[0].sustained->limited_by.rfind("power cap", 0), 0u) << m.compute[0].sustained->limited_by;
}

// The limit is that of the windows the figure rests on: a phase's first windows still carry the
// power of the phase before it (an H200's TF32 phase began throttled at 647 W and settled at its
// top clock, 494 W), and "limited by power cap" beside 1980 MHz and 494 W contradicts itself.
TEST(SustainedFit, TheLimitIsThatOfTheWindowsTheFigureRestsOn) {
  Machine m = burst_machine();
  m.device.extra["power_limit_w"] = "700";
  std::vector<Sample> rows;
  for (int i = 0; i < 6; ++i) {
    rows.push_back(window("FP64.FMA", i, 60, 1980));
    if (i < 2) rows.back().throttle = "sw-power";
  }
  fit_sustained(rows, m);
  ASSERT_TRUE(m.compute[0].sustained.has_value());
  EXPECT_TRUE(m.compute[0].sustained->settled);
  EXPECT_EQ(m.compute[0].sustained->throttled, "");
  EXPECT_EQ(m.compute[0].sustained->limited_by.find("power cap"), std::string::npos)
      << m.compute[0].sustained->limited_by;
}

// NVML can report sw-power around launches that ran at the device's top clock (an H200's FP64
// noFMA point: 1980 MHz of 1980, 529 W): nothing slowed them, and their limit is the clock.
TEST(SustainedFit, AReasonAtTheTopClockIsNoLimit) {
  Machine m = burst_machine();
  m.device.extra["power_limit_w"] = "700";
  m.device.extra["telemetry"] = "NVML: SM clock, board power and throttle reasons during every launch";
  m.device.clock_max_mhz = 1980;
  std::vector<Sample> rows;
  for (int i = 0; i < 3; ++i) {
    rows.push_back(window("FP64.FMA", i, 60, 1980));
    rows.back().throttle = "sw-power";
  }
  fit_sustained(rows, m);
  ASSERT_TRUE(m.compute[0].sustained.has_value());
  EXPECT_EQ(m.compute[0].sustained->throttled, "sw-power");  // recorded as NVML said
  EXPECT_EQ(m.compute[0].sustained->limited_by, "clock");
  // Below the top clock the same reason is the limit.
  for (Sample& w : rows) w.clock_mhz = 1785;
  Machine capped = burst_machine();
  capped.device = m.device;
  fit_sustained(rows, capped);
  ASSERT_TRUE(capped.compute[0].sustained.has_value());
  EXPECT_EQ(capped.compute[0].sustained->limited_by, "power cap 700 W");
}

TEST(SustainedFit, WindowsBesideAForeignLoadAreNotPublished) {
  std::vector<Sample> rows;
  for (int i = 0; i < 4; ++i) rows.push_back(window("FP64.FMA", i, 90, 3100));
  rows[2].flags = "noisy|foreign-load";
  {
    // A refit of the sweep alone: the flag says why.
    Machine m = burst_machine();
    fit_sustained(rows, m);
    EXPECT_FALSE(m.compute[0].sustained.has_value()) << "settled windows beside a foreign load were published";
    ASSERT_EQ(m.missing.size(), 1u);
    EXPECT_EQ(m.missing[0].rfind("FP64.FMA: sustained: measured while other processes used the device", 0), 0u)
        << m.missing[0];
  }
  {
    // The run's own line (naming the process) stands alone.
    Machine m = burst_machine();
    m.missing.push_back(
        "FP64.FMA: sustained: measured while other processes ran on the device: 4242 python3: "
        "not the device's own");
    fit_sustained(rows, m);
    EXPECT_FALSE(m.compute[0].sustained.has_value());
    EXPECT_EQ(m.missing.size(), 1u);
  }
}

TEST(SustainedFit, ThrottleReasonsOfTheLastWindowsAreJoinedOnce) {
  Machine m = burst_machine();
  std::vector<Sample> rows;
  const char* reasons[] = {"sw-thermal", "sw-power+hw-slowdown", "", "hw-slowdown+sw-power"};
  for (int i = 0; i < 4; ++i) {
    rows.push_back(window("FP64.FMA", i, 60, 1440));
    rows.back().throttle = reasons[i];
  }
  fit_sustained(rows, m);
  ASSERT_TRUE(m.compute[0].sustained.has_value());
  EXPECT_EQ(m.compute[0].sustained->throttled, "sw-power+hw-slowdown");
}

// ---- sweep.csv and machine file ---------------------------------------------------------------

TEST(SustainedSweep, PhaseRoundTripsAndOlderSweepsReadAsBurst) {
  TempFile f("");
  std::remove(f.path().c_str());
  {
    SweepWriter w(f.path());
    Sample burst = window("FP64.FMA", 0, 100, 3000);
    burst.phase.clear();
    w.append_point({burst});
    w.append_point({window("FP64.FMA", 0, 90, 2900)});
  }
  const std::vector<Sample> back = read_sweep_csv(f.path());
  ASSERT_EQ(back.size(), 2u);
  EXPECT_FALSE(is_sustained(back[0]));
  EXPECT_EQ(sustained_ceiling(back[1]), "FP64.FMA");
  EXPECT_EQ(burst_samples(back).size(), 1u);

  // Before the phase column: the header and rows end at energy_j.
  std::string header = sweep_csv_header();
  header = header.substr(0, header.rfind(','));
  std::string row = sweep_csv_row(back[0]);
  row = row.substr(0, row.rfind(','));
  TempFile old(header + "\n" + row + "\n");
  const std::vector<Sample> older = read_sweep_csv(old.path());
  ASSERT_EQ(older.size(), 1u);
  EXPECT_TRUE(older[0].phase.empty());

  // Only empty and sustained:<ceiling> are phases.
  std::string bad = sweep_csv_row(back[0]) + "warmup";
  TempFile wrong(sweep_csv_header() + "\n" + bad + "\n" + sweep_csv_row(back[0]) + "\n");
  EXPECT_THROW(read_sweep_csv(wrong.path()), InputError);
}

TEST(SustainedMachineFile, RoundTripsAndRefusesASettledFigureWithoutInterval) {
  Machine m = burst_machine();
  std::vector<Sample> rows;
  for (int i = 0; i < 3; ++i) rows.push_back(window("FP64.FMA", i, 95 + 0.1 * i, 3000, 1.5));
  for (int i = 0; i < 4; ++i) rows.push_back(window("DRAM", i, 20 - i, 0));
  fit_sustained(rows, m);
  const std::string yaml = machine_to_yaml(m);
  const Machine back = read_machine_text(yaml, "m.yaml");
  ASSERT_TRUE(back.compute[0].sustained.has_value());
  ASSERT_TRUE(back.memory[0].sustained.has_value());
  EXPECT_TRUE(back.compute[0].sustained->settled);
  EXPECT_NEAR(back.compute[0].sustained->rate, m.compute[0].sustained->rate, 1e-6);
  EXPECT_NEAR(back.compute[0].sustained->ci95.lo, m.compute[0].sustained->ci95.lo, 1e-6);
  EXPECT_NEAR(back.compute[0].sustained->power_w, 15, 1e-6);
  EXPECT_GT(back.compute[0].sustained->pj_per_unit, 0);
  EXPECT_TRUE(back.compute[0].sustained->pj_ci95.known());
  EXPECT_FALSE(back.memory[0].sustained->settled);
  EXPECT_EQ(machine_to_yaml(back), yaml);

  // A settled figure without its interval is not a ceiling the file may claim.
  std::string broken = yaml;
  const std::size_t at = broken.find("      gflops_ci95:");
  ASSERT_NE(at, std::string::npos);
  broken.erase(at, broken.find('\n', at) + 1 - at);
  EXPECT_THROW(read_machine_text(broken, "m.yaml"), InputError);
  EXPECT_FALSE(validate_machine_text(broken, "m.yaml").empty());
}

// ---- which points the phase loops --------------------------------------------------------------

TEST(SustainedTargets, FmaCeilingsAtTheirBestPointAndMemoryAtItsLargestSize) {
  const RunConfig config = parse_config(
      "cpu:\n  probes:\n"
      "    bandwidth: {mode: [read], working_set_bytes: [16KiB, 64MiB, 128MiB, 256MiB]}\n"
      "    flops: {precision: [fp64], form: [fma, nofma], flops_per_element: [8, 64]}\n",
      "t.yaml");
  const Plan plan = build_plan(config, *config.backend("cpu"), DeviceInfo{});
  Machine burst;
  burst.device.memory_name = "DRAM";
  ComputeCeiling fma;
  fma.name = "FP64.FMA";
  fma.probe = "flops";
  ComputeCeiling nofma = fma;
  nofma.name = "FP64.noFMA";
  for (const PlanPoint& p : plan.points) {
    if (p.probe->info().name != "flops") continue;
    if (p.params.at("form") == "fma" && p.params.at("flops_per_element") == "64") fma.params = p.params;
    if (p.params.at("form") == "nofma" && p.params.at("flops_per_element") == "64") nofma.params = p.params;
  }
  burst.compute = {fma, nofma};
  MemoryLevel l1, dram;
  l1.level = "L1";
  l1.probe = dram.probe = "bandwidth";
  l1.params = dram.params = {{"mode", "read"}};
  l1.working_set_lo = l1.working_set_hi = 16384;
  dram.level = "DRAM";
  dram.working_set_lo = 64.0 * 1024 * 1024;
  dram.working_set_hi = 128.0 * 1024 * 1024;  // the 256 MiB point lies outside the level's plateau
  burst.memory = {l1, dram};

  std::vector<std::string> missing;
  const std::vector<SustainedTarget> targets = sustained_targets(plan, burst, {}, missing);
  ASSERT_EQ(targets.size(), 2u) << "FP64.FMA and DRAM; not noFMA, not L1";
  EXPECT_EQ(targets[0].ceiling, "FP64.FMA");
  EXPECT_EQ(targets[0].point->params, fma.params);
  EXPECT_EQ(targets[1].ceiling, "DRAM");
  EXPECT_EQ(targets[1].point->params.at("working_set_bytes"), std::to_string(128 * 1024 * 1024));
  EXPECT_TRUE(missing.empty());

  // A resumed run whose sweep holds FP64.FMA's windows loops only DRAM.
  Sample looped = window("FP64.FMA", 0, 90, 0);
  const std::vector<SustainedTarget> rest = sustained_targets(plan, burst, {looped}, missing);
  ASSERT_EQ(rest.size(), 1u);
  EXPECT_EQ(rest[0].ceiling, "DRAM");
}

// ---- config -----------------------------------------------------------------------------------

TEST(SustainedConfig, DefaultsPerBackendRangeAndOff) {
  const RunConfig cpu = parse_config("cpu:\n  probes: {flops: {}}\n", "t.yaml");
  EXPECT_DOUBLE_EQ(cpu.backend("cpu")->sustained_seconds, kDefaultSustainedSecondsCpu);
  const RunConfig off = parse_config("cpu:\n  sustained_seconds: 0\n  probes: {flops: {}}\n", "t.yaml");
  EXPECT_DOUBLE_EQ(off.backend("cpu")->sustained_seconds, 0);
  EXPECT_THROW(parse_config("cpu:\n  sustained_seconds: -1\n  probes: {flops: {}}\n", "t.yaml"), InputError);
  EXPECT_THROW(parse_config("cpu:\n  sustained_seconds: 601\n  probes: {flops: {}}\n", "t.yaml"), InputError);
  EXPECT_THROW(parse_config("cpu:\n  sustained_seconds: long\n  probes: {flops: {}}\n", "t.yaml"), InputError);
  const RunConfig def = load_embedded_config("default.yaml");
  EXPECT_GT(def.backend("cpu")->sustained_seconds, 0);
  EXPECT_GT(load_embedded_config("quick.yaml").backend("cpu")->sustained_seconds, 0);
  EXPECT_LT(load_embedded_config("quick.yaml").backend("cpu")->sustained_seconds,
            def.backend("cpu")->sustained_seconds);
}

}  // namespace
}  // namespace roofprobe
