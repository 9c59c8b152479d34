// The roofline chart shared by the hierarchical, instruction and shared views: diagonal roofs,
// horizontal ceilings, vertical walls and application points, every line labelled directly.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "plot/plot.hpp"

namespace roofprobe {
namespace plot_detail {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr const char* kWallColour = "#4d4d4d";
constexpr const char* kKernelMarkerColour = "#333333";
// Marker shapes for kernels (filled first); the open diamond (12) marks measured walls.
constexpr int kKernelMarkers[] = {7, 5, 9, 11, 13, 15, 6, 4, 8, 10, 14, 1, 2, 3};
// Key titles: two columns of this many characters fit in the plot area's width.
constexpr std::size_t kKeyTitleChars = 32;

struct Ranges {
  LogAxis x, y;
};

double peak_of(const RooflineChart& c) {
  double capped = 0, any = 0;
  for (const ChartCeiling& ceiling : c.ceilings) {
    any = std::max(any, ceiling.value);
    if (ceiling.caps_roofs) capped = std::max(capped, ceiling.value);
  }
  return capped > 0 ? capped : any;
}

double fastest(const RooflineChart& c) {
  double r = 0;
  for (const ChartRoof& roof : c.roofs) r = std::max(r, roof.rate);
  return r;
}

// A roof this many times slower than the next faster one (a GPU's host link, 55 GB/s under an
// HBM at 4.7 TB/s) is drawn across the plot but does not set its range: followed to its ridge
// it would add two decades of empty plot under and beside the roofs that matter.
constexpr double kRoofGap = 16;

// The slowest roof that sets the range.
double slowest(const RooflineChart& c) {
  std::vector<double> rates;
  for (const ChartRoof& roof : c.roofs) rates.push_back(roof.rate);
  std::sort(rates.begin(), rates.end(), std::greater<double>());
  std::size_t last = 0;
  while (last + 1 < rates.size() && rates[last + 1] * kRoofGap >= rates[last]) ++last;
  return rates[last];
}

// How far beyond the ceilings' range a point may lie and still widen it: 3 octaves of intensity,
// 2 decades of performance down (slow kernels are common and worth seeing), a factor 4 up. A
// point further out (a tensor GEMM whose loads bypass L1 has an L1 intensity of 1e7 FLOP/byte)
// would squeeze every roof into a corner: it is drawn at the edge with an arrow and listed.
constexpr double kPointReachX = 8, kPointReachYDown = 100, kPointReachYUp = 4;

// x: from x_lo_at_most (lower when a ceiling meets the fastest roof further left, or a point
// lies there) to x_hi_at_least (further when the slowest ridge would sit within two octaves of
// the right edge). y: from where the slowest roof enters to above the highest line. Points near
// that range widen it; `off_scale` marks the others (one entry per point).
Ranges choose_ranges(const RooflineChart& c, const Frame& frame, std::vector<bool>* off_scale) {
  const double peak = peak_of(c);
  double lowest = c.ceilings.front().value, highest = 0;
  for (const ChartCeiling& ceiling : c.ceilings) {
    lowest = std::min(lowest, ceiling.value);
    highest = std::max(highest, ceiling.value);
  }
  double x_lo = std::min(c.x_lo_at_most, pow2_floor(lowest / fastest(c) / 4));
  double x_hi = std::max(c.x_hi_at_least, pow2_ceil(peak / slowest(c) * 4));
  double y_lo = slowest(c) * x_lo / 1.5, y_hi = highest * 2;
  for (const ChartWall& w : c.walls) {
    if (finite_positive(w.x)) x_lo = std::min(x_lo, pow2_floor(w.x) / 2);
    if (finite_positive(w.measured_x)) {
      x_lo = std::min(x_lo, pow2_floor(w.measured_x) / 2);
      x_hi = std::max(x_hi, pow2_ceil(w.measured_x) * 2);
    }
  }
  const double reach_x_lo = x_lo / kPointReachX, reach_x_hi = x_hi * kPointReachX;
  const double reach_y_lo = y_lo / kPointReachYDown, reach_y_hi = y_hi * kPointReachYUp;
  off_scale->assign(c.points.size(), false);
  for (std::size_t i = 0; i < c.points.size(); ++i) {
    const ChartPoint& p = c.points[i];
    if (p.x < reach_x_lo || p.x > reach_x_hi || p.y < reach_y_lo || p.y > reach_y_hi) {
      (*off_scale)[i] = true;
      continue;
    }
    x_lo = std::min(x_lo, pow2_floor(p.x) / 2);
    x_hi = std::max(x_hi, pow2_ceil(p.x) * 2);
    y_lo = std::min(y_lo, p.y / 2);
    y_hi = std::max(y_hi, p.y * 2);
  }
  Ranges out;
  out.x = {x_lo, x_hi, frame.width_px()};
  out.y = {y_lo, y_hi, frame.height_px()};
  return out;
}

// Where the solid roofline is at x: the fastest roof, capped by the peak.
double roofline_at(const RooflineChart& c, double x) { return std::min(peak_of(c), fastest(c) * x); }

std::string block(const std::string& comment, double x0, double y0, double x1, double y1) {
  // Two blank lines after each block: one gnuplot `index` per line drawn.
  return "# " + one_line(comment) + "\n" + num(x0) + " " + num(y0) + "\n" + num(x1) + " " + num(y1) + "\n\n\n";
}

// Ceiling labels sit in the right margin, at the height of their line where they can, moved
// apart (least squares) where two would touch; a connector from the line's end at the frame to
// its label keeps a moved label attached to its line. Returns the px of the highest label top.
std::string ceiling_labels(const RooflineChart& c, const Ranges& r, const Frame& frame, double* top_px) {
  std::vector<const ChartCeiling*> labelled;
  std::vector<double> wanted;
  for (const ChartCeiling& ceiling : c.ceilings)
    if (!ceiling.label.empty()) {
      labelled.push_back(&ceiling);
      wanted.push_back(r.y.to_px(ceiling.value));
    }
  const std::vector<double> placed = spread_apart(wanted, Frame::kLinePx + 2);
  const double connector_px = 1.5 * Frame::kCharPx;
  const double label_x = frame.right + (connector_px + 4) / Frame::kWidthPx;
  std::string s = "# ceiling labels (right margin) and their connectors\n";
  *top_px = 0;
  for (std::size_t i = 0; i < labelled.size(); ++i) {
    const ChartCeiling& ceiling = *labelled[i];
    const double y = r.y.from_px(placed[i]);
    s += "set arrow from graph 1, first " + num(ceiling.value) + " to screen " +
         num(frame.right + connector_px / Frame::kWidthPx) + ", first " + num(y) + " nohead lw 1.5 lc rgb '" +
         ceiling.colour + "'\n";
    s += "set label " + gnuplot_string(ceiling.label) + " at screen " + num(label_x) + ", first " + num(y) +
         " left tc rgb '" + ceiling.colour + "'\n";
    *top_px = std::max(*top_px, placed[i] + Frame::kLinePx / 2);
  }
  return s;
}

// Roof labels run along their roof, above it. The roofs are parallel in a log-log plot, so two
// roofs closer than a text line would stack their labels on each other: a label that would
// touch one already placed slides along its roof past it. A label that would cross a wall (or
// sit on a measured wall marker) slides past the wall; `*fits` says whether every label then
// still ends before its roof does (when not, it is left where it started).
std::string roof_labels(const RooflineChart& c, const Ranges& r, bool* fits) {
  const double slope = r.y.px_per_decade() / r.x.px_per_decade();  // screen slope of every roof
  const double angle = std::atan(slope);
  const double cs = std::cos(angle), sn = std::sin(angle);
  const double lift = Frame::kLinePx / 2 + 4;  // from the roof to the text's middle

  struct Placed {
    double along, length, across;
  };
  std::vector<Placed> placed;
  std::vector<double> wall_px;
  for (const ChartWall& w : c.walls) {
    wall_px.push_back(r.x.to_px(w.x));
    if (finite_positive(w.measured_x)) wall_px.push_back(r.x.to_px(w.measured_x));
  }
  const double pad = Frame::kCharPx;                   // between a label and a wall
  const double half_height = Frame::kLinePx / 2 * sn;  // the text's height, seen along x
  const double peak = peak_of(c);
  *fits = true;
  // Roofs within a few percent of each other are one line to the eye: one label names them all.
  struct RoofLabel {
    std::string text, colour;
    double rate;
  };
  std::vector<RoofLabel> roof_texts;
  std::vector<double> rates;
  for (const ChartRoof& roof : c.roofs) rates.push_back(roof.rate);
  for (const std::vector<std::size_t>& group : close_groups(rates, kSharedLabelTolerance)) {
    std::vector<std::string> texts;
    double rate = 0;
    for (std::size_t i : group) {
      texts.push_back(c.roofs[i].label);
      rate = std::max(rate, c.roofs[i].rate);
    }
    roof_texts.push_back({merged_label(texts), group.size() == 1 ? c.roofs[group.front()].colour : "#333333", rate});
  }
  // Every roof line's distance across (parallel lines): a label must not lie across another.
  std::vector<double> roof_across;
  for (const ChartRoof& roof : c.roofs) roof_across.push_back(r.y.to_px(roof.rate * r.x.lo) * cs);
  // The fastest roof's label first: a slower roof's label that finds the band above it taken
  // then goes below its own roof, where nothing is.
  std::stable_sort(roof_texts.begin(), roof_texts.end(),
                   [](const RoofLabel& a, const RoofLabel& b) { return a.rate > b.rate; });
  std::string s = "# roof labels (rotated to the roofs' screen angle)\n";
  for (const RoofLabel& roof : roof_texts) {
    const double v0 = r.y.to_px(roof.rate * r.x.lo);    // roof height at the left edge, px
    const double u_enter = std::max(0.0, -v0 / slope);  // where the roof enters the frame
    const double across = v0 * cs;                      // distance between parallel roofs
    const double length = Frame::text_px(roof.text);
    // Where the roof ends (its ridge), as a distance along it.
    const double end = r.x.to_px(peak / roof.rate) * cs + r.y.to_px(peak) * sn;
    // The label's place along the roof, on one side of it (side +1: above, -1: below): from
    // where the lifted text clears the left border, moved right past other labels in its band
    // and past walls. nullopt when that runs past the roof's end.
    const auto place = [&](double side) -> std::optional<double> {
      const double offset = side * lift;  // from the roof to the text's middle, across it
      const double band = across + offset;
      // Another roof close beside this one runs through the text on that side (an L1 roof 10 px
      // above an L2's): no place there. Roofs a label names together lie within a few px.
      for (double other : roof_across)
        if (std::fabs(other - across) > 4 && std::fabs(other - band) < Frame::kLinePx / 2 + 1) return std::nullopt;
      const double start = (u_enter + std::fabs(offset) * sn + 1.5 * Frame::kCharPx) / cs + v0 * sn;
      auto u_at = [&](double a) { return a * cs - across * sn - offset * sn; };  // text baseline x
      double along = start;
      // Each move goes right past an obstacle, so a few rounds settle it; the cap guards against
      // rounding sending it back and forth.
      for (int round = 0; round < 64; ++round) {
        bool moved = false;
        for (const Placed& p : placed) {
          const bool same_band = std::fabs(p.across - band) < Frame::kLinePx + 2;
          const bool overlap = along < p.along + p.length + Frame::kCharPx && p.along < along + length + Frame::kCharPx;
          if (same_band && overlap) {
            along = p.along + p.length + 2 * Frame::kCharPx;
            moved = true;
          }
        }
        for (double w : wall_px) {
          const double lo = u_at(along) - half_height - pad, hi = u_at(along + length) + half_height + pad;
          if (w > lo && w < hi) {
            along = (w + pad + half_height + 1 + across * sn + offset * sn) / cs;
            moved = true;
          }
        }
        if (!moved) break;
      }
      if (along + length > end - Frame::kCharPx && along != start) return std::nullopt;
      return along;
    };
    // Above the roof; where that runs out of room (a roof close above takes its band), below it;
    // and where neither fits, at the start above, with the caller told to widen the axis.
    double side = 1;
    std::optional<double> along = place(side);
    if (!along) along = place(side = -1);
    if (!along) {
      *fits = false;
      side = 1;
      along = (u_enter + lift * sn + 1.5 * Frame::kCharPx) / cs + v0 * sn;
    }
    const double offset = side * lift;
    placed.push_back({*along, length, across + offset});
    // Back from (along, across) to screen px, then moved off the roof perpendicular to it.
    const double u = *along * cs - across * sn - offset * sn;
    const double v = *along * sn + across * cs + offset * cs;
    s += "set label " + gnuplot_string(roof.text) + " at first " + num(r.x.from_px(u)) + ", first " +
         num(r.y.from_px(v)) + " left rotate by " + num(angle * 180 / kPi) + " front tc rgb '" + roof.colour + "'\n";
  }
  return s;
}

// Wall labels run up along the left side of their wall from just above the x axis (on an opaque
// box: a slow roof may cross them), under every roof (the space right of a wall and under the roofs is where kernels
// sit, left of it nothing can be). The px a label needs below the slowest roof, beyond what the range gives (<= 0:
// fits).
constexpr double kWallLabelStartPx = 10;
double wall_label_start_px(const RooflineChart& c) {
  for (const ChartWall& w : c.walls)
    if (finite_positive(w.measured_x) && !finite_positive(w.measured_y)) return 26;  // over the markers
  return kWallLabelStartPx;
}

double wall_label_deficit(const RooflineChart& c, const Ranges& r) {
  double deficit = 0;
  const double start = wall_label_start_px(c);
  for (const ChartWall& w : c.walls) {
    const double left = r.x.from_px(r.x.to_px(w.x) - Frame::kLinePx - 4);  // the text's far side
    const double roof_px = r.y.to_px(slowest(c) * left);
    const double need = start + Frame::text_px(w.label) + 8;
    deficit = std::max(deficit, need - roof_px);
  }
  return deficit;
}

std::string wall_labels(const RooflineChart& c, const Ranges& r) {
  std::string s = "# wall labels (vertical, left of their wall)\n";
  const double start = wall_label_start_px(c);
  for (const ChartWall& w : c.walls) {
    const double x = r.x.from_px(r.x.to_px(w.x) - Frame::kLinePx / 2 - 3);
    s += "set label " + gnuplot_string(w.label) + " at first " + num(x) + ", first " + num(r.y.from_px(start)) +
         " left rotate by 90 front boxed tc rgb '" + kWallColour + "'\n";
  }
  return s;
}

std::string key_title(const std::string& text) {
  if (text.size() <= kKeyTitleChars) return text;
  std::size_t cut = kKeyTitleChars - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
  return text.substr(0, cut) + "...";
}

struct PointGroup {
  std::string kernel, level;
  std::size_t marker = 0, level_index = 0;
  std::vector<std::size_t> points;  // indices into the chart's points
};

// Above this many kernels the points are drawn per level only, unnamed: one plot element and key
// entry per kernel would make gnuplot re-read the points file once per kernel (quadratic time)
// and the key taller than the page.
constexpr std::size_t kMaxNamedKernels = 24;

struct Overlay {
  std::vector<std::string> kernels, levels;
  std::size_t unnamed_kernels = 0;         // > 0: that many kernels, drawn per level without names
  std::vector<std::string> kernel_titles;  // display_names(kernels): short and unique
  std::vector<std::size_t> kernel_markers;
  std::vector<std::string> level_colours;
  std::vector<PointGroup> groups;
};

Overlay make_overlay(const RooflineChart& c) {
  Overlay o;
  std::map<std::string, std::size_t> kernel_index, level_index, group_index;
  std::size_t extra_colours = 0;
  std::set<std::string> distinct;
  for (const ChartPoint& p : c.points) distinct.insert(p.kernel);
  if (distinct.size() > kMaxNamedKernels) o.unnamed_kernels = distinct.size();
  for (const ChartPoint& p : c.points) {
    const std::string kernel = o.unnamed_kernels > 0 ? std::string() : p.kernel;
    auto [k, new_kernel] = kernel_index.emplace(kernel, o.kernels.size());
    if (new_kernel) {
      o.kernels.push_back(kernel);
      o.kernel_markers.push_back(o.unnamed_kernels > 0 ? 0 : p.marker);
    }
    auto [l, new_level] = level_index.emplace(lower(p.level), o.levels.size());
    if (new_level) {
      o.levels.push_back(p.level);
      std::string colour;
      for (const ChartRoof& roof : c.roofs)
        if (colour.empty() && lower(roof.level) == lower(p.level)) colour = roof.colour;
      if (colour.empty()) colour = series_colour(c.roofs.size() + extra_colours++);
      o.level_colours.push_back(colour);
    }
    auto [g, new_group] = group_index.emplace(kernel + "\n" + lower(p.level), o.groups.size());
    if (new_group) o.groups.push_back({kernel, p.level, o.kernel_markers[k->second], l->second, {}});
    o.groups[g->second].points.push_back(std::size_t(&p - c.points.data()));
  }
  o.kernel_titles = display_names(o.kernels, kKeyTitleChars);
  return o;
}

int kernel_marker(std::size_t i) { return kKernelMarkers[i % (sizeof kKernelMarkers / sizeof kKernelMarkers[0])]; }

// Every key entry: the chart's own, the measured walls, then one per kernel (its marker) and
// one per level (its colour).
std::vector<ChartKeyEntry> key_entries(const RooflineChart& c, const Overlay& o) {
  std::vector<ChartKeyEntry> out = c.key;
  if (std::any_of(c.walls.begin(), c.walls.end(), [](const ChartWall& w) { return finite_positive(w.measured_x); }))
    out.push_back(
        {"measured wall position", std::string("with points pt 12 ps 1.8 lw 2 lc rgb '") + kWallColour + "'"});
  if (o.unnamed_kernels > 0)
    out.push_back(
        {std::to_string(o.unnamed_kernels) + " application kernels (too many to name each)",
         "with points pt " + std::to_string(kernel_marker(0)) + " ps 1.5 lc rgb '" + kKernelMarkerColour + "'"});
  for (std::size_t k = 0; k < o.kernels.size() && o.unnamed_kernels == 0; ++k)
    out.push_back({o.kernel_titles[k], "with points pt " + std::to_string(kernel_marker(o.kernel_markers[k])) +
                                           " ps 1.5 lc rgb '" + kKernelMarkerColour + "'"});
  for (std::size_t l = 0; l < o.levels.size(); ++l)
    out.push_back({"at " + key_title(o.levels[l]), "with points pt 7 ps 1.5 lc rgb '" + o.level_colours[l] + "'"});
  return out;
}

// The right margin holds the ceiling labels; the key goes under the axis label in rows.
Frame frame_for(const RooflineChart& c, const std::vector<ChartKeyEntry>& key, int note_lines, KeyLayout* layout) {
  Frame frame;
  double widest = 0;
  for (const ChartCeiling& ceiling : c.ceilings) widest = std::max(widest, Frame::text_px(ceiling.label));
  frame.right = std::max(0.6, 1 - (widest + 3.5 * Frame::kCharPx) / Frame::kWidthPx);
  std::vector<std::string> titles;
  for (const ChartKeyEntry& e : key) titles.push_back(e.title);
  *layout = key_layout(titles, frame);
  frame.bottom = frame_bottom_for_key(layout->rows, note_lines);
  return frame;
}

std::string plot_command(const RooflineChart& c, const Overlay& o, const std::vector<ChartKeyEntry>& key,
                         bool any_wall_marks) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < c.roofs.size(); ++i)
    parts.push_back(gnuplot_string(c.roof_file) + " index " + std::to_string(i) + " with lines lw 2.5 lc rgb '" +
                    c.roofs[i].colour + "' notitle");
  std::map<std::string, int> next_index;
  for (const ChartCeiling& ceiling : c.ceilings)
    parts.push_back(gnuplot_string(ceiling.data_file) + " index " + std::to_string(next_index[ceiling.data_file]++) +
                    " with lines " + ceiling.style + " lc rgb '" + ceiling.colour + "' notitle");
  if (!c.walls.empty())
    parts.push_back(gnuplot_string(c.view + "_walls.dat") + " with lines lw 1.5 lc rgb '" + kWallColour + "' notitle");
  if (any_wall_marks)
    parts.push_back(gnuplot_string(c.view + "_wall_marks.dat") + " with points pt 12 ps 1.8 lw 2 lc rgb '" +
                    kWallColour + "' notitle");
  for (std::size_t g = 0; g < o.groups.size(); ++g)
    parts.push_back(gnuplot_string(c.view + "_points.dat") + " index " + std::to_string(g) + " with points pt " +
                    std::to_string(kernel_marker(o.groups[g].marker)) + " ps 1.5 lc rgb '" +
                    o.level_colours[o.groups[g].level_index] + "' notitle");
  for (const ChartKeyEntry& e : key) parts.push_back("NaN " + e.style + " title " + gnuplot_string(e.title));
  std::string s = "plot ";
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", \\\n     " : "") + parts[i];
  return s + "\n";
}

