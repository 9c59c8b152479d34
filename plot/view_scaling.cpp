// The "scaling" view: ceilings vs the number of SMs (cores) the probes were restricted to, from
// the machine file's `scaling` section (roofline scaling trajectories). Compute ceilings
// (GFLOP/s) on the left axis, memory levels (GB/s) on the right one when both are present; a
// thin dotted guide per series shows linear scaling from its smallest count.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "plot/plot.hpp"

namespace roofprobe {
namespace plot_detail {

namespace {

struct Series {
  std::string name;
  bool bandwidth = false;                     // GB/s (right axis when compute is drawn too)
  std::vector<std::pair<double, double>> xy;  // units, value
};

bool is_memory_name(const Machine& m, const std::string& name) {
  const std::string n = lower(name);
  for (const MemoryLevel& l : m.memory)
    if (lower(l.level) == n) return true;
  static const std::set<std::string> known = {"l1", "l2", "l3", "hbm", "dram", "shared", "system", "memory"};
  return known.count(n) > 0 || n.rfind("gddr", 0) == 0 || n.rfind("l2.", 0) == 0;
}

std::string units_tick(double v) { return num(v); }

struct Axis {
  double lo = 0, hi = 0;
  bool used = false;
  void take(double v) {
    lo = used ? std::min(lo, v) : v;
    hi = used ? std::max(hi, v) : v;
    used = true;
  }
};

// One series per ceiling name, its points sorted by count. `counts`: every count with a ceiling.
std::vector<Series> collect_series(const Machine& machine, std::set<int>* counts) {
  std::vector<Series> series;
  std::map<std::string, std::size_t> index;
  for (const ScalingPoint& p : machine.scaling) {
    if (p.units <= 0) continue;
    for (const auto& [name, value] : p.ceilings) {
      if (!finite_positive(value)) continue;
      auto [it, added] = index.emplace(name, series.size());
      if (added) series.push_back({name, is_memory_name(machine, name), {}});
      series[it->second].xy.push_back({double(p.units), value});
      counts->insert(p.units);
    }
  }
  for (Series& s : series) std::sort(s.xy.begin(), s.xy.end());
  // Compute first (left axis), memory after (right axis).
  std::stable_sort(series.begin(), series.end(),
                   [](const Series& a, const Series& b) { return a.bandwidth < b.bandwidth; });
  return series;
}

// Each series' key title: its unit, and its axis when there are two.
std::vector<std::string> series_titles(const std::vector<Series>& series, bool two_axes) {
  std::vector<std::string> titles;
  for (const Series& s : series)
    titles.push_back(s.name + (s.bandwidth ? " [GB/s" : " [GFLOP/s") +
                     (two_axes ? (s.bandwidth ? ", right axis]" : ", left axis]") : "]"));
  return titles;
}

// Every count labelled when there are few of them, powers of two otherwise. A count whose label
// would touch the next one's keeps its tick mark but not its label (an H200's 128 and its 132
// SMs printed on top of each other); the largest count, the whole device, always keeps its label.
std::string x_tics(const std::set<int>& counts, const LogAxis& x) {
  if (counts.size() > 16) return log2_tics("x", x.lo, x.hi, units_tick);
  std::string list;
  double next_left_px = 1e300;  // left edge of the label to the right of the one placed next
  for (auto it = counts.rbegin(); it != counts.rend(); ++it) {
    const std::string text = std::to_string(*it);
    const double half = Frame::text_px(text) / 2, at = x.to_px(*it);
    const bool room = at + half + Frame::kCharPx / 2 <= next_left_px;
    if (room) next_left_px = at - half;
    list = gnuplot_string(room ? text : "") + " " + text + (list.empty() ? "" : ", ") + list;
  }
  return "set xtics (" + list + ")\n";
}

std::string unit_name(const DeviceInfo& device) {
  if (!device.compute_unit_name.empty()) return device.compute_unit_name;
  return device.kind == "gpu" ? std::string("SMs") : std::string("cores");
}

// The y labels, and the right axis (memory, GB/s) when compute and memory are both drawn.
std::string y_axis_commands(const Axis& right, bool two_axes, bool any_bw) {
  if (!two_axes) return any_bw ? "set ylabel 'memory ceilings [GB/s]'\n" : "set ylabel 'compute ceilings [GFLOP/s]'\n";
  std::string s = "set ylabel 'compute ceilings [GFLOP/s]'\n";
  s += "set logscale y2 10\n";
  s += range_command("y2", right.lo / 1.6, right.hi * 1.6);
  std::string y2 = log10_tics("y", right.lo / 1.6, right.hi * 1.6);
  y2.replace(y2.find("set ytics"), 9, "set y2tics");
  s += y2;
  s += "set y2label 'memory ceilings [GB/s]'\n";
  s += "set ytics nomirror\n";
  return s;
}

std::string scaling_data(const std::vector<Series>& series) {
  std::string data = "# ceilings vs units: units value, one block per ceiling\n";
  for (const Series& one : series) {
    data += "# " + one_line(one.name) + "\n";
    for (const auto& [u, v] : one.xy) data += num(u) + " " + num(v) + "\n";
    data += "\n\n";
  }
  return data;
}

std::string linear_guides(const std::vector<Series>& series, double x_hi) {
  std::string guides = "# linear scaling from each ceiling's smallest count: units value\n";
  for (const Series& one : series) {
    const auto& first = one.xy.front();
    guides += "# " + one_line(one.name) + "\n" + num(first.first) + " " + num(first.second) + "\n" + num(x_hi) + " " +
              num(first.second * x_hi / first.first) + "\n\n\n";
  }
  return guides;
}

// "plot ...": each series and its guide, then the guides' key entry (no newline at the end).
std::string plot_command(const std::vector<Series>& series, const std::vector<std::string>& titles, bool two_axes,
                         const std::string& guide_title) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& one = series[i];
    const std::string axes = two_axes && one.bandwidth ? " axes x1y2" : "";
    const std::string colour = series_colour(i);
    parts.push_back("'scaling.dat' index " + std::to_string(i) + axes + " with linespoints lw 2.5 pt " +
                    (one.bandwidth ? "5" : "7") + " ps 1.2" + (one.bandwidth ? " dt 1" : "") + " lc rgb '" + colour +
                    "' title " + gnuplot_string(titles[i]));
    parts.push_back("'scaling_linear.dat' index " + std::to_string(i) + axes + " with lines lw 1 dt 3 lc rgb '" +
                    colour + "' notitle");
  }
  parts.push_back("NaN with lines lw 1 dt 3 lc rgb '#555555' title " + gnuplot_string(guide_title));
  std::string s = "plot ";
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", \\\n     " : "") + parts[i];
  return s;
}

}  // namespace

