// The overlay roofline of `roofprobe compare --plot`.
#include "plot/compare_overlay.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <set>

#include "driver/model/errors.hpp"
#include "driver/report/export.hpp"

namespace roofprobe {

namespace {

using namespace plot_detail;

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  return s;
}

// The dash pattern of a level: the same level looks the same on every machine.
int level_dash(const Machine& m, const std::string& level) {
  const std::string u = upper(level);
  if (level == m.device.memory_name || u == "HBM" || u == "DRAM" || u.rfind("GDDR", 0) == 0) return 1;
  if (u == "L2") return 2;
  if (u == "L1") return 3;
  if (u == "SHARED" || u == "LDS") return 4;
  return 5;
}

std::string shorten(const std::string& text, std::size_t room) {
  if (text.size() <= room) return text;
  std::size_t cut = room > 3 ? room - 3 : 0;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return text.substr(0, cut) + "...";
}

struct Roof {
  std::size_t machine;
  std::string title;  // key entry
  double gbs, ridge;
  int dash;
};

struct Ceiling {
  std::size_t machine;
  std::string label;  // right margin
  double gflops, x_start;
};

double best_ceiling(const Machine& m, const std::string& name) {
  for (const ComputeCeiling* c : best_compute_ceilings(m))
    if (c->name == name) return c->gflops;
  return 0;
}

std::string best_source(const Machine& m, const std::string& name) {
  for (const ComputeCeiling* c : best_compute_ceilings(m))
    if (c->name == name) return c->source;
  return {};
}

// Spec-sheet values (nothing measured) say so: a comparison usually sets a measurement against them.
std::string spec_mark(const std::string& source) { return source == "spec" ? " (spec)" : ""; }

std::string intensity_tick(double v) { return v >= 1 ? num(v) : "1/" + num(1 / v); }

std::string block(const std::string& comment, double x0, double y0, double x1, double y1) {
  return "# " + one_line(comment) + "\n" + num(x0) + " " + num(y0) + "\n" + num(x1) + " " + num(y1) + "\n\n\n";
}

}  // namespace

std::vector<std::string> overlay_ceiling_names(const std::vector<Machine>& machines, std::size_t max_names) {
  std::vector<std::string> common;
  if (!machines.empty())
    for (const ComputeCeiling* c : best_compute_ceilings(machines.front())) {
      const bool everywhere =
          std::all_of(machines.begin(), machines.end(), [&](const Machine& m) { return best_ceiling(m, c->name) > 0; });
      if (everywhere) common.push_back(c->name);
    }
  if (common.empty()) {
    std::set<std::string> seen;
    for (const Machine& m : machines) {
      const ComputeCeiling* top = nullptr;
      for (const ComputeCeiling* c : best_compute_ceilings(m))
        if (!top || c->gflops > top->gflops) top = c;
      if (top && seen.insert(top->name).second) common.push_back(top->name);
    }
    return common;
  }
  auto priority = [&](const std::string& name) {
    if (name == "FP64.FMA") return 0;
    if (name == "FP32.FMA") return 1;
    return 2;
  };
  std::stable_sort(common.begin(), common.end(), [&](const std::string& a, const std::string& b) {
    if (priority(a) != priority(b)) return priority(a) < priority(b);
    return best_ceiling(machines.front(), a) > best_ceiling(machines.front(), b);
  });
  if (common.size() > max_names) common.resize(max_names);
  return common;
}

