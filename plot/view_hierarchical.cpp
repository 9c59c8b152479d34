// The "hierarchical" view: the hierarchical roofline. One roof per memory level (GFLOP/s =
// GB/s x FLOP/byte) up to its ridge with the highest compute ceiling, one horizontal line per
// compute ceiling, every line labelled directly with its value.
#include <algorithm>
#include <cmath>

#include "plot/plot.hpp"

namespace roofprobe {
namespace plot_detail {

namespace {

constexpr double kPi = 3.14159265358979323846;

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

// Darker than the memory colours so ceilings and roofs never look alike.
std::string ceiling_colour(std::size_t i) {
  static const char* colours[] = {"#000000", "#8E1B1B", "#5B2C83", "#3D5A1E",
                                  "#8C510A", "#01665E", "#555555"};
  return colours[i % (sizeof colours / sizeof colours[0])];
}

struct Roof {
  std::string label;   // "L2: 421 GB/s"
  double gbs = 0;
  double ridge = 0;    // FLOP/byte where it meets the highest ceiling
  std::string colour;
};

struct Ceiling {
  std::string label;   // "FP64.FMA: 98.3 GFLOP/s"
  double gflops = 0;
  double theoretical = 0;  // 0: not drawn
  std::string colour;
};

struct Ranges {
  LogAxis x, y;
};

std::vector<Roof> make_roofs(const Machine& m, double peak) {
  std::vector<Roof> out;
  for (const MemoryLevel& level : m.memory) {
    if (!finite_positive(level.gbs)) continue;
    const std::string name = level.level.empty() ? "level" : level.level;
    out.push_back({name + ": " + format_bandwidth(level.gbs), level.gbs, peak / level.gbs,
                   series_colour(out.size())});
  }
  return out;
}

std::vector<Ceiling> make_ceilings(const Machine& m) {
  std::vector<Ceiling> out;
  for (const ComputeCeiling& c : m.compute) {
    if (!finite_positive(c.gflops)) continue;
    const std::string name = c.name.empty() ? "compute" : c.name;
    const double theoretical = finite_positive(c.theoretical_gflops) ? c.theoretical_gflops : 0;
    out.push_back({name + ": " + format_compute(c.gflops), c.gflops, theoretical,
                   ceiling_colour(out.size())});
  }
  return out;
}

double fastest(const std::vector<Roof>& roofs) {
  double g = 0;
  for (const Roof& r : roofs) g = std::max(g, r.gbs);
  return g;
}

// x: from 1/64 FLOP/byte (lower when a ceiling meets the fastest roof further left) to 1024
// (further when the slowest ridge would sit within two octaves of the right edge).
// y: from where the slowest roof enters to above the highest line.
Ranges choose_ranges(const std::vector<Roof>& roofs, const std::vector<Ceiling>& ceilings,
                     const Frame& frame) {
  double lowest = ceilings.front().gflops, highest = 0, slowest = roofs.front().gbs, far_ridge = 0;
  for (const Ceiling& c : ceilings) {
    lowest = std::min(lowest, c.gflops);
    highest = std::max({highest, c.gflops, c.theoretical});
  }
  for (const Roof& r : roofs) {
    slowest = std::min(slowest, r.gbs);
    far_ridge = std::max(far_ridge, r.ridge);
  }
  Ranges out;
  const double x_lo = std::min(1.0 / 64, pow2_floor(lowest / fastest(roofs) / 4));
  const double x_hi = std::max(1024.0, pow2_ceil(far_ridge * 4));
  out.x = {x_lo, x_hi, frame.width_px()};
  out.y = {slowest * x_lo / 1.5, highest * 2, frame.height_px()};
  return out;
}

std::string block(const std::string& comment, double x0, double y0, double x1, double y1) {
  // Two blank lines after each block: one gnuplot `index` per line drawn.
  return "# " + one_line(comment) + "\n" + num(x0) + " " + num(y0) + "\n" + num(x1) + " " +
         num(y1) + "\n\n\n";
}

std::string roofs_data(const std::vector<Roof>& roofs, const Ranges& r) {
  std::string s = "# memory roofs: flop_per_byte gflops (GFLOP/s = GB/s x FLOP/byte)\n";
  for (const Roof& roof : roofs)
    s += block(roof.label, r.x.lo, roof.gbs * r.x.lo, roof.ridge, roof.gbs * roof.ridge);
  return s;
}

// Each ceiling starts where it meets the fastest roof.
std::string ceilings_data(const std::vector<Ceiling>& ceilings, double fastest_gbs, const Ranges& r,
                          bool theoretical) {
  std::string s = theoretical ? "# theoretical peaks: flop_per_byte gflops\n"
                              : "# compute ceilings: flop_per_byte gflops\n";
  for (const Ceiling& c : ceilings) {
    const double y = theoretical ? c.theoretical : c.gflops;
    if (y > 0) s += block(c.label, y / fastest_gbs, y, r.x.hi, y);
  }
  return s;
}

// Ceiling labels sit in the right margin, at the height of their line where they can, moved
// apart (least squares) where two would touch; a connector from the line's end at the frame to
// its label keeps a moved label attached to its line. Returns the px of the highest label top.
std::string ceiling_labels(const std::vector<Ceiling>& ceilings, const Ranges& r, const Frame& frame,
                           double* top_px) {
  std::vector<double> wanted;
  for (const Ceiling& c : ceilings) wanted.push_back(r.y.to_px(c.gflops));
  const std::vector<double> placed = spread_apart(wanted, Frame::kLinePx + 2);
  const double connector_px = 1.5 * Frame::kCharPx;
  const double label_x = frame.right + (connector_px + 4) / Frame::kWidthPx;
  std::string s = "# compute ceiling labels (right margin) and their connectors\n";
  *top_px = 0;
  for (std::size_t i = 0; i < ceilings.size(); ++i) {
    const Ceiling& c = ceilings[i];
    const double y = r.y.from_px(placed[i]);
    s += "set arrow from graph 1, first " + num(c.gflops) + " to screen " +
         num(frame.right + connector_px / Frame::kWidthPx) + ", first " + num(y) +
         " nohead lw 1.5 lc rgb '" + c.colour + "'\n";
    s += "set label " + gnuplot_string(c.label) + " at screen " + num(label_x) + ", first " + num(y) +
         " left tc rgb '" + c.colour + "'\n";
    *top_px = std::max(*top_px, placed[i] + Frame::kLinePx / 2);
  }
  return s;
}

// The right margin holds the ceiling labels: as wide as the longest one plus its connector.
Frame frame_for(const std::vector<Ceiling>& ceilings) {
  Frame frame;
  double widest = 0;
  for (const Ceiling& c : ceilings) widest = std::max(widest, Frame::text_px(c.label));
  frame.right = std::max(0.6, 1 - (widest + 3.5 * Frame::kCharPx) / Frame::kWidthPx);
  return frame;
}

// Roof labels run along their roof, above it. The roofs are parallel in a log-log plot, so two
// roofs closer than a text line would stack their labels on each other: a label that would
// touch one already placed slides along its roof past it.
std::string roof_labels(const std::vector<Roof>& roofs, const Ranges& r) {
  const double slope = r.y.px_per_decade() / r.x.px_per_decade();  // screen slope of every roof
  const double angle = std::atan(slope);
  const double c = std::cos(angle), sn = std::sin(angle);
  const double lift = Frame::kLinePx / 2 + 4;  // from the roof to the text's middle

  struct Placed {
    double along, length, across;
  };
  std::vector<Placed> placed;
  std::string s = "# memory roof labels (rotated to the roofs' screen angle)\n";
  for (const Roof& roof : roofs) {
    const double v0 = r.y.to_px(roof.gbs * r.x.lo);  // roof height at the left edge, px
    const double u_enter = std::max(0.0, -v0 / slope);  // where the roof enters the frame
    const double across = v0 * c;                       // distance between parallel roofs
    const double length = Frame::text_px(roof.label);
    // Start far enough right that the lifted text clears the left border.
    double along = (u_enter + lift * sn + 1.5 * Frame::kCharPx) / c + v0 * sn;
    for (bool moved = true; moved;) {
      moved = false;
      for (const Placed& p : placed) {
        const bool same_band = std::fabs(p.across - across) < Frame::kLinePx + 2;
        const bool overlap = along < p.along + p.length + Frame::kCharPx &&
                             p.along < along + length + Frame::kCharPx;
        if (same_band && overlap) {
          along = p.along + p.length + 2 * Frame::kCharPx;
          moved = true;
        }
      }
    }
    placed.push_back({along, length, across});
    // Back from (along, across) to screen px, then lifted off the roof perpendicular to it.
    const double u = along * c - across * sn - lift * sn;
    const double v = along * sn + across * c + lift * c;
    s += "set label " + gnuplot_string(roof.label) + " at first " + num(r.x.from_px(u)) + ", first " +
         num(r.y.from_px(v)) + " left rotate by " + num(angle * 180 / kPi) + " front tc rgb '" +
         roof.colour + "'\n";
  }
  return s;
}

std::string intensity_tick(double v) {
  if (v >= 1) return num(v);
  return "1/" + num(1 / v);
}

std::string plot_command(const std::vector<Roof>& roofs, const std::vector<Ceiling>& ceilings) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < roofs.size(); ++i)
    parts.push_back("'hierarchical_memory.dat' index " + std::to_string(i) +
                    " with lines lw 2.5 lc rgb '" + roofs[i].colour + "' notitle");
  for (std::size_t i = 0; i < ceilings.size(); ++i)
    parts.push_back("'hierarchical_compute.dat' index " + std::to_string(i) +
                    " with lines lw 2.5 lc rgb '" + ceilings[i].colour + "' notitle");
  std::size_t block = 0;
  for (const Ceiling& c : ceilings)
    if (c.theoretical > 0)
      parts.push_back("'hierarchical_theoretical.dat' index " + std::to_string(block++) +
                      " with lines lw 1.5 dt 2 lc rgb '" + c.colour + "' notitle");
  if (block > 0)
    parts.push_back("NaN with lines lw 1.5 dt 2 lc rgb '#555555' title 'theoretical peak'");
  std::string s = "plot ";
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", \\\n     " : "") + parts[i];
  return s + "\n";
}

}  // namespace