std::string header_of(const RooflineChart& c, const std::string& file) {
  for (const auto& [name, header] : c.file_headers)
    if (name == file) return "# " + one_line(header) + "\n";
  return "# " + file + ": x y\n";
}

// Grow y until the ceiling labels fit under the top and the wall labels under the roofs; grow
// x to the left until every roof label finds room between the walls. Returns every label's
// script lines (ceilings, roofs, walls) for the ranges it settled on.
std::string fitted_labels(const RooflineChart& c, const Frame& frame, Ranges* r) {
  std::string labels;
  for (int widen = 0; widen < 5; ++widen) {
    for (int attempt = 0; attempt < 12; ++attempt) {
      double top_px = 0;
      labels = ceiling_labels(c, *r, frame, &top_px);
      const double excess = top_px + 6 - r->y.px;
      const double deficit = wall_label_deficit(c, *r);
      if (excess <= 0 && deficit <= 0) break;
      if (excess > 0) r->y.hi *= std::pow(10.0, excess / r->y.px_per_decade() * 1.2);
      if (deficit > 0) r->y.lo /= std::pow(10.0, deficit / r->y.px_per_decade() * 1.2);
    }
    bool fits = true;
    const std::string roof_text = roof_labels(c, *r, &fits);
    if (fits || c.walls.empty() || widen == 4) {
      labels += roof_text;
      break;
    }
    r->x.lo /= 2;
    r->y.lo = std::min(r->y.lo, slowest(c) * r->x.lo / 1.5);
  }
  if (!c.walls.empty()) labels += wall_labels(c, *r);
  return labels;
}

