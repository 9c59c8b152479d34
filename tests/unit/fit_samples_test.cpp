// fit_samples: memory levels, compute ceilings and noisy points from whole sweeps of probes
// registered for the test (fit_only_probe.hpp), with the same contract as the CPU probes.
#include "tests/unit/fit_test_support.hpp"
#include "driver/fit/fit.hpp"
#include "tests/unit/fit_only_probe.hpp"
#include "tests/unit/temp_file.hpp"
#include <gtest/gtest.h>
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <utility>
#include <stdexcept>
#include <string>
#include <vector>
#include "driver/model/errors.hpp"

namespace roofprobe {
namespace {

using namespace fit_testing;

// ---- fit_samples -----------------------------------------------------------------------------

using testing::FitOnlyProbe;

// Registers "fit_test_bw" and "fit_test_flops" (backend "fit_test") once per process, with the
// same contract as the CPU bandwidth and flops probes, so these tests do not depend on them.
void register_test_probes() {
  static const bool registered = [] {
    ProbeInfo bw;
    bw.name = "fit_test_bw";
    bw.backend = "fit_test";
    bw.axes = {{"mode", AxisType::Choice, "", {"read", "rmw", "copy"}, 0, 0, {"read"}},
               {"working_set_bytes", AxisType::Bytes, "", {}, 1, 1e12, {"4096"}},
               {"occupancy", AxisType::Integer, "", {}, 1, 64, {"2"}}};
    FeedSpec mem;
    mem.kind = FeedKind::MemoryLevels;
    mem.metric = "gbs";
    mem.x_axis = "working_set_bytes";
    mem.series_axes = {"mode"};
    mem.primary_series = "mode=read";
    bw.feeds = {mem};
    Registry::instance().add_probe(std::make_unique<FitOnlyProbe>(bw));

    // A GPU-like bandwidth probe whose kernels all declare their first level (they bypass L1).
    ProbeInfo l2 = bw;
    l2.name = "fit_test_l2bw";
    l2.feeds[0].series_reach = {{"", "L2", false}};
    Registry::instance().add_probe(std::make_unique<FitOnlyProbe>(l2));

    Registry::instance().add_probe(
        std::make_unique<FitOnlyProbe>(testing::flops_like_probe("fit_test_flops", "fit_test")));
    return true;
  }();
  (void)registered;
}

Sample bw_sample(const std::string& mode, double x, double gbs, int k, int occupancy = 2) {
  Sample s;
  s.backend = "fit_test";
  s.probe = "fit_test_bw";
  s.params = {{"mode", mode},
              {"working_set_bytes", std::to_string(static_cast<long long>(x))},
              {"occupancy", std::to_string(occupancy)}};
  s.working_set_bytes = x;
  s.sample = k;
  s.gbs = gbs;
  s.gtxn_s = gbs / 32;
  return s;
}

Sample flops_sample(const std::string& precision, const std::string& form, int fpe, double gflops, int k) {
  Sample s;
  s.backend = "fit_test";
  s.probe = "fit_test_flops";
  s.params = {{"precision", precision}, {"form", form}, {"flops_per_element", std::to_string(fpe)}};
  s.sample = k;
  s.gflops = gflops;
  return s;
}

TEST(FitSamples, MemoryLevelsFromThePrimarySeries) {
  register_test_probes();
  std::vector<Sample> samples;
  Rng rng(5);

  for (double x : geometric_sizes(4 * KiB, 256 * MiB, 4))
    for (int k = 0; k < 3; ++k) {
      const double read = x <= 1 * MiB ? 200 : 40;  // one cache (1 MiB) and DRAM
      samples.push_back(bw_sample("copy", x, 0.5 * read * std::exp(0.01 * rng.normal()), k));  // not primary
      samples.push_back(bw_sample("read", x, read * std::exp(0.01 * rng.normal()), k));
      // A lower occupancy (neither the size nor a series axis) is slower: each size is
      // represented by its best point, as the hardware can reach that rate.
      samples.push_back(bw_sample("read", x, 0.6 * read * std::exp(0.01 * rng.normal()), k, 1));
    }
  Machine m;
  m.device.caches = {{"L2", 1 << 20, 1}};
  m.device.memory_name = "DRAM";
  m.device.clock_measured_mhz = 2500;
  m.device.compute_units = 8;
  fit_samples(samples, m);
  ASSERT_EQ(m.memory.size(), 2u);
  EXPECT_TRUE(m.compute.empty());
  EXPECT_TRUE(m.missing.empty());
  const MemoryLevel& l2 = m.memory[0];
  EXPECT_EQ(l2.level, "L2");
  EXPECT_EQ(m.memory[1].level, "DRAM");
  EXPECT_NEAR(l2.gbs / 200, 1, 0.01);
  EXPECT_NEAR(m.memory[1].gbs / 40, 1, 0.01);
  EXPECT_DOUBLE_EQ(l2.gtxn_s, l2.gbs / 32);
  EXPECT_DOUBLE_EQ(l2.bytes_per_clk_per_unit, l2.gbs * 1e9 / 2.5e9 / 8);
  EXPECT_DOUBLE_EQ(l2.working_set_lo, 4 * KiB);
  EXPECT_DOUBLE_EQ(l2.working_set_hi, 1 * MiB);
  EXPECT_EQ(l2.probe, "fit_test_bw");
  EXPECT_EQ(l2.source, "empirical");
  EXPECT_EQ(l2.params, (Params{{"mode", "read"}, {"occupancy", "2"}}));
  // 4 KiB..1 MiB at 4 points per octave, best point only; the statistics leave out the 1 MiB
  // size, next to the knee, where the fitted curve already blends in DRAM.
  EXPECT_EQ(l2.stats.samples, 3 * 32);
  ASSERT_EQ(l2.by_series.count("mode=copy"), 1u);
  EXPECT_NEAR(l2.by_series.at("mode=copy") / 100, 1, 0.01);
  EXPECT_NEAR(m.memory[1].by_series.at("mode=copy") / 20, 1, 0.01);
}

// Curves of three kernels on a CPU-like hierarchy: the primary (read) resolves L1, L2, L3 and
// DRAM; the update (rmw) kernel's L2 and L3 rates are equal, so its fit has one level from L1 to
// DRAM; the copy curve bends once more on its way to DRAM (a level at 3x the L3 capacity).
std::vector<Sample> three_kernel_sweep() {
  std::vector<Sample> samples;
  Rng rng(11);
  const SweepShape read{{{64 * KiB, 440}, {1 * MiB, 230}, {32 * MiB, 195}, {0, 60}}, 0.15, 0};
  const SweepShape rmw{{{64 * KiB, 470}, {32 * MiB, 370}, {0, 100}}, 0.15, 0};
  const SweepShape copy{{{64 * KiB, 460}, {1 * MiB, 210}, {32 * MiB, 185}, {96 * MiB, 100}, {0, 57}}, 0.15, 0};
  for (double x : geometric_sizes(4 * KiB, 1 * GiB, 3))
    for (int k = 0; k < 4; ++k) {
      samples.push_back(bw_sample("read", x, true_rate(read, x) * std::exp(0.01 * rng.normal()), k));
      samples.push_back(bw_sample("rmw", x, true_rate(rmw, x) * std::exp(0.01 * rng.normal()), k));
      samples.push_back(bw_sample("copy", x, true_rate(copy, x) * std::exp(0.01 * rng.normal()), k));
    }
  return samples;
}

Machine cpu_machine() {
  Machine m;
  m.device.caches = cpu_caches();
  m.device.memory_name = "DRAM";
  return m;
}

// The primary series defines the hierarchy: another kernel's extra bend is not a level.
TEST(FitSamples, OnlyThePrimarysLevelsArePublished) {
  register_test_probes();
  Machine m = cpu_machine();
  fit_samples(three_kernel_sweep(), m);
  std::vector<std::string> names;
  for (const MemoryLevel& l : m.memory) names.push_back(l.level);
  EXPECT_EQ(names, (std::vector<std::string>{"L1", "L2", "L3", "DRAM"}));
}

// A kernel whose fit merged two levels still counts at both, with the rate of its level there:
// the update kernel's 370 GB/s is the headline of L2 and of L3.
TEST(FitSamples, AMergedLevelCountsAtEachLevelItServes) {
  register_test_probes();
  Machine m = cpu_machine();
  fit_samples(three_kernel_sweep(), m);
  ASSERT_EQ(m.memory.size(), 4u);
  for (int i : {1, 2}) {
    const MemoryLevel& l = m.memory[i];
    EXPECT_EQ(l.headline_series, "mode=rmw") << l.level;
    EXPECT_NEAR(l.gbs / 370, 1, 0.03) << l.level;
    ASSERT_EQ(l.by_series.count("mode=read"), 1u) << l.level;
    ASSERT_EQ(l.by_series.count("mode=copy"), 1u) << l.level;
  }
  EXPECT_NEAR(m.memory[1].by_series.at("mode=read") / 230, 1, 0.03);
  EXPECT_NEAR(m.memory[2].by_series.at("mode=read") / 195, 1, 0.03);
  // Sizes and capacity stay those of the kernels that resolved the level (read's L2 knee).
  EXPECT_NEAR(std::log(m.memory[1].capacity_bytes / (1 * MiB)), 0, std::log(1.5));
  EXPECT_NEAR(m.memory[3].gbs / 100, 1, 0.03);  // DRAM: the update kernel's total bytes
}

// Launches with fewer work items than threads are left out of the level fit; when nothing else
// is left, the machine file says so instead of having no memory level without a word.
TEST(FitSamples, UnderfilledLaunchesAreLeftOutAndNamedWhenAllAre) {
  register_test_probes();
  std::vector<Sample> samples;
  for (double x : geometric_sizes(4 * KiB, 64 * KiB, 4))
    for (int k = 0; k < 3; ++k) {
      Sample s = bw_sample("read", x, x / 100, k);
      s.flags = "underfilled";
      samples.push_back(s);
    }
  Machine m = cpu_machine();
  fit_samples(samples, m);
  EXPECT_TRUE(m.memory.empty());
  ASSERT_EQ(m.missing.size(), 1u);
  EXPECT_NE(m.missing[0].find("underfilled"), std::string::npos) << m.missing[0];
  // With the curve of a full machine beside them, the underfilled sizes are not fitted: the
  // level is the plateau, not dragged down by the ramp.
  for (double x : geometric_sizes(128 * KiB, 64 * MiB, 4))
    for (int k = 0; k < 3; ++k) samples.push_back(bw_sample("read", x, 700, k));
  Machine full = cpu_machine();
  fit_samples(samples, full);
  ASSERT_FALSE(full.memory.empty());
  EXPECT_NEAR(full.memory[0].gbs / 700, 1, 0.01);
  // Nothing about underfilled launches; a flat curve resolves none of the reported caches, and
  // says so for each.
  for (const std::string& why : full.missing) {
    EXPECT_EQ(why.find("underfilled"), std::string::npos) << why;
    EXPECT_NE(why.find("no access kernel's curve has a level of its own"), std::string::npos) << why;
  }
}

TEST(FitSamples, ACacheNoCurveResolvesIsNamedUnderMissing) {
  // L1 at 400, then one rate from the L2 to the L3 capacities (their rates within the noise),
  // then DRAM: the fit has L1, L3 and DRAM, and L2 is named under missing, not dropped.
  register_test_probes();
  std::vector<Sample> samples;
  for (double x : geometric_sizes(4 * KiB, 1 * GiB, 4))
    for (int k = 0; k < 3; ++k)
      samples.push_back(bw_sample("read", x, x <= 64 * KiB ? 400 : x <= 32 * MiB ? 150 : 20, k));
  Machine m = cpu_machine();
  fit_samples(samples, m);
  std::vector<std::string> names;
  for (const MemoryLevel& l : m.memory) names.push_back(l.level);
  EXPECT_EQ(std::count(names.begin(), names.end(), "L2"), 0);
  ASSERT_EQ(m.missing.size(), 1u) << ::testing::PrintToString(names);
  EXPECT_NE(m.missing[0].find("memory level L2"), std::string::npos) << m.missing[0];
  EXPECT_NE(m.missing[0].find("L3's covers its sizes"), std::string::npos) << m.missing[0];
}

// A level a kernel's curve cannot rule out (LevelModelFit::unresolved) is named under missing:
// with the probe, the backend and the kernel whose curve it is.
TEST(FitSamples, ALevelACurveCannotRuleOutIsNamedUnderMissing) {
  register_test_probes();
  const auto sweep = sweep_with_an_unresolved_level();
  ASSERT_TRUE(sweep) << "no sweep of 8 left its L3 unresolved";
  const auto& [points, fit] = *sweep;
  std::vector<Sample> samples;
  for (std::size_t i = 0; i < points.size(); ++i)
    samples.push_back(bw_sample("read", points[i].x, points[i].y, static_cast<int>(i)));
  Machine m;
  m.device.memory_name = "HBM";
  fit_samples(samples, m);
  ASSERT_EQ(m.memory.size(), fit.levels.size());
  // Then the knees of the same curve where a level may hide (LevelModelFit::in_knees).
  ASSERT_EQ(m.missing.size(), 1u + fit.in_knees.size());
  const std::string curve = "probe 'fit_test_bw' (fit_test, mode=read)";
  const int levels = static_cast<int>(fit.levels.size());
  EXPECT_EQ(m.missing[0], unresolved_level_note(*fit.unresolved, levels, curve));
  for (std::size_t i = 0; i < fit.in_knees.size(); ++i)
    EXPECT_EQ(m.missing[1 + i], unresolved_level_note(fit.in_knees[i], levels, curve));
}

// A kernel whose smaller sets were left out (underfilled) may read a first level at its first size
// alone: not a plateau, so not published. It is a gap worth a note only where it is faster than
// the level it declares as the probe publishes it; a slower one adds nothing to that level.
TEST(FitSamples, AFirstLevelOfOneSizeIsAGapOnlyWhereItIsFaster) {
  register_test_probes();
  for (const double first : {7000.0, 12000.0}) {
    Rng rng(7);
    std::vector<Sample> samples;
    int point = 0;
    for (double x : geometric_sizes(1 * MiB, 1024 * MiB, 2)) {
      const double read = x < 40 * MiB ? 9000 : 4500;
      const double copy = x < 1.2 * MiB ? first : x < 40 * MiB ? 6000 : 4000;
      for (int k = 0; k < 5; ++k)
        for (const auto& [mode, rate] : {std::pair{"read", read}, std::pair{"copy", copy}}) {
          Sample s = bw_sample(mode, x, rate * std::exp(0.01 * rng.normal()), k);
          s.probe = "fit_test_l2bw";
          s.point = point;
          samples.push_back(s);
        }
      ++point;
    }
    Machine m;
    m.device.caches = {{"L1", 256 << 10, 1}, {"L2", 60 << 20, 1}};
    m.device.memory_name = "HBM";
    fit_samples(samples, m);
    const std::string ctx = "copy's first size at " + std::to_string(first);
    ASSERT_EQ(m.memory.size(), 2u) << ctx;
    EXPECT_EQ(m.memory[0].level, "L2") << ctx;
    EXPECT_NEAR(m.memory[0].gbs, 9000, 9000 * 0.02) << ctx;
    const auto gaps = std::count_if(m.missing.begin(), m.missing.end(), [](const std::string& note) {
      return note.find("the first level of the curve") != std::string::npos;
    });
    EXPECT_EQ(gaps, first > 9000 ? 1 : 0) << ctx << ": " << ::testing::PrintToString(m.missing);
  }
}

// One gap that several access kernels show is one note, naming them all: an H200's rmw and copy
// curves each left a level between L2 and HBM unlocated, and four notes said one thing.
TEST(FitSamples, AGapSeveralSeriesShowIsOneNoteNamingThemAll) {
  register_test_probes();
  const auto sweep = sweep_with_an_unresolved_level();
  ASSERT_TRUE(sweep) << "no sweep of 8 left its L3 unresolved";
  const auto& [points, fit] = *sweep;
  std::vector<Sample> samples;
  for (const char* mode : {"read", "rmw"})
    for (std::size_t i = 0; i < points.size(); ++i)
      samples.push_back(bw_sample(mode, points[i].x, points[i].y, static_cast<int>(i)));
  Machine m;
  m.device.memory_name = "HBM";
  fit_samples(samples, m);
  ASSERT_EQ(m.missing.size(), 1u + fit.in_knees.size()) << ::testing::PrintToString(m.missing);
  const std::string curve = "probe 'fit_test_bw' (fit_test, mode=read | mode=rmw)";
  const int levels = static_cast<int>(fit.levels.size());
  EXPECT_EQ(m.missing[0], unresolved_level_note(*fit.unresolved, levels, curve));
  for (std::size_t i = 0; i < fit.in_knees.size(); ++i)
    EXPECT_EQ(m.missing[1 + i], unresolved_level_note(fit.in_knees[i], levels, curve));
}

TEST(FitSamples, ComputeCeilingsPerSeries) {
  register_test_probes();
  std::vector<Sample> samples;
  const std::pair<const char*, const char*> series[] = {
      {"fp64", "fma"}, {"fp64", "nofma"}, {"fp32", "fma"}, {"fp32", "nofma"}};
  const double peak[] = {1000, 500, 2000, 1000};
  for (int s = 0; s < 4; ++s)
    for (int fpe : {1, 4, 16, 64}) {
      const double rate = peak[s] * std::min(1.0, fpe / 16.0) * (fpe == 64 ? 0.98 : 1.0);
      for (int k = 0; k < 3; ++k) samples.push_back(flops_sample(series[s].first, series[s].second, fpe, rate + k, k));
    }
  // One fast outlier sample must not make its point the ceiling (points use the median).
  samples.push_back(flops_sample("fp64", "fma", 4, 5000, 3));
  Machine m;
  m.device.clock_measured_mhz = 3000;
  m.device.theoretical_gflops = {{"FP64.FMA", 1250}};
  fit_samples(samples, m);
  ASSERT_EQ(m.compute.size(), 4u);
  EXPECT_TRUE(m.memory.empty());
  std::vector<std::string> names;
  for (const ComputeCeiling& c : m.compute) names.push_back(c.name);
  EXPECT_EQ(names, (std::vector<std::string>{"FP32.FMA", "FP32.noFMA", "FP64.FMA", "FP64.noFMA"}));
  const ComputeCeiling& fp64 = m.compute[2];
  EXPECT_DOUBLE_EQ(fp64.gflops, 1001);  // median of 1000, 1001, 1002 at 16 flops/element
  // Three samples: about the median, under normal noise (sd 1): t(2) sqrt(pi/2) / sqrt(3) = 3.11.
  EXPECT_NEAR(fp64.gflops_ci95.lo, 1001 - 4.30265273 * std::sqrt(std::acos(-1.0) / 2) / std::sqrt(3.0), 1e-6);
  EXPECT_NEAR(fp64.gflops_ci95.hi, 1001 + 4.30265273 * std::sqrt(std::acos(-1.0) / 2) / std::sqrt(3.0), 1e-6);
  EXPECT_DOUBLE_EQ(fp64.theoretical_gflops, 1250);
  EXPECT_DOUBLE_EQ(fp64.fraction_of_theoretical, 1001.0 / 1250);
  EXPECT_DOUBLE_EQ(fp64.clock_mhz, 3000);
  EXPECT_EQ(fp64.stats.samples, 3);
  EXPECT_DOUBLE_EQ(fp64.stats.best, 1002);
  EXPECT_EQ(fp64.params, (Params{{"precision", "fp64"}, {"form", "fma"}, {"flops_per_element", "16"}}));
  EXPECT_EQ(fp64.probe, "fit_test_flops");
  EXPECT_DOUBLE_EQ(m.compute[0].gflops, 2001);
  EXPECT_DOUBLE_EQ(m.compute[0].theoretical_gflops, 0);
  EXPECT_DOUBLE_EQ(m.compute[0].fraction_of_theoretical, 0);
}

std::vector<Sample> fp64_fma_points(int flagged_point, double flagged_rate) {
  std::vector<Sample> samples;
  int point = 0;
  for (int fpe : {1, 4, 16, 64}) {
    for (int k = 0; k < 3; ++k) {
      Sample s = flops_sample("fp64", "fma", fpe, point == flagged_point ? flagged_rate : 100.0 * fpe / 64, k);
      s.point = point;
      if (point == flagged_point) s.flags = "noisy";
      samples.push_back(s);
    }
    ++point;
  }
  return samples;
}

TEST(FitSamples, NoisyPointsAreLeftOutWhenCleanOnesRemain) {
  register_test_probes();
  Machine m;
  fit_samples(fp64_fma_points(1, 500.0), m);  // a noisy point far above the clean peak
  ASSERT_EQ(m.compute.size(), 1u);
  EXPECT_DOUBLE_EQ(m.compute[0].gflops, 100);
  EXPECT_TRUE(m.missing.empty());
}

TEST(FitSamples, MostlyNoisySeriesKeepsItsPointsAndIsFlagged) {
  register_test_probes();
  std::vector<Sample> samples = fp64_fma_points(-1, 0);
  for (Sample& s : samples)
    if (s.point < 3) s.flags = "noisy";
  Machine m;
  fit_samples(samples, m);
  ASSERT_EQ(m.compute.size(), 1u);
  EXPECT_DOUBLE_EQ(m.compute[0].gflops, 100);
  EXPECT_TRUE(m.compute[0].noisy);
}

// The other core busy while the FP64 points ran: every FP64 point is noisy, the FP32 points are
// clean. The decision is per series, so FP64.FMA is published (flagged), never dropped.
TEST(FitSamples, NoisyDecisionIsPerSeriesNotPerProbe) {
  register_test_probes();
  std::vector<Sample> samples = fp64_fma_points(-1, 0);
  for (Sample& s : samples) s.flags = "noisy";
  int point = 100;
  for (int fpe : {1, 4, 16, 64}) {
    for (int k = 0; k < 3; ++k) {
      Sample s = flops_sample("fp32", "fma", fpe, 200.0 * fpe / 64, k);
      s.point = point;
      samples.push_back(s);
    }
    ++point;
  }
  Machine m;
  fit_samples(samples, m);
  ASSERT_EQ(m.compute.size(), 2u);
  EXPECT_EQ(m.compute[0].name, "FP32.FMA");
  EXPECT_FALSE(m.compute[0].noisy);
  EXPECT_EQ(m.compute[1].name, "FP64.FMA");
  EXPECT_DOUBLE_EQ(m.compute[1].gflops, 100);
  EXPECT_TRUE(m.compute[1].noisy);
}

// A loaded machine flags most DRAM-sized points noisy (a loaded 2-core VM: 7 of 9 sizes past
// the L3); the memory levels still come from every point, so DRAM does not vanish.
TEST(FitSamples, NoisyMemorySizesStillFormTheirLevel) {
  register_test_probes();
  std::vector<Sample> samples;
  Rng rng(11);
  int point = 0;
  for (double x : geometric_sizes(4 * KiB, 256 * MiB, 2)) {
    const bool dram = x > 1 * MiB;
    for (int k = 0; k < 5; ++k) {
      Sample s = bw_sample("read", x, (dram ? 40 : 200) * std::exp((dram ? 0.05 : 0.01) * rng.normal()), k);
      s.point = point;
      if (dram && point % 4 != 0) s.flags = "noisy";
      samples.push_back(s);
    }
    ++point;
  }
  Machine m;
  m.device.caches = {{"L2", 1 << 20, 1}};
  m.device.memory_name = "DRAM";
  fit_samples(samples, m);
  ASSERT_EQ(m.memory.size(), 2u);
  EXPECT_EQ(m.memory[1].level, "DRAM");
  EXPECT_NEAR(m.memory[1].gbs / 40, 1, 0.05);
  EXPECT_TRUE(m.missing.empty()) << m.missing.front();
}

TEST(FitSamples, CeilingAboveTheoryIsRejectedAsProbeBug) {
  register_test_probes();
  Machine m;
  m.device.clock_measured_mhz = 2000;
  m.device.theoretical_gflops = {{"FP64.FMA", 90}};  // measured 100 > 1.03 x 90
  fit_samples(fp64_fma_points(-1, 0), m);
  EXPECT_TRUE(m.compute.empty());
  ASSERT_EQ(m.missing.size(), 1u);
  EXPECT_NE(m.missing[0].find("FP64.FMA: rejected: 100 GFLOP/s is above the theoretical 90"), std::string::npos)
      << m.missing[0];
  Machine within;
  within.device.theoretical_gflops = {{"FP64.FMA", 98}};  // 2% above: clock drift, kept
  fit_samples(fp64_fma_points(-1, 0), within);
  EXPECT_EQ(within.compute.size(), 1u);
}

TEST(FitSamples, MemoryIsThePlateauAtTheLargestSizes) {
  // Past the last cache (1 MiB) a first plateau at 60 GB/s (partial hits) and memory at 20:
  // one memory level, the last, named DRAM without a suffix.
  register_test_probes();
  std::vector<Sample> samples;
  int point = 0;
  for (double x : geometric_sizes(4 * KiB, 1 * GiB, 2)) {
    const double rate = x <= 1 * MiB ? 200 : x <= 16 * MiB ? 60 : 20;
    for (int k = 0; k < 3; ++k) {
      Sample s = bw_sample("read", x, rate, k);
      s.point = point;
      samples.push_back(s);
    }
    ++point;
  }
  Machine m;
  m.device.caches = {{"L2", 1 << 20, 1}};
  m.device.memory_name = "DRAM";
  fit_samples(samples, m);
  ASSERT_EQ(m.memory.size(), 2u);
  EXPECT_EQ(m.memory[0].level, "L2");
  EXPECT_EQ(m.memory[1].level, "DRAM");
  EXPECT_NEAR(m.memory[1].gbs, 20, 0.01);
}

TEST(FitSamples, UnknownProbeIsReportedMissing) {
  register_test_probes();
  Sample s = bw_sample("read", 4096, 10, 0);
  s.probe = "fit_test_no_such_probe";
  Machine m;
  fit_samples({s, s}, m);
  EXPECT_TRUE(m.memory.empty());
  ASSERT_EQ(m.missing.size(), 1u);
  EXPECT_NE(m.missing[0].find("fit_test_no_such_probe"), std::string::npos);
}

// The issue probe's points from a run beside a foreign CUDA load on an H200 (every point flagged
// foreign-load, recorded by bench/gpu-checks; results/measured/h200-sxm, 20261127T2101Z): its
// figures are marked, and, though both of its feeds read the same points, each note comes once.
TEST(FitSamples, ForeignLoadNoteOncePerProbeAndSeries) {
  if (Registry::instance().probe("cuda", "issue") == nullptr) GTEST_SKIP() << "the CUDA backend is not built";
  const std::vector<Sample> samples = read_sweep_csv(std::string(ROOFPROBE_SOURCE_DIR) +
                                                     "/tests/unit/fixtures/sweeps/h200_issue_beside_foreign_load.csv");
  ASSERT_EQ(samples.size(), 53u);
  Machine m;
  m.device.backend = "cuda";
  m.device.kind = "gpu";
  fit_samples(samples, m);
  for (const std::string note : {"probe 'issue': every point was measured beside other processes' load: its figures "
                                 "are marked noisy and are not the device's own",
                                 "probe 'issue': most points are flagged noisy; its figures include them"})
    EXPECT_EQ(std::count(m.missing.begin(), m.missing.end(), note), 1) << ::testing::PrintToString(m.missing);
}

}  // namespace
}  // namespace roofprobe