namespace {

// Shorter machine names: a first word all of them share ("NVIDIA ") says nothing here.
std::vector<std::string> short_machine_names(const std::vector<Machine>& machines,
                                             const std::vector<std::string>& labels) {
  std::vector<std::string> who(machines.size());
  for (std::size_t i = 0; i < machines.size(); ++i) who[i] = i < labels.size() ? labels[i] : machines[i].device.name;
  const std::size_t space = who.empty() ? std::string::npos : who[0].find(' ');
  if (machines.size() > 1 && space != std::string::npos &&
      std::all_of(who.begin(), who.end(), [&](const std::string& w) {
        return w.size() > space + 1 && w.compare(0, space + 1, who[0], 0, space + 1) == 0;
      }))
    for (std::string& w : who) w.erase(0, space + 1);
  for (std::string& w : who) w = shorten(w, 32);
  return who;
}

// One roof per memory level and one ceiling per common compute ceiling of each machine.
void overlay_lines(const std::vector<Machine>& machines, const std::vector<std::string>& names,
                   const std::vector<std::string>& who, std::vector<Roof>& roofs, std::vector<Ceiling>& ceilings) {
  for (std::size_t i = 0; i < machines.size(); ++i) {
    const Machine& m = machines[i];
    double peak = 0;
    for (const std::string& name : names) {
      const double v = best_ceiling(m, name);
      if (v <= 0) continue;
      peak = std::max(peak, v);
      ceilings.push_back({i, name + ": " + format_ceiling(name, v) + spec_mark(best_source(m, name)), v, 0});
    }
    for (const MemoryLevel* l : best_memory_levels(m))
      roofs.push_back({i, who[i] + ": " + l->level + " " + format_bandwidth(l->gbs) + spec_mark(l->source), l->gbs,
                       peak > 0 ? peak / l->gbs : 0, level_dash(m, l->level)});
  }
  if (roofs.empty()) throw InputError("compare --plot: none of the machine files has a memory level with a bandwidth");
  if (ceilings.empty()) throw InputError("compare --plot: none of the machine files has a compute ceiling");
}

// The frame's margins for the ceiling labels (right) and the key (bottom), and the key's script.
std::string key_script_for(const std::vector<Roof>& roofs, const std::vector<Ceiling>& ceilings, Frame& frame) {
  // The right margin holds the ceiling labels, the bottom the key (one entry per roof).
  double widest = 0;
  for (const Ceiling& c : ceilings) widest = std::max(widest, Frame::text_px(c.label));
  frame.right = std::max(0.6, 1 - (widest + 3.5 * Frame::kCharPx) / Frame::kWidthPx);
  // Key: one entry per roof (a line sample in the roof's colour and dash, then its title),
  // laid out in rows under the x label, as many columns as fit, the block centred.
  double entry_px = 0;
  for (const Roof& r : roofs) entry_px = std::max(entry_px, 36 + Frame::text_px(r.title) + 24);
  const std::size_t columns =
      std::max<std::size_t>(1, std::min<std::size_t>(roofs.size(), std::size_t((Frame::kWidthPx - 80) / entry_px)));
  const std::size_t key_rows = (roofs.size() + columns - 1) / columns;
  const double bottom_px = std::max(frame.bottom * Frame::kHeightPx, 92 + double(key_rows - 1) * Frame::kLinePx);
  frame.bottom = bottom_px / Frame::kHeightPx;
  std::string key_script = "# key: one entry per roof (machine colour, level dash)\nunset key\n";
  const double block_px = double(columns) * entry_px - 24;
  for (std::size_t k = 0; k < roofs.size(); ++k) {
    const double x0 = (Frame::kWidthPx - block_px) / 2 + double(k % columns) * entry_px;
    const double y = bottom_px - 72 - double(k / columns) * Frame::kLinePx;
    const std::string colour = series_colour(roofs[k].machine);
    key_script += "set arrow from screen " + num(x0 / Frame::kWidthPx) + ", screen " + num(y / Frame::kHeightPx) +
                  " to screen " + num((x0 + 30) / Frame::kWidthPx) + ", screen " + num(y / Frame::kHeightPx) +
                  " nohead lw 2.5 dt " + std::to_string(roofs[k].dash) + " lc rgb '" + colour + "'\n";
    key_script += "set label " + gnuplot_string(roofs[k].title) + " at screen " + num((x0 + 36) / Frame::kWidthPx) +
                  ", screen " + num(y / Frame::kHeightPx) + " left tc rgb '#000000'\n";
  }

  return key_script;
}

// Moves labels placed `gap` apart (spread_apart) into [lo, hi], keeping their order and gaps:
// down from the top first, then up from the bottom. False when they cannot all fit.
bool fit_between(std::vector<double>& placed, double gap, double lo, double hi) {
  const std::size_t n = placed.size();
  if (n == 0) return true;
  if (static_cast<double>(n - 1) * gap > hi - lo) return false;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return placed[a] < placed[b]; });
  placed[order[n - 1]] = std::min(placed[order[n - 1]], hi);
  for (std::size_t k = n - 1; k-- > 0;) placed[order[k]] = std::min(placed[order[k]], placed[order[k + 1]] - gap);
  placed[order[0]] = std::max(placed[order[0]], lo);
  for (std::size_t k = 1; k < n; ++k) placed[order[k]] = std::max(placed[order[k]], placed[order[k - 1]] + gap);
  return true;
}

