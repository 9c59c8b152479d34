// The "flops" view: the empirical roofline curve. Every sample of the FLOP probes (sweep rows
// with flops > 0 and bytes > 0) at its arithmetic intensity (flops / bytes of the sample), the
// per-intensity medians joined per series (one series per precision and form), and the fitted
// compute ceilings as horizontals in the colour of their series.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>

#include "driver/model/median_of.hpp"
#include "plot/plot.hpp"

namespace roofprobe {
namespace plot_detail {

namespace {

struct Point {
  double x = 0, y = 0;
};

struct Series {
  std::string name;
  std::vector<Point> samples;
  std::vector<Point> medians;
};

struct Line {
  std::string label;
  double value = 0;
  std::string colour;
  bool labelled = true;  // false: the fma_mix probe's points between noFMA and FMA, drawn faint
};

// "fp64" -> "FP64", "nofma" -> "noFMA": the ceilings' spelling, so a series and its ceiling
// share a name.
std::string token(const std::string& value) {
  if (value == "nofma") return "noFMA";
  std::string out = value;
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

double sample_gflops(const Sample& s) {
  if (finite_positive(s.gflops)) return s.gflops;
  return finite_positive(s.seconds) ? s.flops / s.seconds / 1e9 : 0;
}

bool is_flop_sample(const Sample& s) {
  return finite_positive(s.flops) && finite_positive(s.bytes) && finite_positive(sample_gflops(s));
}

std::string series_name(const Sample& s, bool name_probe) {
  std::string name;
  for (const char* axis : {"precision", "form"}) {
    auto it = s.params.find(axis);
    if (it != s.params.end()) name += (name.empty() ? "" : ".") + token(it->second);
  }
  if (name.empty()) return s.probe.empty() ? "samples" : s.probe;
  return name_probe ? s.probe + " " + name : name;
}

std::vector<Series> collect(const std::vector<Sample>& samples, std::set<std::string>* probes) {
  for (const Sample& s : samples)
    if (is_flop_sample(s)) probes->insert(s.probe);
  const bool name_probe = probes->size() > 1;
  std::vector<Series> out;
  std::map<std::string, std::size_t> index;
  std::vector<std::map<double, std::vector<double>>> per_x;
  for (const Sample& s : samples) {
    if (!is_flop_sample(s)) continue;
    const std::string name = series_name(s, name_probe);
    auto [it, added] = index.emplace(name, out.size());
    if (added) {
      out.push_back({name, {}, {}});
      per_x.emplace_back();
    }
    const double x = s.flops / s.bytes;
    out[it->second].samples.push_back({x, sample_gflops(s)});
    per_x[it->second][x].push_back(sample_gflops(s));
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    for (const auto& [x, ys] : per_x[i]) out[i].medians.push_back({x, median_of(ys)});
  return out;
}

std::string points_data(const std::vector<Series>& series, bool medians) {
  std::string s = medians ? "# per-intensity median per series: flop_per_byte gflops\n"
                          : "# raw samples per series: flop_per_byte gflops\n";
  for (const Series& one : series) {
    s += "# series: " + one_line(one.name) + "\n";
    for (const Point& p : medians ? one.medians : one.samples) s += num(p.x) + " " + num(p.y) + "\n";
    s += "\n\n";
  }
  return s;
}

// Ceilings of the probes drawn (all of them when the machine file does not say which probe).
std::vector<Line> ceiling_lines(const Machine& machine, const std::vector<Series>& series,
                                const std::set<std::string>& probes) {
  std::vector<Line> lines;
  for (const ComputeCeiling& c : machine.compute) {
    if (!finite_positive(c.gflops)) continue;
    if (!c.probe.empty() && !probes.count(c.probe)) continue;
    // A ceiling takes the colour of its series ("FP64.FMA", or "flops FP64.FMA" with two probes).
    std::string colour = "#555555";
    for (std::size_t i = 0; i < series.size(); ++i) {
      const std::string& n = series[i].name;
      if (n == c.name ||
          (n.size() > c.name.size() && n.compare(n.size() - c.name.size() - 1, std::string::npos, " " + c.name) == 0))
        colour = series_colour(i);
    }
    // The fma_mix probe's points: faint and unlabelled (is_fma_mix_point).
    const bool mix_point = is_fma_mix_point(c.name);
    lines.push_back({(c.name.empty() ? std::string("compute") : c.name) + ": " + format_ceiling(c.name, c.gflops),
                     c.gflops, mix_point ? std::string("#b0b0b0") : colour, !mix_point});
  }
  return lines;
}

// The right margin holds the ceiling labels (when there are any); the key goes under the axis
// label in rows.
Frame frame_for(const std::vector<Line>& lines, const std::vector<Series>& series, KeyLayout* layout) {
  Frame frame;
  double widest = 0;
  for (const Line& l : lines)
    if (l.labelled) widest = std::max(widest, Frame::text_px(l.label));
  if (widest > 0) frame.right = std::max(0.6, 1 - (widest + 3.5 * Frame::kCharPx) / Frame::kWidthPx);
  std::vector<std::string> titles;
  for (const Series& s : series) titles.push_back(s.name + " (median)");
  *layout = key_layout(titles, frame);
  frame.bottom = frame_bottom_for_key(layout->rows);
  return frame;
}

struct Ranges {
  LogAxis x, y;
};

// x: every sample, at least three octaves. y: every sample and every ceiling.
Ranges choose_ranges(const std::vector<Series>& series, const std::vector<Line>& lines, const Frame& frame) {
  double x_lo = 0, x_hi = 0, y_lo = 0, y_hi = 0;
  bool first = true;
  for (const Series& s : series)
    for (const Point& p : s.samples) {
      x_lo = first ? p.x : std::min(x_lo, p.x);
      x_hi = first ? p.x : std::max(x_hi, p.x);
      y_lo = first ? p.y : std::min(y_lo, p.y);
      y_hi = first ? p.y : std::max(y_hi, p.y);
      first = false;
    }
  for (const Line& l : lines) y_hi = std::max(y_hi, l.value);
  Ranges r;
  r.x = {pow2_floor(x_lo) / 2, pow2_ceil(x_hi) * 2, frame.width_px()};
  r.y = {y_lo / 1.6, y_hi * 1.8, frame.height_px()};
  if (r.x.hi / r.x.lo < 8) r.x.hi = r.x.lo * 8;
  return r;
}

// Ceiling labels in the right margin (moved apart, with connectors), y grown until they fit.
std::string ceiling_labels(const std::vector<Line>& all, const Frame& frame, LogAxis* y) {
  std::vector<Line> lines;
  for (const Line& l : all)
    if (l.labelled) lines.push_back(l);
  std::string labels;
  for (int attempt = 0; attempt < 6; ++attempt) {
    std::vector<double> wanted;
    for (const Line& l : lines) wanted.push_back(y->to_px(l.value));
    const std::vector<double> placed = spread_apart(wanted, Frame::kLinePx + 2);
    const double connector_px = 1.5 * Frame::kCharPx;
    labels = "# compute ceiling labels (right margin) and their connectors\n";
    double top_px = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
      const double at = y->from_px(placed[i]);
      labels += "set arrow from graph 1, first " + num(lines[i].value) + " to screen " +
                num(frame.right + connector_px / Frame::kWidthPx) + ", first " + num(at) + " nohead lw 1.5 lc rgb '" +
                lines[i].colour + "'\n";
      labels += "set label " + gnuplot_string(lines[i].label) + " at screen " +
                num(frame.right + (connector_px + 4) / Frame::kWidthPx) + ", first " + num(at) + " left tc rgb '" +
                lines[i].colour + "'\n";
      top_px = std::max(top_px, placed[i] + Frame::kLinePx / 2);
    }
    const double excess = top_px + 6 - y->px;
    if (excess <= 0) break;
    y->hi *= std::pow(10.0, excess / y->px_per_decade() * 1.2);
  }
  return labels;
}

// "plot ...": each series' samples and medians, then the ceilings (no newline at the end).
std::string plot_command(const std::vector<Series>& series, const std::vector<Line>& lines) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const std::string colour = series_colour(i);
    const std::string index = " index " + std::to_string(i) + " using 1:2";
    parts.push_back("'flops_samples.dat'" + index + " with points pt 7 ps 0.55 lc rgb '" + translucent(colour, 0.35) +
                    "' notitle");
    parts.push_back("'flops_medians.dat'" + index + " with linespoints lw 2 pt 7 ps 0.7 lc rgb '" + colour +
                    "' title " + gnuplot_string(series[i].name + " (median)"));
  }
  for (std::size_t i = 0; i < lines.size(); ++i)
    parts.push_back("'flops_ceilings.dat' index " + std::to_string(i) + " with lines " +
                    (lines[i].labelled ? "lw 1.5 dt 2" : "lw 1 dt 3") + " lc rgb '" + lines[i].colour + "' notitle");
  std::string s = "plot ";
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", \\\n     " : "") + parts[i];
  return s;
}

std::string ceilings_data(const std::vector<Line>& lines, const LogAxis& x) {
  std::string d = "# fitted compute ceilings: flop_per_byte gflops, across the whole axis\n";
  for (const Line& l : lines)
    d += "# " + one_line(l.label) + "\n" + num(x.lo) + " " + num(l.value) + "\n" + num(x.hi) + " " + num(l.value) +
         "\n\n\n";
  return d;
}

}  // namespace