// Roofs up to their ridge with the peak.
std::string roof_data(const RooflineChart& c, const Ranges& r) {
  const double peak = peak_of(c);
  std::string roofs = header_of(c, c.roof_file);
  for (const ChartRoof& roof : c.roofs) roofs += block(roof.label, r.x.lo, roof.rate * r.x.lo, peak / roof.rate, peak);
  return roofs;
}

// Ceilings from where they meet the fastest roof, one file per data_file in first-seen order.
void add_ceiling_files(const RooflineChart& c, const Ranges& r, PlotScript* out) {
  const double top_rate = fastest(c);
  std::vector<std::string> files;
  std::map<std::string, std::string> ceiling_data;
  for (const ChartCeiling& ceiling : c.ceilings) {
    if (!ceiling_data.count(ceiling.data_file)) {
      files.push_back(ceiling.data_file);
      ceiling_data[ceiling.data_file] = header_of(c, ceiling.data_file);
    }
    ceiling_data[ceiling.data_file] += block(ceiling.label.empty() ? num(ceiling.value) : ceiling.label,
                                             ceiling.value / top_rate, ceiling.value, r.x.hi, ceiling.value);
  }
  for (const std::string& f : files) out->data_files.push_back({f, ceiling_data[f]});
}

// The walls' lines and their measured positions; returns whether any wall has one (its markers'
// file is written only then).
bool add_wall_files(const RooflineChart& c, const Ranges& r, PlotScript* out) {
  if (c.walls.empty()) return false;
  bool any_wall_marks = false;
  std::string walls = "# walls: x from the axis up to the roofline\n";
  std::string marks = "# measured wall positions: x y (y at the axis when no rate was measured)\n";
  for (const ChartWall& w : c.walls) {
    walls += block(w.label, w.x, r.y.lo, w.x, roofline_at(c, w.x));
    if (finite_positive(w.measured_x)) {
      const double y = finite_positive(w.measured_y) ? w.measured_y : r.y.from_px(8);
      marks += "# " + one_line(w.label) + "\n" + num(w.measured_x) + " " + num(y) + "\n";
      any_wall_marks = true;
    }
  }
  out->data_files.push_back({c.view + "_walls.dat", walls});
  if (any_wall_marks) out->data_files.push_back({c.view + "_wall_marks.dat", marks});
  return any_wall_marks;
}