// The ceiling labels' script. Each label sits at its line's height where it can, moved apart
// where labels would touch and kept inside the frame, with a connector from the line's end to a
// moved label. The axis is never stretched to make room (four machines' 24 labels took it from
// 1e6 to 1e9): labels that cannot fit the frame's height are refused.
std::string ceiling_labels_script(const std::vector<Ceiling>& ceilings, const Frame& frame, const LogAxis& y,
                                  std::size_t machine_count) {
  std::vector<double> wanted;
  for (const Ceiling& c : ceilings) wanted.push_back(y.to_px(c.gflops));
  const double gap = Frame::kLinePx + 2;
  std::vector<double> placed = spread_apart(wanted, gap);
  const double margin = Frame::kLinePx / 2 + 3;
  if (!(y.px > 0) || !fit_between(placed, gap, margin, y.px - margin))
    throw InputError("compare --plot: " + std::to_string(machine_count) + " machine files have " +
                     std::to_string(ceilings.size()) +
                     " ceilings to label, more than fit one plot; plot them in smaller groups");
  const double connector_px = 1.5 * Frame::kCharPx;
  const double label_x = frame.right + (connector_px + 4) / Frame::kWidthPx;
  std::string labels_script = "# ceiling labels (right margin) and their connectors, coloured by machine\n";
  for (std::size_t k = 0; k < ceilings.size(); ++k) {
    const Ceiling& c = ceilings[k];
    const std::string colour = series_colour(c.machine);
    const double at = y.from_px(placed[k]);
    labels_script += "set arrow from graph 1, first " + num(c.gflops) + " to screen " +
                     num(frame.right + connector_px / Frame::kWidthPx) + ", first " + num(at) +
                     " nohead lw 1.5 lc rgb '" + colour + "'\n";
    labels_script += "set label " + gnuplot_string(c.label) + " at screen " + num(label_x) + ", first " + num(at) +
                     " left tc rgb '" + colour + "'\n";
  }
  return labels_script;
}

}  // namespace

