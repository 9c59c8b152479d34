// The "power" view: the energy roofline (Choi et al., IPDPS 2013). Top: energy efficiency,
// GFLOP/s per watt (= GFLOP per joule), against arithmetic intensity; bottom: the power a kernel
// of that intensity draws. From the fitted energy model (energy_model:), each FLOP type against
// the device's memory: energy per FLOP at intensity I is eps_flop + eps_byte / I + pi0 t(I), with
// t(I) = max(1 / GFLOP/s, 1 / (GB/s x I)) the time per FLOP at the ceilings, so the efficiency
// curves bend at the balance points instead of breaking like time's roofline. From the
// per-ceiling figures (energy:), dashed: each compute ceiling's GFLOP/J as a ceiling and each
// memory level's FLOP/J per FLOP/byte as a roof (each includes the constant power at its own
// rate). The measured points of the sweep (FLOP points with energy) are drawn over them; the
// power panel carries the idle power, the fitted constant power and the power limit where the
// machine file records one (device.extra power_limit_w).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "plot/plot.hpp"

namespace roofprobe {
namespace plot_detail {

namespace {

struct Curve {
  std::string title;
  std::vector<std::pair<double, double>> efficiency;  // FLOP/byte, GFLOP/J
  std::vector<std::pair<double, double>> power;       // FLOP/byte, W
};

struct Range {
  double lo = 0, hi = 0;
  void take(double v) {
    if (!finite_positive(v)) return;
    lo = lo > 0 ? std::min(lo, v) : v;
    hi = std::max(hi, v);
  }
};

const MemoryLevel* level_named(const Machine& m, const std::string& name) {
  for (const MemoryLevel& l : m.memory)
    if (l.level == name && finite_positive(l.gbs)) return &l;
  return nullptr;
}

const ComputeCeiling* ceiling_named(const Machine& m, const std::string& name) {
  for (const ComputeCeiling& c : m.compute)
    if (c.name == name && finite_positive(c.gflops)) return &c;
  return nullptr;
}

// The model's memory level: the device's memory when fitted, else the farthest level fitted.
const EnergyCoefficient* model_memory(const Machine& m) {
  const EnergyModelSection& e = *m.energy_model;
  for (const EnergyCoefficient& c : e.pj_per_byte)
    if (c.name == m.device.memory_name) return &c;
  return e.pj_per_byte.empty() ? nullptr : &e.pj_per_byte.back();
}

std::vector<double> intensity_grid(double lo, double hi) {
  std::vector<double> x;
  const int steps = 240;
  for (int i = 0; i <= steps; ++i) x.push_back(lo * std::pow(hi / lo, double(i) / steps));
  return x;
}

// One model curve per FLOP type that has a ceiling, against the model's memory level.
std::vector<Curve> model_curves(const Machine& m, const std::vector<double>& grid) {
  std::vector<Curve> out;
  if (!m.energy_model) return out;
  const EnergyModelSection& e = *m.energy_model;
  const EnergyCoefficient* memory = model_memory(m);
  const MemoryLevel* level = memory ? level_named(m, memory->name) : nullptr;
  if (level == nullptr) return out;
  for (const EnergyCoefficient& f : e.pj_per_flop) {
    const ComputeCeiling* c = ceiling_named(m, f.name);
    if (c == nullptr) continue;
    Curve curve;
    char title[200];
    std::snprintf(title, sizeof title, "%s / %s, model: %.3g pJ/FLOP, %.3g pJ/B, %.3g W constant", f.name.c_str(),
                  memory->name.c_str(), f.value, memory->value, e.constant_power_w);
    curve.title = title;
    for (double i : grid) {
      const double seconds_per_flop = std::max(1 / (c->gflops * 1e9), 1 / (level->gbs * 1e9 * i));
      const double joules_per_flop = (f.value + memory->value / i) * 1e-12 + e.constant_power_w * seconds_per_flop;
      if (!(joules_per_flop > 0)) continue;  // a fit with negative coefficients draws nothing there
      curve.efficiency.push_back({i, 1e-9 / joules_per_flop});
      curve.power.push_back({i, joules_per_flop / seconds_per_flop});
    }
    if (!curve.efficiency.empty()) out.push_back(std::move(curve));
  }
  return out;
}

// A sweep point with FLOPs, bytes and energy: its intensity, GFLOP/J and power.
struct MeasuredPoint {
  double intensity = 0, gflop_per_j = 0, watts = 0;
};

std::vector<MeasuredPoint> measured_points(const Machine& m, const std::vector<Sample>& samples) {
  struct Sum {
    double flops = 0, bytes = 0, joules = 0, seconds = 0;
    bool disturbed = false;
  };
  std::map<std::pair<std::string, int>, Sum> points;
  for (const Sample& s : samples) {
    if (!(s.energy_j > 0) || !(s.flops > 0) || !(s.bytes > 0)) continue;
    // Each phase's launches are a point of their own: the sustained windows, the energy phase's
    // shares and the sweep's samples ran at different rates.
    Sum& p = points[{s.backend + "/" + s.probe + "/" + s.phase, s.point}];
    p.flops += s.flops;
    p.bytes += s.bytes;
    p.joules += s.energy_j;
    p.seconds += s.seconds;
    if (s.flags.find(kForeignLoadFlag) != std::string::npos || is_underfilled(s)) p.disturbed = true;
  }
  const double min_seconds = m.energy ? m.energy->min_point_seconds : 0;
  std::vector<MeasuredPoint> out;
  for (const auto& [key, p] : points)
    if (!p.disturbed && p.seconds >= min_seconds && p.seconds > 0)
      out.push_back({p.flops / p.bytes, p.flops / p.joules * 1e-9, p.joules / p.seconds});
  return out;
}

std::string block(const std::vector<std::pair<double, double>>& xy, const std::string& name) {
  std::string s = "# " + one_line(name) + "\n";
  for (const auto& [x, y] : xy) s += num(x) + " " + num(y) + "\n";
  return s + "\n\n";
}

double extra_number(const DeviceInfo& d, const std::string& key) {
  auto it = d.extra.find(key);
  return it == d.extra.end() ? 0 : std::atof(it->second.c_str());
}

}  // namespace

bool build_power_view(const ViewInput& in, PlotScript* out, std::string* why) {
  const Machine& m = in.machine;
  const bool per_ceiling = m.energy && !m.energy->ceilings.empty();
  const bool fitted = m.energy_model.has_value();
  if (!per_ceiling && !fitted) {
    *why = "the machine file has no energy figures (no energy: or energy_model: section; see its missing: lines)";
    return false;
  }

  // Intensities: a wide roofline range, widened to hold every balance point with room.
  double x_lo = 1.0 / 64, x_hi = 1024;
  for (const ComputeCeiling& c : m.compute)
    for (const MemoryLevel& l : m.memory)
      if (finite_positive(c.gflops) && finite_positive(l.gbs)) {
        x_lo = std::min(x_lo, c.gflops / l.gbs / 64);
        x_hi = std::max(x_hi, c.gflops / l.gbs * 64);
      }
  x_lo = pow2_floor(x_lo);
  x_hi = pow2_ceil(x_hi);
  const std::vector<double> grid = intensity_grid(x_lo, x_hi);

  const std::vector<Curve> curves = model_curves(m, grid);
  Range eff, watts;
  for (const Curve& c : curves) {
    for (const auto& [x, y] : c.efficiency) eff.take(y);
    for (const auto& [x, y] : c.power) watts.take(y);
  }

  // The per-ceiling figures: compute ceilings flat, memory levels as roofs GFLOP/J = I x 1e3 / pJ/B.
  std::string ceilings_data = "# per-ceiling energy: flop_per_byte gflop_per_joule, one block per ceiling\n";
  std::vector<std::string> ceiling_titles;
  std::vector<bool> ceiling_is_roof;
  double roof_cap = 0;  // memory roofs end at the highest compute ceiling's efficiency
  if (per_ceiling)
    for (const EnergyFigure& f : m.energy->ceilings)
      if (finite_positive(f.pj_per_flop)) roof_cap = std::max(roof_cap, 1e3 / f.pj_per_flop);
  // Without a compute ceiling's figure the model's best efficiency caps them.
  if (roof_cap == 0 && !curves.empty()) roof_cap = eff.hi;
  if (per_ceiling)
    for (const EnergyFigure& f : m.energy->ceilings) {
      std::vector<std::pair<double, double>> line;
      char title[160];
      if (finite_positive(f.pj_per_flop)) {
        const double y = 1e3 / f.pj_per_flop;
        line = {{x_lo, y}, {x_hi, y}};
        std::snprintf(title, sizeof title, "%s, measured: %.3g GFLOP/J (%.3g pJ/FLOP, %.3g W)", f.name.c_str(), y,
                      f.pj_per_flop, f.power_w);
        ceiling_is_roof.push_back(false);
      } else if (finite_positive(f.pj_per_byte)) {
        const double slope = 1e3 / f.pj_per_byte;
        const double end = roof_cap > 0 ? std::min(x_hi, roof_cap / slope) : x_hi;
        line = {{x_lo, slope * x_lo}, {end, slope * end}};
        std::snprintf(title, sizeof title, "%s, measured: %.3g pJ/B (%.3g W)", f.name.c_str(), f.pj_per_byte,
                      f.power_w);
        ceiling_is_roof.push_back(true);
      } else {
        continue;
      }
      for (const auto& [x, y] : line) eff.take(y);
      ceilings_data += block(line, title);
      ceiling_titles.push_back(title);
    }

  const std::vector<MeasuredPoint> points = measured_points(m, in.samples);
  std::string points_data = "# measured points: flop_per_byte gflop_per_joule watts\n";
  for (const MeasuredPoint& p : points) {
    if (p.intensity < x_lo || p.intensity > x_hi) continue;
    points_data += num(p.intensity) + " " + num(p.gflop_per_j) + " " + num(p.watts) + "\n";
    eff.take(p.gflop_per_j);
    watts.take(p.watts);
  }

  // Horizontal lines of the power panel.
  struct Level {
    std::string title;
    double watts;
    std::string style;
  };
  std::vector<Level> power_lines;
  if (m.energy && finite_positive(m.energy->idle_power_w))
    power_lines.push_back({"idle power: " + compact_number(m.energy->idle_power_w) + " W", m.energy->idle_power_w,
                           "lw 1.5 dt 3 lc rgb '#555555'"});
  if (fitted && finite_positive(m.energy_model->constant_power_w))
    power_lines.push_back({"constant power (model): " + compact_number(m.energy_model->constant_power_w) + " W",
                           m.energy_model->constant_power_w, "lw 1.5 dt 2 lc rgb '#8C510A'"});
  // Without the model the power panel shows what each ceiling drew.
  if (!fitted && per_ceiling)
    for (std::size_t i = 0; i < m.energy->ceilings.size(); ++i) {
      const EnergyFigure& f = m.energy->ceilings[i];
      if (finite_positive(f.power_w))
        power_lines.push_back({f.name + ", measured: " + compact_number(f.power_w) + " W", f.power_w,
                               "lw 1.5 dt 4 lc rgb '" + series_colour(curves.size() + i) + "'"});
    }
  const double cap = extra_number(m.device, kExtraPowerLimitW);
  if (finite_positive(cap))
    power_lines.push_back({"power limit: " + compact_number(cap) + " W", cap, "lw 2.5 lc rgb '#B2182B'"});
  for (const Level& l : power_lines) watts.take(l.watts);
  if (!(eff.hi > 0) || !(watts.hi > 0)) {
    *why = "the energy figures hold no positive efficiency or power to draw";
    return false;
  }
  const double eff_lo = std::pow(10, std::floor(std::log10(eff.lo / 1.5)));
  const double eff_hi = std::pow(10, std::ceil(std::log10(eff.hi * 1.5)));
  // Power spans about a decade (idle to the limit): rounded out to whole decades it would fill a
  // third of its panel, so its range is the data's with a margin, labelled at 1, 2 and 5.
  const double w_lo = watts.lo / 1.3;
  const double w_hi = watts.hi * 1.3;

  std::string model_data = "# model: flop_per_byte gflop_per_joule watts, one block per FLOP type\n";
  for (const Curve& c : curves) {
    model_data += "# " + one_line(c.title) + "\n";
    for (std::size_t i = 0; i < c.efficiency.size(); ++i)
      model_data +=
          num(c.efficiency[i].first) + " " + num(c.efficiency[i].second) + " " + num(c.power[i].second) + "\n";
    model_data += "\n\n";
  }

  Frame frame;
  frame.bottom = 0.08;
  std::string s = script_preamble("power", in.format, frame, view_title("Energy roofline", m));
  s += "set multiplot\n";
  s += "set logscale x 2\nset logscale y 10\n";
  s += range_command("x", x_lo, x_hi);
  s += log2_tics("x", x_lo, x_hi, intensity_text);
  // Top panel: efficiency.
  s += "set tmargin at screen 0.90\nset bmargin at screen 0.52\n";
  s += "set format x ''\nunset xlabel\n";
  s += range_command("y", eff_lo, eff_hi);
  s += log10_tics("y", eff_lo, eff_hi);
  s += "set ylabel 'energy efficiency [GFLOP/s per W]'\n";
  s += "set key bottom right Left reverse opaque box lc rgb '#cccccc' samplen 3 spacing 1.1\n";
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < curves.size(); ++i)
    parts.push_back("'power_model.dat' index " + std::to_string(i) + " using 1:2 with lines lw 2.5 lc rgb '" +
                    series_colour(i) + "' title " + gnuplot_string(curves[i].title));
  for (std::size_t i = 0; i < ceiling_titles.size(); ++i)
    parts.push_back("'power_ceilings.dat' index " + std::to_string(i) + " with lines lw 1.5 dt " +
                    (ceiling_is_roof[i] ? "4" : "2") + " lc rgb '" + series_colour(curves.size() + i) + "' title " +
                    gnuplot_string(ceiling_titles[i]));
  if (!points.empty())
    parts.push_back("'power_points.dat' using 1:2 with points pt 7 ps 0.8 lc rgb '" + translucent("#000000", 0.6) +
                    "' title 'measured points (sweep)'");
  s += "plot ";
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", \\\n     " : "") + parts[i];
  s += "\n";
  // Bottom panel: power.
  s += "set tmargin at screen 0.47\nset bmargin at screen " + num(frame.bottom + 0.02) + "\n";
  s += "set format x '%g'\n" + log2_tics("x", x_lo, x_hi, intensity_text);
  s += "set xlabel 'arithmetic intensity [FLOP/byte]'\n";
  s += range_command("y", w_lo, w_hi);
  s += log10_tics("y", w_lo, w_hi);
  s += "set ylabel 'power [W]'\n";
  s += "set key bottom right Left reverse opaque box lc rgb '#cccccc' samplen 3 spacing 1.1\n";
  parts.clear();
  for (std::size_t i = 0; i < curves.size(); ++i)
    parts.push_back("'power_model.dat' index " + std::to_string(i) + " using 1:3 with lines lw 2.5 lc rgb '" +
                    series_colour(i) + "' notitle");
  for (const Level& l : power_lines)
    parts.push_back(num(l.watts) + " with lines " + l.style + " title " + gnuplot_string(l.title));
  if (!points.empty())
    parts.push_back("'power_points.dat' using 1:3 with points pt 7 ps 0.8 lc rgb '" + translucent("#000000", 0.6) +
                    "' notitle");
  if (parts.empty()) parts.push_back("NaN notitle");
  s += "plot ";
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? ", \\\n     " : "") + parts[i];
  s += "\nunset multiplot\nunset output\n";

  out->view = "power";
  out->script = s;
  out->data_files = {
      {"power_model.dat", model_data}, {"power_ceilings.dat", ceilings_data}, {"power_points.dat", points_data}};
  return true;
}

}  // namespace plot_detail
}  // namespace roofprobe