// Where a point is drawn: where it is, or, off scale, just inside the edge it lies beyond with
// an arrow from it to that edge.
struct DrawnPoint {
  double x = 0, y = 0;
  bool off_scale = false;
  std::string arrow;  // "set arrow ..." line when off scale
};

constexpr double kEdgeInsetPx = 16;  // from the frame to an off-scale marker's centre
// Off-scale markers along an edge are placed on a grid of this pitch: markers closer than that
// overlap anyway, and one arrow per grid place bounds gnuplot's work (its time grows with the
// square of the arrows: 60,000 off-scale points took 10 s, one arrow each).
constexpr double kEdgeGridPx = 4;

DrawnPoint place_point(const ChartPoint& p, const Ranges& r, const std::string& colour) {
  DrawnPoint d{p.x, p.y, false, {}};
  double u = r.x.to_px(p.x), v = r.y.to_px(p.y);
  int dx = 0, dy = 0;
  if (u < 0) dx = -1;
  if (u > r.x.px) dx = 1;
  if (v < 0) dy = -1;
  if (v > r.y.px) dy = 1;
  if (dx == 0 && dy == 0) return d;
  const auto on_grid = [](double w, double px) {
    return std::clamp(std::round(w / kEdgeGridPx) * kEdgeGridPx, kEdgeInsetPx, px - kEdgeInsetPx);
  };
  u = dx != 0 ? (dx < 0 ? kEdgeInsetPx : r.x.px - kEdgeInsetPx) : on_grid(u, r.x.px);
  v = dy != 0 ? (dy < 0 ? kEdgeInsetPx : r.y.px - kEdgeInsetPx) : on_grid(v, r.y.px);
  d.off_scale = true;
  d.x = r.x.from_px(u);
  d.y = r.y.from_px(v);
  // From beside the marker to the frame, in the direction the point lies.
  const double u0 = u + dx * 7, v0 = v + dy * 7;
  const double u1 = dx == 0 ? u0 : (dx < 0 ? 0.0 : r.x.px), v1 = dy == 0 ? v0 : (dy < 0 ? 0.0 : r.y.px);
  d.arrow = "set arrow from first " + num(r.x.from_px(u0)) + ", first " + num(r.y.from_px(v0)) + " to first " +
            num(r.x.from_px(u1)) + ", first " + num(r.y.from_px(v1)) +
            " head filled size screen 0.007,30 lw 2 lc rgb '" + colour + "' front\n";
  return d;
}

