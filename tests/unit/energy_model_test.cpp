// The energy model (driver/fit/energy_model.hpp) on series built here from known coefficients:
// energies of E = sum W eps_type + sum Q eps_level + pi0 T with multiplicative noise and gross
// outliers. The fit must recover the coefficients within its intervals, reject the outliers, say
// why it cannot fit too few or collinear points, and carry its section through the machine file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <sstream>

#include "driver/fit/energy.hpp"
#include "driver/fit/energy_model.hpp"
#include "driver/model/machine.hpp"
#include "driver/report/summary.hpp"
#include "driver/run/energy_counter.hpp"
#include "energy_sweep_support.hpp"

namespace roofprobe {
namespace {

using namespace energy_testing;

const EnergyCoefficient& find(const std::vector<EnergyCoefficient>& list, const std::string& name) {
  auto it = std::find_if(list.begin(), list.end(), [&](const EnergyCoefficient& c) { return c.name == name; });
  if (it == list.end()) throw std::runtime_error("no coefficient " + name);
  return *it;
}

TEST(EnergyModel, RecoversKnownCoefficientsAndRejectsOutliers) {
  const Truth truth;
  std::mt19937 rng(7);
  std::vector<EnergyPoint> points = sweep_points(truth);
  measure(points, truth, 0.01, 8, rng);
  const EnergyModelSolution s = solve_energy_model(points, {"L1", "L2", "HBM"});
  ASSERT_EQ(s.not_fitted, "");
  ASSERT_EQ(s.pj_per_byte.size(), 3u);
  EXPECT_EQ(s.pj_per_byte[0].name, "L1") << "levels in the order given, nearest first";
  EXPECT_EQ(s.pj_per_byte[2].name, "HBM");
  for (const auto& [name, value] : truth.pj_per_flop) {
    const EnergyCoefficient& c = find(s.pj_per_flop, name);
    EXPECT_LE(c.ci95_lo, value) << name;
    EXPECT_GE(c.ci95_hi, value) << name;
    EXPECT_LT(c.ci95_hi - c.ci95_lo, 0.3 * value) << name << ": the interval says little";
  }
  for (const auto& [name, value] : truth.pj_per_byte) {
    const EnergyCoefficient& c = find(s.pj_per_byte, name);
    EXPECT_LE(c.ci95_lo, value) << name;
    EXPECT_GE(c.ci95_hi, value) << name;
    EXPECT_LT(c.ci95_hi - c.ci95_lo, 0.3 * value) << name;
  }
  EXPECT_LE(s.constant_power_ci95_lo, truth.pi0_w);
  EXPECT_GE(s.constant_power_ci95_hi, truth.pi0_w);
  // Every eighth point (from the fourth) carries 50% foreign energy: no weight; the others keep theirs.
  ASSERT_EQ(s.weight.size(), points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
    if (i % 8 == 3)
      EXPECT_EQ(s.weight[i], 0) << "outlier point " << i;
    else
      EXPECT_GT(s.weight[i], 0) << "point " << i;
  EXPECT_NEAR(s.relative_scale, 0.01, 0.005) << "the noise of the clean points";
}

TEST(EnergyModel, IntervalsCoverTheTruthNineteenTimesInTwenty) {
  // Over many noisy sweeps (with outliers) each 95% interval holds the true value in about 95%
  // of them: too narrow intervals (a covariance without the robust correction, the normal
  // instead of Student's quantile) fall well below, too wide ones reach 100%.
  const Truth truth;
  std::mt19937 rng(11);
  const int sweeps = 400;
  std::map<std::string, int> covered;
  for (int k = 0; k < sweeps; ++k) {
    std::vector<EnergyPoint> points = sweep_points(truth);
    measure(points, truth, 0.02, 10, rng);
    const EnergyModelSolution s = solve_energy_model(points);
    ASSERT_EQ(s.not_fitted, "");
    for (const auto& c : s.pj_per_flop)
      covered[c.name] += c.ci95_lo <= truth.pj_per_flop.at(c.name) && truth.pj_per_flop.at(c.name) <= c.ci95_hi;
    for (const auto& c : s.pj_per_byte)
      covered[c.name] += c.ci95_lo <= truth.pj_per_byte.at(c.name) && truth.pj_per_byte.at(c.name) <= c.ci95_hi;
    covered["pi0"] += s.constant_power_ci95_lo <= truth.pi0_w && truth.pi0_w <= s.constant_power_ci95_hi;
  }
  ASSERT_EQ(covered.size(), 6u);
  for (const auto& [name, n] : covered) {
    const double coverage = static_cast<double>(n) / sweeps;
    EXPECT_GT(coverage, 0.90) << name;
    EXPECT_LT(coverage, 0.995) << name;
  }
}

TEST(EnergyModel, TooFewPointsAreNotFittedAndSaySo) {
  const Truth truth;
  std::mt19937 rng(3);
  std::vector<EnergyPoint> points = sweep_points(truth);
  points.resize(8);  // HBM's six occupancies and L1's first two
  measure(points, truth, 0.01, 0, rng);
  const EnergyModelSolution s = solve_energy_model(points);
  EXPECT_EQ(s.not_fitted,
            "8 points with energy for 3 coefficients (HBM, L1, constant power); at least 3 points per "
            "coefficient are needed: the energy phase measures each ceiling and level on part of the device "
            "(docs/ENERGY.md); for probes that cannot run on part of it, raise measurement.min_seconds so that "
            "more points last long enough for the counter");
  EXPECT_TRUE(s.pj_per_byte.empty());
}

TEST(EnergyModel, CoefficientsThePointsCannotTellApartAreNamed) {
  // Every level at its ceiling's rate only: each level's bytes grow with the time in one
  // proportion, so its pJ/B and the constant power trade against each other freely.
  const Truth truth;
  std::mt19937 rng(5);
  std::vector<EnergyPoint> points;
  for (const auto& [level, gbs] : truth.gbs)
    for (double seconds : {0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9}) {
      EnergyPoint p;
      p.seconds = seconds;
      p.bytes[level] = gbs * 1e9 * seconds;
      points.push_back(p);
    }
  measure(points, truth, 0.01, 0, rng);
  const EnergyModelSolution s = solve_energy_model(points, {"L1", "L2", "HBM"});
  EXPECT_NE(s.not_fitted.find("the points cannot tell apart L1, L2, HBM, constant power"), std::string::npos)
      << s.not_fitted;
  EXPECT_NE(s.not_fitted.find("condition number"), std::string::npos) << s.not_fitted;
}

TEST(EnergyModel, FittedFromLaunchesIntoTheMachineFile) {
  const Truth truth;
  Sweep sw = sweep_with_energy(truth, 0.01);
  // A point too short for the counter (40 updates of 1 ms) and a bandwidth series that defines
  // no level: both left out, and said so.
  Sample short_launch = sw.samples.front();
  short_launch.point = 900;
  short_launch.seconds = 0.01;
  sw.samples.push_back(short_launch);
  Sample other_series = sw.samples.front();
  other_series.point = 901;
  other_series.params = {{"mode", "copy"}};
  other_series.seconds = 0.1;
  sw.samples.push_back(other_series);

  Machine& m = sw.machine;
  fit_energy_model(sw.samples, type_of, m);
  ASSERT_TRUE(m.energy_model) << (m.missing.empty() ? "" : m.missing.back());
  const EnergyModelSection& e = *m.energy_model;
  EXPECT_EQ(e.points, 32);
  EXPECT_EQ(e.launches, 160);
  EXPECT_EQ(e.left_out,
            "of 162 launches with energy: 1 in points shorter than 0.04 s; 1 of probe bandwidth: bytes from no "
            "single level");
  EXPECT_NEAR(find(e.pj_per_byte, "HBM").value, 40, 2);
  EXPECT_NEAR(e.constant_power_w, 120, 6);
  // 1% noise: every launch within 5%.
  EXPECT_EQ(e.within_5pct, e.launches);
  EXPECT_TRUE(e.reproduces_within_5pct());
  EXPECT_LT(e.residual_median_abs, 0.02);
  // Balances against HBM: time = ceiling GFLOP/s / HBM GB/s.
  ASSERT_EQ(e.balance.size(), 2u);
  EXPECT_EQ(e.balance[0].flops, "FP64.FMA");
  EXPECT_EQ(e.balance[0].level, "HBM");
  EXPECT_DOUBLE_EQ(e.balance[0].time_flop_per_byte, 60000.0 / 3000);
  EXPECT_NEAR(e.balance[0].energy_flop_per_byte, 40.0 / 20, 0.2);
  // Constant power per FLOP at 60 TFLOP/s: 2 pJ; per byte at 3 TB/s: 40 pJ.
  EXPECT_NEAR(e.balance[0].energy_with_constant_power_flop_per_byte, (40.0 + 40) / (20 + 2), 0.3);
  // Ordering checks: the truth's ordering holds.
  ASSERT_EQ(e.checks.size(), 3u);
  EXPECT_EQ(e.checks[0].check, "pJ/B falls from memory toward the core");
  EXPECT_TRUE(e.checks[0].holds) << e.checks[0].detail;
  EXPECT_EQ(e.checks[0].detail.substr(0, 4), "HBM ");
  EXPECT_TRUE(e.checks[1].holds) << e.checks[1].detail;
  EXPECT_TRUE(e.checks[2].holds) << e.checks[2].detail;

  // Through the machine file and back.
  const std::string yaml = machine_to_yaml(m);
  EXPECT_NE(yaml.find("schema: roofprobe.energy_model/1"), std::string::npos) << yaml;
  const Machine back = read_machine_text(yaml, "m.yaml");
  ASSERT_TRUE(back.energy_model);
  EXPECT_EQ(back.energy_model->pj_per_byte.size(), 3u);
  EXPECT_NEAR(back.energy_model->constant_power_w, e.constant_power_w, 1e-6 * e.constant_power_w);
  EXPECT_EQ(back.energy_model->within_5pct, e.within_5pct);
  EXPECT_EQ(back.energy_model->checks.size(), 3u);
  EXPECT_EQ(back.energy_model->balance.size(), 2u);
  EXPECT_EQ(machine_to_yaml(back), yaml);
  const std::vector<std::string> problems = validate_machine_text(yaml, "m.yaml");
  EXPECT_TRUE(problems.empty()) << problems.front();
  // A coefficient outside its own interval is a file someone edited by hand.
  Machine edited = m;
  edited.energy_model->pj_per_byte[0].value = edited.energy_model->pj_per_byte[0].ci95_hi * 2;
  const std::vector<std::string> bad = validate_machine_text(machine_to_yaml(edited), "m.yaml");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0], "m.yaml: energy_model.pj_per_byte[0] (L1): value outside its ci95");

