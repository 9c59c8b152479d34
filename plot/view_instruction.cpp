// The "instruction" and "shared" views: the instruction roofline (x = warp instructions per
// transaction, y = warp GIPS). `instruction`: one roof per memory level in GTXN/s (32-byte
// sectors), the measured and the theoretical peak warp GIPS, and the global-memory walls that
// the access pattern fixes (stride-0 = 1, unit stride = 1/4 or 1/8, stride-8 = 1/32). `shared`:
// the shared-memory roof in 128-byte wavefronts and the bank-conflict walls (no conflict = 1,
// 32-way = 1/32, the measured 2..16-way between). Measured wall positions are marked.
#include <algorithm>
#include <cctype>
#include <cmath>

#include "plot/plot.hpp"

namespace roofprobe {
namespace plot_detail {

namespace {

bool is_shared(const std::string& level) { return lower(level) == "shared"; }
bool is_not_shared(const std::string& level) { return !is_shared(level); }

bool same_intensity(double a, double b) { return a > 0 && b > 0 && std::fabs(std::log2(a / b)) < 0.01; }

// The warp-GIPS ceilings, or why there are none.
bool warp_gips_ceilings(const Machine& m, std::vector<ChartCeiling>* out, std::string* why) {
  if (!m.warp_gips) {
    *why = "no instructions.warp_gips (GPU probe 'issue' not run)";
    return false;
  }
  const InstructionCeiling& w = *m.warp_gips;
  if (finite_positive(w.measured_gips))
    out->push_back({sourced_name("measured peak", w.source == "spec" ? std::string() : w.source) + ": " +
                        format_gips(w.measured_gips),
                    w.measured_gips, "#000000", "lw 2.5", "", true});
  if (finite_positive(w.theoretical_gips))
    out->push_back({"theoretical peak: " + format_gips(w.theoretical_gips), w.theoretical_gips, "#555555",
                    "lw 1.5 dt 2", "", !finite_positive(w.measured_gips)});
  if (out->empty()) {
    *why = "instructions.warp_gips has neither a measured nor a theoretical rate";
    return false;
  }
  return true;
}

// A theoretical wall with the measured position of the machine file's wall at that intensity.
ChartWall wall_at(const std::string& label, double x, const std::vector<Wall>& measured) {
  ChartWall w{label, x, 0, 0};
  for (const Wall& m : measured)
    if (same_intensity(m.instruction_intensity, x) && finite_positive(m.measured_intensity)) {
      w.measured_x = m.measured_intensity;
      w.measured_y = finite_positive(m.gtxn_s) ? m.gtxn_s * m.measured_intensity : 0;
      break;
    }
  return w;
}

bool known(const std::vector<ChartWall>& walls, double x) {
  return std::any_of(walls.begin(), walls.end(), [&](const ChartWall& w) { return same_intensity(w.x, x); });
}

RooflineChart instruction_chart(const ViewInput& in, const std::string& view) {
  RooflineChart chart;
  chart.view = view;
  chart.y_label = "performance [warp GIPS: 1e9 warp instructions/s]";
  chart.roof_file = view + "_memory.dat";
  chart.file_headers = {{view + "_memory.dat",
                         "transaction roofs: instructions_per_transaction warp_gips "
                         "(GIPS = GTXN/s x instructions/transaction)"},
                        {view + "_peak.dat", "warp instruction ceilings: instructions_per_transaction warp_gips"}};
  chart.x_unit = "instructions/transaction";
  chart.y_text = format_gips;
  chart.x_lo_at_most = 1.0 / 64;
  chart.x_hi_at_least = 8;
  return chart;
}

}  // namespace

bool build_instruction_view(const ViewInput& in, PlotScript* out, std::string* why) {
  RooflineChart chart = instruction_chart(in, "instruction");
  chart.title = view_title("Instruction roofline", in.machine);
  chart.x_label = "instruction intensity [warp instructions per transaction (32-byte sector)]";
  if (!warp_gips_ceilings(in.machine, &chart.ceilings, why)) return false;
  for (ChartCeiling& c : chart.ceilings) c.data_file = "instruction_peak.dat";
  for (const MemoryLevel& level : in.machine.memory) {
    if (is_shared(level.level) || !finite_positive(level.gtxn_s)) continue;
    const std::string name = level.level.empty() ? "level" : level.level;
    chart.roofs.push_back({sourced_name(name, level.source) + ": " + format_gtxn(level.gtxn_s), level.gtxn_s,
                           series_colour(chart.roofs.size()), name});
  }
  if (chart.roofs.empty()) {
    *why = "no memory level with gtxn_s (transactions/s; GPU probe 'bandwidth' not run)";
    return false;
  }

  // The walls are fixed by the definitions; the machine file adds where they were measured.
  const std::vector<Wall>& measured = in.machine.global_walls;
  chart.walls = {wall_at("stride-8 (4 B): 1/32", 1.0 / 32, measured),
                 wall_at("unit stride (8 B): 1/8", 1.0 / 8, measured),
                 wall_at("unit stride (4 B): 1/4", 1.0 / 4, measured), wall_at("stride-0: 1", 1.0, measured)};
  for (const Wall& w : measured) {
    if (!finite_positive(w.instruction_intensity) || known(chart.walls, w.instruction_intensity)) continue;
    const std::string label = (w.pattern.empty() ? std::string("wall") : w.pattern) + " (" +
                              std::to_string(w.word_bytes) + " B): " + intensity_text(w.instruction_intensity);
    chart.walls.push_back(wall_at(label, w.instruction_intensity, measured));
  }
  std::sort(chart.walls.begin(), chart.walls.end(), [](const ChartWall& a, const ChartWall& b) { return a.x < b.x; });
  chart.points = chart_points(in.options.points, "instruction", in.machine, is_not_shared);

  *out = render_roofline_chart(chart, in.format);
  return true;
}

bool build_shared_view(const ViewInput& in, PlotScript* out, std::string* why) {
  RooflineChart chart = instruction_chart(in, "shared");
  chart.title = view_title("Shared-memory instruction roofline", in.machine);
  chart.x_label = "instruction intensity [warp instructions per shared transaction (128-byte wavefront)]";
  if (!warp_gips_ceilings(in.machine, &chart.ceilings, why)) return false;
  for (ChartCeiling& c : chart.ceilings) c.data_file = "shared_peak.dat";
  for (const MemoryLevel& level : in.machine.memory)
    if (is_shared(level.level) && finite_positive(level.gtxn_s)) {
      chart.roofs.push_back({sourced_name(level.level, level.source) + ": " + format_gtxn(level.gtxn_s), level.gtxn_s,
                             series_colour(1), level.level});
      break;
    }
  if (chart.roofs.empty()) {
    *why = "no memory level 'shared' with gtxn_s (GPU probe 'shared' not run)";
    return false;
  }

  const std::vector<Wall>& measured = in.machine.shared_walls;
  chart.walls = {wall_at("32-way conflict: 1/32", 1.0 / 32, measured), wall_at("no conflict: 1", 1.0, measured)};
  for (const Wall& w : measured) {
    if (!finite_positive(w.instruction_intensity) || known(chart.walls, w.instruction_intensity)) continue;
    const std::string label =
        w.conflict_degree > 1
            ? std::to_string(w.conflict_degree) + "-way: " + intensity_text(w.instruction_intensity)
            : (w.pattern.empty() ? std::string("wall") : w.pattern) + ": " + intensity_text(w.instruction_intensity);
    chart.walls.push_back(wall_at(label, w.instruction_intensity, measured));
  }
  std::sort(chart.walls.begin(), chart.walls.end(), [](const ChartWall& a, const ChartWall& b) { return a.x < b.x; });
  chart.points = chart_points(in.options.points, "instruction", in.machine, is_shared);

  *out = render_roofline_chart(chart, in.format);
  return true;
}

}  // namespace plot_detail
}  // namespace roofprobe