// The points as drawn (off-scale ones at the edge), one block per kernel and level.
std::string points_data(const RooflineChart& c, const Overlay& overlay, const std::vector<DrawnPoint>& drawn) {
  std::string pts = "# application kernels: intensity performance, one block per kernel and level\n";
  for (const PointGroup& g : overlay.groups) {
    pts += "# " + (g.kernel.empty() ? std::string("kernels") : one_line(g.kernel)) + " @ " + one_line(g.level) + "\n";
    for (std::size_t i : g.points) {
      if (drawn[i].off_scale)
        pts += "# off scale, drawn at the edge: " + num(c.points[i].x) + " " + num(c.points[i].y) + "\n";
      pts += num(drawn[i].x) + " " + num(drawn[i].y) + "\n";
    }
    pts += "\n\n";
  }
  return pts;
}

constexpr int kMaxNoteLines = 3;

int off_scale_note_lines(const std::vector<bool>& off_scale) {
  const int n = int(std::count(off_scale.begin(), off_scale.end(), true));
  return std::min(n, kMaxNoteLines);
}

// One line under the plot per off-scale point (at most three; the rest counted in the last).
std::string off_scale_notes(const RooflineChart& c, const Overlay& o, const std::vector<DrawnPoint>& drawn,
                            const KeyLayout& layout) {
  std::vector<std::string> lines;
  std::size_t total = 0;
  for (std::size_t k = 0; k < o.kernels.size(); ++k)
    for (const PointGroup& g : o.groups) {
      if (g.kernel != o.kernels[k]) continue;
      for (std::size_t i : g.points) {
        if (!drawn[i].off_scale) continue;
        ++total;
        const ChartPoint& p = c.points[i];
        const std::string y = c.y_text ? c.y_text(p.y) : compact_number(p.y);
        // Drawn unnamed (too many kernels), the note still names its own.
        const std::string name = o.unnamed_kernels > 0 ? key_title(p.kernel) : o.kernel_titles[k];
        lines.push_back("off scale, drawn at the edge: " + name + " at " + key_title(g.level) + ": " +
                        compact_number(p.x) + (c.x_unit.empty() ? "" : " " + c.x_unit) + ", " + y);
      }
    }
  if (lines.size() > std::size_t(kMaxNoteLines)) {
    lines.resize(kMaxNoteLines - 1);
    lines.push_back("and " + std::to_string(total - lines.size()) + " more points off scale (values in " + c.view +
                    "_points.dat)");
  }
  std::string s = lines.empty() ? "" : "# off-scale points, listed under the plot\n";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    // Upwards from the key's top, the last line nearest the key.
    const double y_px = 12 + layout.rows * 22.0 + 12 + double(lines.size() - 1 - i) * 20;
    s += "set label " + gnuplot_string(lines[i]) + " at screen 0.5, screen " + num(y_px / Frame::kHeightPx) +
         " center tc rgb '#444444'\n";
  }
  return s;
}

}  // namespace