  std::ostringstream summary;
  print_summary(summary, m, "dir");
  EXPECT_NE(summary.str().find("energy model (32 points, 160 launches): constant power"), std::string::npos)
      << summary.str();
  EXPECT_NE(summary.str().find("reproduces 160 of 160 launches within 5%"), std::string::npos) << summary.str();
  EXPECT_NE(summary.str().find("check: pJ/B falls from memory toward the core: yes"), std::string::npos)
      << summary.str();
}

TEST(EnergyModel, ALaunchTheModelMissesIsReportedWorst) {
  const Truth truth;
  Sweep sw = sweep_with_energy(truth, 0.005);
  for (Sample& s : sw.samples)
    if (s.point == 4) s.energy_j *= 1.3;  // one point's counter held 30% more
  fit_energy_model(sw.samples, type_of, sw.machine);
  ASSERT_TRUE(sw.machine.energy_model);
  const EnergyModelSection& e = *sw.machine.energy_model;
  EXPECT_EQ(e.within_5pct, e.launches - 5);
  EXPECT_FALSE(e.reproduces_within_5pct());
  EXPECT_NEAR(e.residual_worst, 1 / 1.3 - 1, 0.02) << "the model's energy is the clean one";
  EXPECT_EQ(e.worst_launch.rfind("probe bandwidth, point 4, sample ", 0), 0u) << e.worst_launch;
}

TEST(EnergyModel, NotFittedIsNamedUnderMissing) {
  const Truth truth;
  Sweep sw = sweep_with_energy(truth, 0.01);
  sw.samples.resize(5 * 8);  // L1 and part of HBM's points: 8 points, 3 coefficients
  fit_energy_model(sw.samples, type_of, sw.machine);
  EXPECT_FALSE(sw.machine.energy_model);
  ASSERT_EQ(sw.machine.missing.size(), 1u);
  EXPECT_EQ(sw.machine.missing[0].rfind("energy model: not fitted: 8 points with energy for 3 coefficients", 0), 0u)
      << sw.machine.missing[0];

  // Every point too short for the counter: fit_energy names that, once.
  Sweep short_points = sweep_with_energy(truth, 0.01);
  for (Sample& s : short_points.samples) s.seconds = 1e-6;
  fit_energy(short_points.samples, short_points.machine);
  fit_energy_model(short_points.samples, type_of, short_points.machine);
  ASSERT_EQ(short_points.machine.missing.size(), 1u) << short_points.machine.missing.back();
  EXPECT_EQ(short_points.machine.missing[0].rfind("energy ceilings: no ceiling has a point sampled for", 0), 0u)
      << short_points.machine.missing[0];

  // No counter: nothing to say beyond what fit_energy says.
  Sweep none = sweep_with_energy(truth, 0.01);
  none.machine.device.extra[kEnergyCounterKey] = "none: no NVML energy counter";
  fit_energy_model(none.samples, type_of, none.machine);
  EXPECT_FALSE(none.machine.energy_model);
  EXPECT_TRUE(none.machine.missing.empty());
}

}  // namespace
}  // namespace roofprobe
