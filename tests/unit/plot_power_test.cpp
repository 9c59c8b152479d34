// The "power" view (plot/view_power.cpp) of machine files fitted here from synthetic sweeps with
// energy (energy_sweep_support.hpp: built, not measured): the model's efficiency and power
// curves, the per-ceiling figures, the measured points, the power limit, the skip without
// energy, and a PNG where gnuplot exists.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "driver/fit/energy.hpp"
#include "driver/fit/energy_model.hpp"
#include "energy_sweep_support.hpp"
#include "tests/unit/plot_test_support.hpp"

namespace roofprobe {
namespace {

using namespace energy_testing;
namespace fs = std::filesystem;

PlotOptions power_only() {
  PlotOptions o;
  o.out_dir = "unused";
  o.kinds = {"power"};
  return o;
}

const std::string& data_file(const PlotScript& s, const std::string& name) {
  for (const auto& [file, text] : s.data_files)
    if (file == name) return text;
  throw std::runtime_error("no data file " + name);
}

// The rows of one block (gnuplot's `index`) of a data file: numbers per line.
std::vector<std::vector<double>> rows_of_block(const std::string& text, int index) {
  std::vector<std::vector<double>> rows;
  std::istringstream in(text);
  std::string line;
  int block = 0, blank = 0;
  while (std::getline(in, line)) {
    if (line.empty()) {
      if (++blank == 2) ++block;
      continue;
    }
    blank = 0;
    if (line[0] == '#' || block != index) continue;
    std::istringstream fields(line);
    std::vector<double> row;
    for (double v; fields >> v;) row.push_back(v);
    rows.push_back(row);
  }
  return rows;
}

// HBM's fitted pJ/B: the model's curves run against the device's memory.
double find_byte(const EnergyModelSection& e) {
  for (const EnergyCoefficient& c : e.pj_per_byte)
    if (c.name == "HBM") return c.value;
  return NAN;
}

Sweep fitted_sweep() {
  const Truth truth;
  Sweep sw = sweep_with_energy(truth, 0.01);
  sw.machine.device.extra[kIdlePowerKey] = "70";
  sw.machine.device.extra[kExtraPowerLimitW] = "1500";
  fit_energy(sw.samples, sw.machine);
  fit_energy_model(sw.samples, type_of, sw.machine);
  return sw;
}

TEST(PlotPower, TheModelsEnergyRooflineWithMeasuredPointsAndThePowerLimit) {
  const Sweep sw = fitted_sweep();
  ASSERT_TRUE(sw.machine.energy_model);
  ASSERT_TRUE(sw.machine.energy);
  std::vector<std::string> skipped;
  const auto scripts = build_plot_scripts(sw.machine, sw.samples, power_only(), &skipped);
  ASSERT_EQ(scripts.size(), 1u) << (skipped.empty() ? "" : skipped.front());
  const PlotScript& s = scripts[0];
  EXPECT_EQ(s.view, "power");
  EXPECT_NE(s.script.find("'energy efficiency [GFLOP/s per W]'"), std::string::npos);
  EXPECT_NE(s.script.find("'power limit: 1500 W'"), std::string::npos) << s.script;
  EXPECT_NE(s.script.find("'idle power: 70 W'"), std::string::npos) << s.script;
  EXPECT_NE(s.script.find("constant power (model): "), std::string::npos) << s.script;

  // Far beyond the ridge a FLOP costs its own energy and the constant power over its time at the
  // ceiling: GFLOP/J = 1e-9 / (eps_flop + pi0 / FLOP/s).
  const EnergyModelSection& e = *sw.machine.energy_model;
  const std::string& model = data_file(s, "power_model.dat");
  const auto fp64 = rows_of_block(model, 0);
  ASSERT_GT(fp64.size(), 100u);
  const double eps = e.pj_per_flop[0].value * 1e-12;  // FP64.FMA, the first type by name
  ASSERT_EQ(e.pj_per_flop[0].name, "FP64.FMA");
  EXPECT_NEAR(fp64.back()[1], 1e-9 / (eps + e.constant_power_w / 60000e9 + find_byte(e) * 1e-12 / fp64.back()[0]),
              1e-3 * fp64.back()[1]);
  // Power there: the FLOPs' energy at the ceiling's rate plus the constant power.
  EXPECT_NEAR(fp64.back()[2], e.constant_power_w + eps * 60000e9 + find_byte(e) * 1e-12 * 60000e9 / fp64.back()[0],
              1e-3 * fp64.back()[2]);
  // Efficiency grows with intensity and power is highest at the balance point (both units busy).
  for (std::size_t i = 1; i < fp64.size(); ++i) EXPECT_GE(fp64[i][1], fp64[i - 1][1] * (1 - 1e-9));
  const auto peak = std::max_element(
      fp64.begin(), fp64.end(), [](const std::vector<double>& a, const std::vector<double>& b) { return a[2] < b[2]; });
  EXPECT_NEAR(std::log2((*peak)[0]), std::log2(60000.0 / 3000), 0.1) << "FP64's time balance against HBM: 20 FLOP/B";

  // The sweep's FLOP points: 14 (both types, 7 intensities each).
  EXPECT_EQ(rows_of_block(data_file(s, "power_points.dat"), 0).size(), 14u);
}

TEST(PlotPower, PerCeilingFiguresAloneAreDrawnAndWithoutEnergyTheViewIsSkipped) {
  Sweep sw = fitted_sweep();
  sw.machine.energy_model.reset();
  sw.machine.energy->ceilings = {{"FP64.FMA", 250, 30, 0, 1, 5}, {"HBM", 200, 0, 240, 1, 5}};
  std::vector<std::string> skipped;
  auto scripts = build_plot_scripts(sw.machine, {}, power_only(), &skipped);
  ASSERT_EQ(scripts.size(), 1u);
  const std::string& ceilings = data_file(scripts[0], "power_ceilings.dat");
  // 30 pJ/FLOP: 33.3 GFLOP/J flat; 240 pJ/B: a roof of 4.17 GFLOP/J per FLOP/byte.
  const auto flat = rows_of_block(ceilings, 0);
  ASSERT_EQ(flat.size(), 2u);
  EXPECT_NEAR(flat[0][1], 1000.0 / 30, 1e-3);
  const auto roof = rows_of_block(ceilings, 1);
  ASSERT_EQ(roof.size(), 2u);
  EXPECT_NEAR(roof[1][1] / roof[1][0], 1000.0 / 240, 1e-3);
  EXPECT_NEAR(roof[1][1], 1000.0 / 30, 1e-3) << "the roof ends at the compute ceiling";
  EXPECT_NE(scripts[0].script.find("'FP64.FMA, measured: 250 W'"), std::string::npos) << scripts[0].script;
  EXPECT_EQ(scripts[0].script.find("power_model.dat' index"), std::string::npos);

  sw.machine.energy.reset();
  skipped.clear();
  EXPECT_TRUE(build_plot_scripts(sw.machine, {}, power_only(), &skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0],
            "power: the machine file has no energy figures (no energy: or energy_model: section; see its "
            "missing: lines)");
}

TEST(PlotPower, RendersAPngWithGnuplot) {
  if (find_gnuplot().empty()) GTEST_SKIP() << "gnuplot not found";
  const Sweep sw = fitted_sweep();
  TempDir dir;
  PlotOptions o = power_only();
  o.out_dir = (dir.path() / "plots").string();
  const PlotReport report = render_plots(sw.machine, sw.samples, o);
  ASSERT_EQ(report.written.size(), 1u);
  const std::string bytes = plot_testing::read_file(dir.path() / "plots" / "power.png");
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  EXPECT_GT(bytes.size(), 10000u);
}

}  // namespace
}  // namespace roofprobe
