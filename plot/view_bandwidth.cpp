// The "bandwidth" view: every raw sample of the memory probe against its working set, per series
// (access kernel, as the fit splits them) the median of each size's best point, the fitted levels
// as segments and the cache capacities.
#include <algorithm>
#include <cstdio>
#include <cmath>
#include <map>
#include <set>

#include "driver/model/median_of.hpp"
#include "plot/plot.hpp"

namespace roofprobe {
namespace plot_detail {

namespace {

constexpr const char* kLevelColour = "#1a1a1a";
constexpr const char* kCacheColour = "#7a7a7a";

struct Point {
  double x = 0, y = 0;
};

struct Series {
  std::string name;
  std::string mode;     // its colour: one per mode (read, rmw, ...)
  std::string variant;  // its dash pattern: the other series axes' values (a GPU's ca or cg)
  std::vector<Point> samples;
  std::vector<Point> medians;  // one per working-set size, in size order
};

struct CacheMark {
  std::string label;  // "L1 64 KiB"
  double bytes = 0;
};

// The probes that fed the memory levels. The view draws their samples without knowing probe
// names; with no levels to ask, a sample qualifies by shape (a size, a bandwidth, no FLOPs).
std::set<std::string> memory_probes(const Machine& m) {
  std::set<std::string> names;
  for (const MemoryLevel& level : m.memory)
    if (!level.probe.empty()) names.insert(level.probe);
  return names;
}

bool is_memory_sample(const Sample& s, const std::set<std::string>& probes) {
  if (s.params.count("working_set_bytes") == 0) return false;
  if (!finite_positive(s.working_set_bytes) || !finite_positive(s.gbs)) return false;
  return probes.empty() ? s.flops == 0 : probes.count(s.probe) > 0;
}

// The axes that make one access kernel a series, as the fit used them: read off the machine
// file's series keys ("cache_op=ca;mode=read" -> cache_op, mode), "mode" first. A GPU's ca and cg
// reads are different kernels reaching different levels; drawn as one "read" line, the median
// flipped between them from size to size (an H200: 32 TB/s, 5 TB/s, 28 TB/s).
std::vector<std::string> series_axes(const Machine& m) {
  std::set<std::string> axes;
  auto add = [&](const std::string& key) {
    try {
      for (const auto& [axis, value] : params_from_string(key)) axes.insert(axis);
    } catch (const std::invalid_argument&) {
      // A hand-edited file's odd key names no axis: the plot still draws, by mode.
    }
  };
  for (const MemoryLevel& level : m.memory) {
    add(level.headline_series);
    for (const auto& [key, gbs] : level.by_series) add(key);
  }
  std::vector<std::string> out = {"mode"};
  for (const std::string& axis : axes)
    if (axis != "mode") out.push_back(axis);
  return out;
}

// The values of axes[first, last) the sample has, space-separated.
std::string axis_values(const Sample& s, const std::vector<std::string>& axes, std::size_t first,
                        std::size_t last = std::string::npos) {
  std::string out;
  for (std::size_t i = first; i < std::min(last, axes.size()); ++i) {
    auto value = s.params.find(axes[i]);
    if (value != s.params.end()) out += (out.empty() ? "" : " ") + value->second;
  }
  return out;
}

std::string series_name(const Sample& s, const std::vector<std::string>& axes, bool name_probe) {
  std::string name = axis_values(s, axes, 0);
  if (name_probe) name = name.empty() ? s.probe : s.probe + " " + name;
  return name.empty() ? "samples" : name;
}

std::vector<Series> collect_series(const Machine& m, const std::vector<Sample>& samples) {
  const std::set<std::string> probes = memory_probes(m);
  std::set<std::string> seen_probes;
  for (const Sample& s : samples)
    if (is_memory_sample(s, probes)) seen_probes.insert(s.probe);
  const bool name_probe = seen_probes.size() > 1;
  const std::vector<std::string> axes = series_axes(m);

  // Series in the order the sweep first shows them (the config's order: "read" before "write").
  // Per size, the line follows the best point's median, as the fit does: the points of one size
  // that differ in an axis outside the series (a CPU's 512- and 256-bit loads, a GPU's load
  // width) are ways to run the same kernel, and the faster one is what the hardware can do.
  std::vector<Series> out;
  std::map<std::string, std::size_t> index;
  std::vector<std::map<double, std::map<std::string, std::vector<double>>>> per_point;
  for (const Sample& s : samples) {
    if (!is_memory_sample(s, probes)) continue;
    const std::string name = series_name(s, axes, name_probe);
    auto [it, added] = index.emplace(name, out.size());
    if (added) {
      // axes[0] is "mode": the colour; the rest of the series key: the dash pattern.
      out.push_back(
          {name, (name_probe ? s.probe + " " : "") + axis_values(s, axes, 0, 1), axis_values(s, axes, 1), {}, {}});
      per_point.emplace_back();
    }
    out[it->second].samples.push_back({s.working_set_bytes, s.gbs});
    per_point[it->second][s.working_set_bytes][params_to_string(s.params)].push_back(s.gbs);
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    for (const auto& [size, points] : per_point[i]) {
      double best = 0;
      for (const auto& [params, rates] : points) best = std::max(best, median_of(rates));
      out[i].medians.push_back({size, best});
    }
  return out;
}

std::vector<const MemoryLevel*> drawable_levels(const Machine& m) {
  std::vector<const MemoryLevel*> out;
  for (const MemoryLevel& level : m.memory)
    if (finite_positive(level.gbs)) out.push_back(&level);
  return out;
}

bool has_size_range(const MemoryLevel& level) {
  return finite_positive(level.working_set_lo) && finite_positive(level.working_set_hi) &&
         level.working_set_hi >= level.working_set_lo;
}

std::vector<CacheMark> cache_marks(const Machine& m) {
  std::vector<CacheMark> out;
  for (const CacheInfo& cache : m.device.caches) {
    const double bytes = double(cache.bytes) * std::max(cache.instances, 1);
    if (bytes > 0) out.push_back({cache.name + " " + format_size(bytes), bytes});
  }
  return out;
}

struct Ranges {
  LogAxis x, y;
};

// Whole octaves around everything drawn, with headroom above for the level labels.
Ranges choose_ranges(const std::vector<Series>& series, const std::vector<const MemoryLevel*>& levels,
                     const std::vector<CacheMark>& caches, const Frame& frame) {
  std::vector<double> xs, ys;
  for (const Series& s : series)
    for (const Point& p : s.samples) {
      xs.push_back(p.x);
      ys.push_back(p.y);
    }
  for (const MemoryLevel* level : levels) {
    ys.push_back(level->gbs);
    if (has_size_range(*level)) {
      xs.push_back(level->working_set_lo);
      xs.push_back(level->working_set_hi);
    }
  }
  for (const CacheMark& c : caches) xs.push_back(c.bytes);

  Ranges r;
  if (xs.empty()) {
    r.x = {1024.0, 4.0 * 1024 * 1024 * 1024, frame.width_px()};
  } else {
    const auto [lo, hi] = std::minmax_element(xs.begin(), xs.end());
    r.x = {pow2_floor(*lo) / 2, pow2_ceil(*hi) * 2, frame.width_px()};
  }
  const auto [lo, hi] = std::minmax_element(ys.begin(), ys.end());
  r.y = {*lo / 1.6, *hi * 1.8, frame.height_px()};
  return r;
}

std::string points_data(const std::vector<Series>& series, bool medians) {
  std::string s = medians ? "# per-size median of the best point per series: working_set_bytes gbs\n"
                          : "# raw samples per series: working_set_bytes gbs\n";
  for (const Series& one : series) {
    s += "# series: " + one_line(one.name) + "\n";
    for (const Point& p : medians ? one.medians : one.samples) s += num(p.x) + " " + num(p.y) + "\n";
    s += "\n\n";  // two blank lines: the next series is the next gnuplot `index`
  }
  return s;
}

// Horizontal segments at the fitted levels over their plateau's sizes (the whole axis for a
// level without sizes, e.g. a spec value). Plotted as data, so they draw over the samples and
// under the labels.
std::string levels_data(const std::vector<const MemoryLevel*>& levels, const Ranges& r) {
  std::string s = "# fitted levels: working_set_bytes gbs, one segment per level\n";
  for (const MemoryLevel* level : levels) {
    const double lo = has_size_range(*level) ? level->working_set_lo : r.x.lo;
    const double hi = has_size_range(*level) ? level->working_set_hi : r.x.hi;
    s += "# " + one_line(level->level) + "\n" + num(lo) + " " + num(level->gbs) + "\n" + num(hi) + " " +
         num(level->gbs) + "\n\n";
  }
  return s;
}

// Vertical dashed lines at the capacities, labelled above the plot area (outside the data),
// moved sideways where two labels would touch.
std::string cache_commands(const std::vector<CacheMark>& caches, const Ranges& r, const Frame& frame) {
  std::vector<double> wanted;
  double widest = 0;
  for (const CacheMark& c : caches) {
    wanted.push_back(r.x.to_px(c.bytes));
    widest = std::max(widest, Frame::text_px(c.label));
  }
  const std::vector<double> placed = spread_apart(wanted, widest + Frame::kCharPx);
  std::string s = "# cache capacities (bytes x instances)\n";
  for (std::size_t i = 0; i < caches.size(); ++i) {
    s += "set arrow from " + num(caches[i].bytes) + ", graph 0 to " + num(caches[i].bytes) +
         ", graph 1 nohead dt 2 lw 1.5 lc rgb '" + kCacheColour + "' back\n";
    const double label_x = r.x.from_px(placed[i]);
    s += "set label " + gnuplot_string(caches[i].label) + " at first " + num(label_x) + ", screen " +
         num(frame.top + 16 / Frame::kHeightPx) + " center tc rgb '#555555'\n";
    if (std::fabs(placed[i] - wanted[i]) > 1)  // a moved label keeps a leader to its line
      s += "set arrow from " + num(caches[i].bytes) + ", graph 1 to " + num(label_x) + ", screen " +
           num(frame.top + 6 / Frame::kHeightPx) + " nohead lw 1 lc rgb '" + kCacheColour + "'\n";
  }
  return s;
}

std::string level_label(const MemoryLevel& level) {
  std::string name = level.level.empty() ? "level" : level.level;
  if (!level.source.empty() && level.source != "empirical") name += " (" + level.source + ")";
  std::string text = name + ": " + format_bandwidth(level.gbs);
  // The fit's 95% interval as a relative half-width, so the reader sees how sure the level is.
  if (level.gbs_ci95.known() && level.gbs > 0) {
    const double half = 100 * (level.gbs_ci95.hi - level.gbs_ci95.lo) / 2 / level.gbs;
    char buf[32];
    std::snprintf(buf, sizeof buf, half < 10 ? " +/-%.1f%%" : " +/-%.0f%%", half);
    text += buf;
  }
  return text;
}

// Labels of the fitted levels, each centred just above its segment; pushed up where two would
// touch. Returns the px of the highest label top so the caller can grow the y range.
std::string level_commands(const std::vector<const MemoryLevel*>& levels, const Ranges& r, double* top_px) {
  std::vector<double> wanted, centre;
  for (const MemoryLevel* level : levels) {
    const double lo = has_size_range(*level) ? level->working_set_lo : r.x.lo;
    const double hi = has_size_range(*level) ? level->working_set_hi : r.x.hi;
    const double half = Frame::text_px(level_label(*level)) / 2 + Frame::kCharPx / 2;
    const double mid = (r.x.to_px(lo) + r.x.to_px(hi)) / 2;
    centre.push_back(std::clamp(mid, half, r.x.px - half));  // keep the text inside the frame
    wanted.push_back(r.y.to_px(level->gbs) + Frame::kLinePx / 2 + 4);
  }
  const std::vector<double> placed = push_apart_upward(wanted, Frame::kLinePx + 2);
  *top_px = 0;
  std::string s = "# fitted memory level labels\n";
  for (std::size_t i = 0; i < levels.size(); ++i) {
    const MemoryLevel& level = *levels[i];
    s += "set label " + gnuplot_string(level_label(level)) + " at first " + num(r.x.from_px(centre[i])) + ", first " +
         num(r.y.from_px(placed[i])) + " center boxed front tc rgb '" + kLevelColour + "'\n";
    *top_px = std::max(*top_px, placed[i] + Frame::kLinePx / 2);
  }
  return s;
}

// Position of `key` among the keys seen so far, added at the end when new.
std::size_t ordinal(std::vector<std::string>& seen, const std::string& key) {
  const auto it = std::find(seen.begin(), seen.end(), key);
  if (it != seen.end()) return static_cast<std::size_t>(it - seen.begin());
  seen.push_back(key);
  return seen.size() - 1;
}

// One colour per mode and one dash pattern per variant (solid for the first: ca), so eight GPU
// series read as four kernels x two cache operators instead of eight unrelated colours.
std::string plot_command(const std::vector<Series>& series, bool any_levels, bool any_caches) {
  std::vector<std::string> parts, modes, variants;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::string colour = series_colour(ordinal(modes, series[i].mode));
    const std::size_t dash = ordinal(variants, series[i].variant) + 1;
    const std::string index = " index " + std::to_string(i) + " using 1:2";
    parts.push_back("'bandwidth_samples.dat'" + index + " with points pt 7 ps 0.55 lc rgb '" +
                    translucent(colour, 0.35) + "' notitle");
    parts.push_back("'bandwidth_medians.dat'" + index + " with linespoints lw 2 dt " + std::to_string(dash) +
                    " pt 7 ps 0.6 lc rgb '" + colour + "' title " + gnuplot_string(series[i].name + " (median)"));
  }
  if (any_levels)
    parts.push_back(std::string("'bandwidth_levels.dat' using 1:2 with lines lw 3 lc rgb '") + kLevelColour +
                    "' title 'fitted level'");
  if (any_caches)  // a key entry for the dashed markers drawn as arrows (NaN draws nothing)
    parts.push_back(std::string("NaN with lines dt 2 lw 1.5 lc rgb '") + kCacheColour + "' title 'cache capacity'");
  if (parts.empty()) parts.push_back("NaN notitle");
  std::string s = "plot ";
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", \\\n     " : "") + parts[i];
  return s + "\n";
}

}  // namespace

bool build_bandwidth_view(const ViewInput& in, PlotScript* out, std::string* why) {
  const std::vector<Series> series = collect_series(in.machine, in.samples);
  const std::vector<const MemoryLevel*> levels = drawable_levels(in.machine);
  if (series.empty() && levels.empty()) {
    *why = "machine file has no memory levels and there are no bandwidth samples";
    return false;
  }
  const std::vector<CacheMark> caches = cache_marks(in.machine);

  // The key under the axis label, as many rows as its entries take (a GPU's 14 series and the
  // two markers are four rows: a fixed margin put them over the axis label).
  std::vector<std::string> key_titles;
  for (const Series& one : series) key_titles.push_back(one.name + " (median)");
  if (!levels.empty()) key_titles.push_back("fitted level");
  if (!caches.empty()) key_titles.push_back("cache capacity");
  Frame frame;
  frame.top = 0.89;  // room for the cache labels under the title
  const KeyLayout key = key_layout(key_titles, frame);
  frame.bottom = frame_bottom_for_key(key.rows);
  Ranges r = choose_ranges(series, levels, caches, frame);

  // Grow the y range until the highest level label fits inside the frame.
  std::string levels_text;
  for (int attempt = 0; attempt < 6; ++attempt) {
    double top_px = 0;
    levels_text = level_commands(levels, r, &top_px);
    const double excess = top_px + 6 - r.y.px;
    if (excess <= 0) break;
    r.y.hi *= std::pow(10.0, excess / r.y.px_per_decade() * 1.2);
  }

  const std::string title = view_title("Memory bandwidth vs working set", in.machine);

  std::string s = script_preamble("bandwidth", in.format, frame, title);
  s += "set logscale x 2\nset logscale y 10\n";
  s += range_command("x", r.x.lo, r.x.hi);
  s += range_command("y", r.y.lo, r.y.hi);
  s += log2_tics("x", r.x.lo, r.x.hi, format_size);
  s += log10_tics("y", r.y.lo, r.y.hi);
  s += "set xlabel 'working set [bytes; 1 KiB = 1024 B]'\n";
  s += "set ylabel 'bandwidth [GB/s; 1 GB = 1e9 B]'\n";
  s += key_command(key);
  s += cache_commands(caches, r, frame);
  s += levels_text;
  s += plot_command(series, !levels.empty(), !caches.empty());
  s += "unset output\n";

  out->view = "bandwidth";
  out->script = s;
  out->data_files.clear();
  if (!series.empty()) {
    out->data_files.push_back({"bandwidth_samples.dat", points_data(series, false)});
    out->data_files.push_back({"bandwidth_medians.dat", points_data(series, true)});
  }
  if (!levels.empty()) out->data_files.push_back({"bandwidth_levels.dat", levels_data(levels, r)});
  return true;
}

}  // namespace plot_detail
}  // namespace roofprobe