bool build_scaling_view(const ViewInput& in, PlotScript* out, std::string* why) {
  std::set<int> counts;
  const std::vector<Series> series = collect_series(in.machine, &counts);
  if (series.empty()) {
    *why = in.machine.scaling.empty() ? "no scaling section (ceilings vs SM/core count; probe 'scaling' not run)"
                                      : "the scaling section has no positive ceilings";
    return false;
  }
  const bool any_bw = std::any_of(series.begin(), series.end(), [](const Series& s) { return s.bandwidth; });
  const bool any_compute = std::any_of(series.begin(), series.end(), [](const Series& s) { return !s.bandwidth; });
  const bool two_axes = any_bw && any_compute;

  Axis left, right;
  for (const Series& s : series)
    for (const auto& [x, y] : s.xy) (two_axes && s.bandwidth ? right : left).take(y);

  const std::vector<std::string> titles = series_titles(series, two_axes);
  const std::string guide_title = "linear scaling from the first point";
  std::vector<std::string> key_titles = titles;
  key_titles.push_back(guide_title);

  Frame frame;
  if (two_axes) frame.right = 0.9;
  const KeyLayout layout = key_layout(key_titles, frame);
  frame.bottom = frame_bottom_for_key(layout.rows);

  const double x_lo = double(*counts.begin()), x_hi = double(*counts.rbegin());
  LogAxis x{pow2_floor(x_lo) / 1.5, std::max(pow2_ceil(x_hi), x_hi * 1.5), frame.width_px()};
  if (x.hi / x.lo < 4) x.hi = x.lo * 4;

  std::string s = script_preamble("scaling", in.format, frame, view_title("Ceilings vs concurrency", in.machine));
  s += "set logscale x 2\nset logscale y 10\n";
  s += range_command("x", x.lo, x.hi);
  s += range_command("y", left.lo / 1.6, left.hi * 1.6);
  s += x_tics(counts, x);
  s += log10_tics("y", left.lo / 1.6, left.hi * 1.6);
  s += "set xlabel " + gnuplot_string("concurrency [" + unit_name(in.machine.device) + " used]") + "\n";
  s += y_axis_commands(right, two_axes, any_bw);
  s += key_command(layout);
  s += plot_command(series, titles, two_axes, guide_title);
  s += "\nunset output\n";

  out->view = "scaling";
  out->script = s;
  out->data_files = {{"scaling.dat", scaling_data(series)}, {"scaling_linear.dat", linear_guides(series, x.hi)}};
  return true;
}

}  // namespace plot_detail
}  // namespace roofprobe
