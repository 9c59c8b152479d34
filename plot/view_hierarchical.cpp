// The "hierarchical" view: the hierarchical roofline. One roof per memory level (GFLOP/s =
// GB/s x FLOP/byte) up to its ridge with the highest compute ceiling, one horizontal line per
// compute ceiling (tensor ceilings included), every line labelled directly with its value (the
// fma_mix probe's points between noFMA and FMA drawn thin and unlabelled);
// with --fma-ratio A the FMA-mix ceiling peak x (2A + 1 - A) / 2 of each FMA ceiling; with
// --points the application kernels' FLOP points.
#include <algorithm>
#include <cmath>

#include "plot/plot.hpp"

namespace roofprobe {
namespace plot_detail {

namespace {

// Darker than the memory colours so ceilings and roofs never look alike.
std::string ceiling_colour(std::size_t i) {
  static const char* colours[] = {"#000000", "#8E1B1B", "#5B2C83", "#3D5A1E", "#8C510A", "#01665E", "#555555"};
  return colours[i % (sizeof colours / sizeof colours[0])];
}

// "FP64.FMA" -> "FP64"; empty when the ceiling is not an FMA ceiling.
std::string fma_precision(const std::string& name) {
  const std::string suffix = ".FMA";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
    return name.substr(0, name.size() - suffix.size());
  return {};
}

}  // namespace

bool build_hierarchical_view(const ViewInput& in, PlotScript* out, std::string* why) {
  RooflineChart chart;
  chart.view = "hierarchical";
  chart.title = view_title("Hierarchical roofline", in.machine);
  chart.x_label = "arithmetic intensity [FLOP/byte]";
  chart.y_label = "performance [GFLOP/s]";
  chart.roof_file = "hierarchical_memory.dat";
  chart.file_headers = {{"hierarchical_memory.dat", "memory roofs: flop_per_byte gflops (GFLOP/s = GB/s x FLOP/byte)"},
                        {"hierarchical_compute.dat", "compute ceilings: flop_per_byte gflops"},
                        {"hierarchical_theoretical.dat", "theoretical peaks: flop_per_byte gflops"},
                        {"hierarchical_fma_mix.dat", "FMA-mix ceilings: flop_per_byte gflops"}};

  for (const MemoryLevel& level : in.machine.memory) {
    if (!finite_positive(level.gbs)) continue;
    const std::string name = level.level.empty() ? "level" : level.level;
    chart.roofs.push_back({sourced_name(name, level.source) + ": " + format_bandwidth(level.gbs), level.gbs,
                           series_colour(chart.roofs.size()), name});
  }

  std::vector<ChartCeiling> measured, theoretical, mixes, mix_points;
  const bool mix = in.options.fma_ratio >= 0;
  const double a = in.options.fma_ratio;
  for (const ComputeCeiling& c : in.machine.compute) {
    if (!finite_positive(c.gflops)) continue;
    const std::string name = c.name.empty() ? "compute" : c.name;
    if (is_fma_mix_point(name)) {
      mix_points.push_back({"", c.gflops, "#9a9a9a", "lw 1 dt 3", "hierarchical_compute.dat", false});
      continue;
    }
    const std::string colour = ceiling_colour(measured.size());
    measured.push_back({sourced_name(name, c.source) + ": " + format_compute(c.gflops), c.gflops, colour, "lw 2.5",
                        "hierarchical_compute.dat", true});
    if (finite_positive(c.theoretical_gflops))
      theoretical.push_back({"", c.theoretical_gflops, colour, "lw 1.5 dt 2", "hierarchical_theoretical.dat", false});
    const std::string precision = fma_precision(name);
    if (mix && !precision.empty()) {
      const double value = c.gflops * (2 * a + 1 - a) / 2;
      mixes.push_back({precision + " FMA mix a=" + num(a) + ": " + format_compute(value), value, colour, "lw 2 dt 3",
                       "hierarchical_fma_mix.dat", false});
    }
  }
  if (chart.roofs.empty() || measured.empty()) {
    *why = chart.roofs.empty() ? "machine file has no memory levels with a bandwidth"
                               : "machine file has no compute ceilings";
    return false;
  }
  chart.ceilings = measured;
  chart.ceilings.insert(chart.ceilings.end(), theoretical.begin(), theoretical.end());
  chart.ceilings.insert(chart.ceilings.end(), mixes.begin(), mixes.end());
  chart.ceilings.insert(chart.ceilings.end(), mix_points.begin(), mix_points.end());
  if (!theoretical.empty()) chart.key.push_back({"theoretical peak", "with lines lw 1.5 dt 2 lc rgb '#555555'"});
  if (!mix_points.empty())
    chart.key.push_back({"measured FMA-mix points (" + std::to_string(mix_points.size()) + ", unlabelled)",
                         "with lines lw 1 dt 3 lc rgb '#9a9a9a'"});
  if (!mixes.empty()) chart.key.push_back({"FMA mix a=" + num(a), "with lines lw 2 dt 3 lc rgb '#555555'"});
  chart.points = chart_points(in.options.points, "flop", in.machine, nullptr);

  *out = render_roofline_chart(chart, in.format);
  return true;
}

}  // namespace plot_detail
}  // namespace roofprobe