std::string intensity_text(double v) {
  if (!(v > 0) || !std::isfinite(v)) return num(v);
  const double octave = std::log2(v);
  const bool power_of_two = std::fabs(octave - std::round(octave)) < 1e-9;
  if (power_of_two && (octave > 13.5 || octave < -10.5)) return "2^" + std::to_string(int(std::lround(octave)));
  if (v >= 1) return v < 1e5 && v == std::round(v) ? num(v) : compact_number(v);
  const double inverse = 1 / v;
  if (std::fabs(inverse - std::round(inverse)) < 1e-6 * inverse) return "1/" + num(std::round(inverse));
  return compact_number(v);
}

std::vector<ChartPoint> chart_points(const std::vector<KernelPoint>& points, const std::string& kind,
                                     const Machine& machine, bool (*accept)(const std::string& level)) {
  std::set<std::string> names;
  for (const MemoryLevel& l : machine.memory) names.insert(lower(l.level));
  // The device's memory level (a "system" level may come after it): the target of aliases.
  std::string last;
  for (const MemoryLevel& l : machine.memory) {
    const std::string n = lower(l.level);
    if (n == "dram" || n == "hbm" || n.rfind("gddr", 0) == 0) last = l.level;
  }
  std::vector<ChartPoint> out;
  std::map<std::string, std::size_t> markers;  // over the whole file, so a kernel looks alike everywhere
  for (const KernelPoint& p : points) {
    const std::size_t marker = markers.emplace(p.kernel, markers.size()).first->second;
    if (p.kind != kind || (accept && !accept(p.level))) continue;
    if (!finite_positive(p.intensity) || !finite_positive(p.performance)) continue;
    std::string level = p.level;
    const std::string l = lower(level);
    const bool memory_alias = l == "dram" || l == "hbm" || l.rfind("gddr", 0) == 0 || l == "memory";
    if (!names.count(l) && memory_alias && !last.empty() && names.size() > 0) {
      const std::string last_lower = lower(last);
      if (last_lower == "dram" || last_lower == "hbm" || last_lower.rfind("gddr", 0) == 0) level = last;
    }
    out.push_back({p.kernel, level, p.intensity, p.performance, marker});
  }
  return out;
}