bool build_flops_view(const ViewInput& in, PlotScript* out, std::string* why) {
  std::set<std::string> probes;
  const std::vector<Series> series = collect(in.samples, &probes);
  if (series.empty()) {
    *why = in.samples.empty()
               ? "no sweep samples (no sweep.csv beside the machine file, or one with no rows)"
               : "no FLOP samples in the sweep (rows with flops > 0 and bytes > 0; probe 'flops' not run)";
    return false;
  }
  const std::vector<Line> lines = ceiling_lines(in.machine, series, probes);
  KeyLayout layout;
  const Frame frame = frame_for(lines, series, &layout);
  Ranges r = choose_ranges(series, lines, frame);
  const std::string labels = ceiling_labels(lines, frame, &r.y);

  std::string s = script_preamble("flops", in.format, frame, view_title("Empirical roofline (FLOP sweep)", in.machine));
  s += "set logscale x 2\nset logscale y 10\n";
  s += range_command("x", r.x.lo, r.x.hi);
  s += range_command("y", r.y.lo, r.y.hi);
  s += log2_tics("x", r.x.lo, r.x.hi, intensity_text);
  s += log10_tics("y", r.y.lo, r.y.hi);
  s += "set xlabel 'arithmetic intensity of the sample [FLOP/byte]'\n";
  s += "set ylabel 'performance [GFLOP/s]'\n";
  s += key_command(layout);
  s += labels;
  s += plot_command(series, lines);
  s += "\nunset output\n";

  out->view = "flops";
  out->script = s;
  out->data_files = {{"flops_samples.dat", points_data(series, false)},
                     {"flops_medians.dat", points_data(series, true)}};
  if (!lines.empty()) out->data_files.push_back({"flops_ceilings.dat", ceilings_data(lines, r.x)});
  return true;
}

}  // namespace plot_detail
}  // namespace roofprobe
