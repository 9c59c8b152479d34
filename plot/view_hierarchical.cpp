// The "hierarchical" view: the hierarchical roofline of one precision family. One roof per memory
// level (GFLOP/s = GB/s x FLOP/byte) up to its ridge with the family's highest ceiling, one
// horizontal line per ceiling of the family (FMA, noFMA and the tensor ceilings of that input
// type), each labelled with its value, and the theoretical peaks dashed. A machine file holds
// a dozen or more families (an H200's has 37 ceilings); drawn together they stack into a band no
// label fits in, so one family is drawn (--precision; fp64 by default) and `all` restores every
// one. With --fma-ratio A: the FMA-mix ceiling peak x (2A + 1 - A) / 2 of each FMA ceiling, and
// the fma_mix probe's measured points between noFMA and FMA, thin and unlabelled. With --points:
// the application kernels' FLOP points.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "driver/model/errors.hpp"
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

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

std::string precision_family(const std::string& ceiling_name) {
  const std::string u = upper(ceiling_name);
  const std::string tensor = "TENSOR.";
  const std::string rest = u.rfind(tensor, 0) == 0 ? u.substr(tensor.size()) : u;
  return rest.substr(0, rest.find('.'));
}

std::vector<std::string> precision_families(const Machine& machine) {
  std::vector<std::string> out;
  for (const ComputeCeiling& c : machine.compute) {
    if (!finite_positive(c.gflops)) continue;
    const std::string family = precision_family(c.name.empty() ? "compute" : c.name);
    if (std::find(out.begin(), out.end(), family) == out.end()) out.push_back(family);
  }
  const auto fp64 = std::find(out.begin(), out.end(), "FP64");
  if (fp64 != out.end()) std::rotate(out.begin(), fp64, fp64 + 1);
  return out;
}

std::string chosen_family(const Machine& machine, const std::string& precision) {
  const std::vector<std::string> families = precision_families(machine);
  if (families.empty()) return {};
  if (precision.empty()) return families.front();
  const std::string wanted = upper(precision);
  if (wanted == "ALL") return wanted;
  if (std::find(families.begin(), families.end(), wanted) != families.end()) return wanted;
  std::string list;
  for (const std::string& f : families) list += lower(f) + ", ";
  throw InputError("--precision " + precision + ": this machine file has ceilings of " + list + "or all");
}

bool build_hierarchical_view(const ViewInput& in, PlotScript* out, std::string* why) {
  const std::string family = chosen_family(in.machine, in.options.precision);
  const bool every_family = family == "ALL";
  RooflineChart chart;
  chart.view = "hierarchical";
  chart.title = view_title(
      every_family || family.empty() ? "Hierarchical roofline" : "Hierarchical roofline, " + family, in.machine);
  chart.x_label = "arithmetic intensity [FLOP/byte]";
  chart.y_label = "performance [GFLOP/s]";
  chart.x_unit = "FLOP/byte";
  chart.y_text = format_compute;
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
    if (!every_family && precision_family(name) != family) continue;
    if (is_fma_mix_point(name)) {
      if (mix) mix_points.push_back({"", c.gflops, "#9a9a9a", "lw 1 dt 3", "hierarchical_compute.dat", false});
      continue;
    }
    const std::string colour = ceiling_colour(measured.size());
    measured.push_back({sourced_name(name, c.source) + ": " + format_ceiling(name, c.gflops), c.gflops, colour,
                        "lw 2.5", "hierarchical_compute.dat", true});
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