PlotScript build_compare_overlay(const std::vector<Machine>& machines, const std::vector<std::string>& labels,
                                 const std::string& view, const std::string& format) {
  const std::vector<std::string> names = overlay_ceiling_names(machines);
  const std::vector<std::string> who = short_machine_names(machines, labels);
  std::vector<Roof> roofs;
  std::vector<Ceiling> ceilings;
  overlay_lines(machines, names, who, roofs, ceilings);
  // Ranges: from 1/64 FLOP/byte (further left when a ceiling meets its fastest roof there) to
  // 1024 (further right when a ridge comes within two octaves of the edge).
  double lowest = ceilings.front().gflops, highest = 0, slowest = roofs.front().gbs, fastest = 0, far_ridge = 0;
  for (const Ceiling& c : ceilings) lowest = std::min(lowest, c.gflops), highest = std::max(highest, c.gflops);
  for (const Roof& r : roofs) {
    slowest = std::min(slowest, r.gbs);
    fastest = std::max(fastest, r.gbs);
    far_ridge = std::max(far_ridge, r.ridge);
  }
  // A readable log plot spans a bounded number of decades; valid but extreme files (1e-200 and
  // 1e200 GB/s) would need an axis of hundreds of decades (and int-overflowing tic loops).
  const double intensity_span = std::max(far_ridge, 1024.0) / std::min(lowest / fastest / 4, 1.0 / 64);
  const double rate_span = std::max(highest, fastest) / std::min(lowest, slowest);
  constexpr double kMaxDecades = 24;
  if (!(std::log10(intensity_span) <= kMaxDecades) || !(std::log10(rate_span) <= kMaxDecades))
    throw InputError("compare --plot: the machines' rates span " + format_bandwidth(slowest) + " to " +
                     format_bandwidth(fastest) + " and " + format_compute(lowest) + " to " + format_compute(highest) +
                     ", more than " + std::to_string(int(kMaxDecades)) +
                     " decades on an axis: no readable plot (compare without --plot)");
  // Each ceiling starts where it meets its machine's fastest roof.
  std::vector<double> machine_fastest(machines.size(), 0);
  for (const Roof& r : roofs) machine_fastest[r.machine] = std::max(machine_fastest[r.machine], r.gbs);
  for (Ceiling& c : ceilings) c.x_start = machine_fastest[c.machine] > 0 ? c.gflops / machine_fastest[c.machine] : 0;

  Frame frame;
  const std::string key_script = key_script_for(roofs, ceilings, frame);

  LogAxis x{std::min(1.0 / 64, pow2_floor(lowest / fastest / 4)), 0, frame.width_px()};
  x.hi = std::max(1024.0, pow2_ceil(std::max(far_ridge, x.lo) * 4));
  LogAxis y{slowest * x.lo / 1.5, highest * 2, frame.height_px()};
  for (Roof& r : roofs)
    if (r.ridge <= 0) r.ridge = x.hi;

  const std::string labels_script = ceiling_labels_script(ceilings, frame, y, machines.size());

  std::string title = "Roofline comparison: ";
  for (std::size_t i = 0; i < machines.size(); ++i) title += (i ? " vs " : "") + who[i];
  title = shorten(title, 90);

  const std::string roof_file = view + "_roofs.dat", ceiling_file = view + "_ceilings.dat";
  std::string roof_data = "# memory roofs: flop_per_byte gflops (GFLOP/s = GB/s x FLOP/byte)\n";
  for (const Roof& r : roofs) roof_data += block(r.title, x.lo, r.gbs * x.lo, r.ridge, r.gbs * r.ridge);
  std::string ceiling_data = "# compute ceilings: flop_per_byte gflops\n";
  for (const Ceiling& c : ceilings)
    ceiling_data += block(who[c.machine] + " " + c.label, c.x_start, c.gflops, x.hi, c.gflops);

  std::string s = script_preamble(view, format, frame, title);
  s += "set logscale x 2\nset logscale y 10\n";
  s += range_command("x", x.lo, x.hi);
  s += range_command("y", y.lo, y.hi);
  s += log2_tics("x", x.lo, x.hi, intensity_tick);
  s += log10_tics("y", y.lo, y.hi);
  s += "set xlabel 'arithmetic intensity [FLOP/byte]'\n";
  s += "set ylabel 'performance [GFLOP/s]'\n";
  s += key_script;
  s += labels_script;
  std::vector<std::string> parts;
  for (std::size_t k = 0; k < roofs.size(); ++k)
    parts.push_back(gnuplot_string(roof_file) + " index " + std::to_string(k) + " with lines lw 2.5 dt " +
                    std::to_string(roofs[k].dash) + " lc rgb '" + series_colour(roofs[k].machine) + "' notitle");
  for (std::size_t k = 0; k < ceilings.size(); ++k)
    parts.push_back(gnuplot_string(ceiling_file) + " index " + std::to_string(k) + " with lines lw 2.5 lc rgb '" +
                    series_colour(ceilings[k].machine) + "' notitle");
  s += "plot ";
  for (std::size_t k = 0; k < parts.size(); ++k) s += (k ? ", \\\n     " : "") + parts[k];
  s += "\nunset output\n";

  PlotScript out;
  out.view = view;
  out.script = s;
  out.data_files = {{roof_file, roof_data}, {ceiling_file, ceiling_data}};
  return out;
}

std::string render_compare_overlay(const std::vector<Machine>& machines, const std::vector<std::string>& labels,
                                   const std::string& image) {
  namespace fs = std::filesystem;
  const fs::path path(image);
  std::string format = path.extension().string();
  if (!format.empty()) format.erase(0, 1);
  if (format != "png" && format != "svg" && format != "pdf")
    throw InputError("compare --plot " + image + ": the file name must end in .png, .svg or .pdf");
  const std::string view = path.stem().string();
  // The script names VIEW.gp and its data files in gnuplot strings, which hold no control
  // character: a name with one could not be written as given.
  if (one_line(view) != view)
    throw InputError("compare --plot " + one_line(image) +
                     ": the file name holds a control character (a newline or a tab); choose another name");
  if (view.empty() || view[0] == '.')
    throw InputError("compare --plot " + image + ": give a file name such as compare.png");
  PlotOptions options;
  options.out_dir = path.parent_path().empty() ? "." : path.parent_path().string();
  options.out_dir_named_by_user = true;
  options.format = format;
  return render_script(build_compare_overlay(machines, labels, view, format), options);
}

}  // namespace roofprobe