bool build_hierarchical_view(const ViewInput& in, PlotScript* out, std::string* why) {
  const std::vector<Ceiling> ceilings = make_ceilings(in.machine);
  double peak = 0;
  for (const Ceiling& c : ceilings) peak = std::max(peak, c.gflops);
  const std::vector<Roof> roofs = make_roofs(in.machine, peak);
  if (roofs.empty() || ceilings.empty()) {
    *why = roofs.empty() ? "machine file has no memory levels with a bandwidth"
                         : "machine file has no compute ceilings";
    return false;
  }

  const Frame frame = frame_for(ceilings);
  Ranges r = choose_ranges(roofs, ceilings, frame);
  std::string labels;
  for (int attempt = 0; attempt < 6; ++attempt) {  // grow y until the ceiling labels fit
    double top_px = 0;
    labels = ceiling_labels(ceilings, r, frame, &top_px);
    const double excess = top_px + 6 - r.y.px;
    if (excess <= 0) break;
    r.y.hi *= std::pow(10.0, excess / r.y.px_per_decade() * 1.2);
  }
  labels += roof_labels(roofs, r);

  const std::string title = view_title("Hierarchical roofline", in.machine);

  std::string s = script_preamble("hierarchical", in.format, frame, title);
  s += "set logscale x 2\nset logscale y 10\n";
  s += range_command("x", r.x.lo, r.x.hi);
  s += range_command("y", r.y.lo, r.y.hi);
  s += log2_tics("x", r.x.lo, r.x.hi, intensity_tick);
  s += log10_tics("y", r.y.lo, r.y.hi);
  s += "set xlabel 'arithmetic intensity [FLOP/byte]'\n";
  s += "set ylabel 'performance [GFLOP/s]'\n";
  s += "set key at screen " + num(frame.right) + ", screen 0.012 right bottom samplen 2\n";
  s += labels;
  s += plot_command(roofs, ceilings);
  s += "unset output\n";

  const bool any_theoretical =
      std::any_of(ceilings.begin(), ceilings.end(), [](const Ceiling& c) { return c.theoretical > 0; });
  out->view = "hierarchical";
  out->script = s;
  out->data_files = {{"hierarchical_memory.dat", roofs_data(roofs, r)},
                     {"hierarchical_compute.dat", ceilings_data(ceilings, fastest(roofs), r, false)}};
  if (any_theoretical)
    out->data_files.push_back(
        {"hierarchical_theoretical.dat", ceilings_data(ceilings, fastest(roofs), r, true)});
  return true;
}

}  // namespace plot_detail
}  // namespace roofprobe