PlotScript render_roofline_chart(const RooflineChart& c, const std::string& format) {
  const Overlay overlay = make_overlay(c);
  const std::vector<ChartKeyEntry> key = key_entries(c, overlay);
  std::vector<bool> off_scale;
  Ranges r = choose_ranges(c, Frame{}, &off_scale);
  KeyLayout layout;
  const Frame frame = frame_for(c, key, off_scale_note_lines(off_scale), &layout);
  r.x.px = frame.width_px();
  r.y.px = frame.height_px();
  const std::string labels = fitted_labels(c, frame, &r);

  std::vector<DrawnPoint> drawn;
  for (const PointGroup& g : overlay.groups)
    for (std::size_t i : g.points) {
      if (drawn.size() < c.points.size()) drawn.resize(c.points.size());
      drawn[i] = place_point(c.points[i], r, overlay.level_colours[g.level_index]);
    }

  std::string s = script_preamble(c.view, format, frame, c.title);
  s += "set logscale x 2\nset logscale y 10\n";
  s += range_command("x", r.x.lo, r.x.hi);
  s += range_command("y", r.y.lo, r.y.hi);
  s += log2_tics("x", r.x.lo, r.x.hi, intensity_text);
  s += log10_tics("y", r.y.lo, r.y.hi);
  s += "set xlabel " + gnuplot_string(c.x_label) + "\n";
  s += "set ylabel " + gnuplot_string(c.y_label) + "\n";
  s += key_command(layout);
  s += labels;
  std::set<std::string> arrows;  // markers at one grid place share their arrow
  for (const DrawnPoint& d : drawn)
    if (!d.arrow.empty() && arrows.insert(d.arrow).second) s += d.arrow;
  s += off_scale_notes(c, overlay, drawn, layout);

  PlotScript out;
  out.view = c.view;
  out.data_files.push_back({c.roof_file, roof_data(c, r)});
  add_ceiling_files(c, r, &out);
  const bool any_wall_marks = add_wall_files(c, r, &out);
  if (!overlay.groups.empty()) out.data_files.push_back({c.view + "_points.dat", points_data(c, overlay, drawn)});

  s += plot_command(c, overlay, key, any_wall_marks);
  s += "unset output\n";
  out.script = s;
  return out;
}

}  // namespace plot_detail
}  // namespace roofprobe
