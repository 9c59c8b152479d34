#include "driver/report/summary.hpp"

#include <algorithm>

#include <cstdio>

#include "driver/model/units.hpp"

namespace roofprobe {

namespace {
std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
std::string pad(std::string s, std::size_t width) {
  if (s.size() < width) s.append(width - s.size(), ' ');
  return s;
}
const char* axis_type_name(AxisType t) {
  switch (t) {
    case AxisType::Integer:
      return "integer";
    case AxisType::Bytes:
      return "bytes";
    case AxisType::Choice:
      return "choice";
  }
  return "?";
}
// The instruction roofline in a few lines: warp GIPS, predication, walls, clocks, scaling ends.
void print_instruction_summary(std::ostream& out, const Machine& m) {
  bool any = false;
  if (m.warp_gips) {
    const auto& w = *m.warp_gips;
    out << "  warp GIPS   " << fmt("%.1f", w.measured_gips);
    if (w.theoretical_gips > 0)
      out << " of " << fmt("%.1f", w.theoretical_gips) << " ("
          << fmt("%.1f%%", 100 * w.measured_gips / w.theoretical_gips) << ")";
    out << "\n";
    any = true;
  }
  if (!m.predication.empty()) {
    out << "  predication";
    for (const auto& p : m.predication)
      out << "  " << p.active_lanes << " lanes: " << fmt("%.1f", p.warp_gips) << " warp / "
          << fmt("%.1f", p.thread_gips) << " thread GIPS";
    out << "\n";
    any = true;
  }
  for (const auto* walls : {&m.global_walls, &m.shared_walls}) {
    if (walls->empty()) continue;
    out << (walls == &m.global_walls ? "  global walls" : "  shared walls");
    for (const auto& w : *walls)
      out << "  " << w.pattern << (walls == &m.global_walls ? "/" + std::to_string(w.word_bytes) + "B" : "") << " "
          << fmt("%.3g", w.instruction_intensity) << " @ " << fmt("%.1f", w.gtxn_s) << " GTXN/s";
    out << "\n";
    any = true;
  }
  for (const auto& c : m.clocks) {
    out << "  clock " << pad(c.load, 10) << fmt("%.0f", c.median_mhz) << " MHz (" << fmt("%.0f", c.min_mhz) << " - "
        << fmt("%.0f", c.max_mhz) << ", " << c.samples << " samples)\n";
    any = true;
  }
  if (m.scaling.size() >= 2) {
    const auto& lo = m.scaling.front();
    const auto& hi = m.scaling.back();
    for (const auto& [name, v] : hi.ceilings) {
      auto at_lo = lo.ceilings.find(name);
      if (at_lo == lo.ceilings.end() || at_lo->second <= 0) continue;
      out << "  scaling " << pad(name, 12) << lo.units << " -> " << hi.units << " units: x"
          << fmt("%.1f", v / at_lo->second) << "\n";
      any = true;
    }
  }
  if (any) out << "\n";
}

// One line per ceiling or level whose sustained phase ran: "sustained X (Y% of burst), limited
// by ..." for a settled one; an unsettled one is never given as the sustained figure.
void print_sustained_line(std::ostream& out, const std::string& name, double burst, const SustainedFigure& f,
                          const char* unit, const char* energy_unit) {
  out << "  " << pad(name, 18);
  if (!f.settled) {
    out << "not settled in " << fmt("%.1f", f.seconds) << " s (last windows " << fmt("%.1f", f.rate) << " " << unit
        << "): no sustained figure\n";
    return;
  }
  out << "sustained " << fmt("%.1f", f.rate) << " " << unit;
  if (burst > 0) out << " (" << fmt("%.0f", 100 * f.rate / burst) << "% of burst)";
  if (f.clock_mhz > 0) out << ", " << fmt("%.0f", f.clock_mhz) << " MHz";
  if (f.power_w > 0) out << ", " << fmt("%.1f", f.power_w) << " W";
  if (f.pj_per_unit > 0) out << ", " << fmt("%.2f", f.pj_per_unit) << " " << energy_unit;
  out << ", limited by " << (f.limited_by.empty() ? "unknown (the device reports no throttle reasons)" : f.limited_by)
      << "\n";
}

void print_sustained_summary(std::ostream& out, const Machine& m) {
  bool any = false;
  for (const ComputeCeiling& c : m.compute) any = any || c.sustained.has_value();
  for (const MemoryLevel& l : m.memory) any = any || l.sustained.has_value();
  if (!any) return;
  for (const ComputeCeiling& c : m.compute)
    if (c.sustained) print_sustained_line(out, c.name, c.gflops, *c.sustained, "GFLOP/s", "pJ/FLOP");
  for (const MemoryLevel& l : m.memory)
    if (l.sustained) print_sustained_line(out, l.level, l.gbs, *l.sustained, "GB/s", "pJ/B");
  out << "\n";
}

}  // namespace

void print_summary(std::ostream& out, const Machine& m, const std::string& where) {
  const DeviceInfo& d = m.device;
  out << "roofprobe: " << d.name;
  if (d.compute_units > 0) out << " (" << d.compute_units << " " << d.compute_unit_name;
  if (d.extra.count("simd")) out << ", " << d.extra.at("simd");
  if (d.clock_measured_mhz > 0) out << ", " << fmt("%.0f", d.clock_measured_mhz) << " MHz measured";
  if (d.compute_units > 0) out << ")";
  out << "\n  written: " << where << (m.complete ? "" : "  [INCOMPLETE]") << "\n\n";
  const std::string per = d.kind == "gpu" ? "B/clk/SM" : "B/clk/core";
  if (!m.memory.empty()) {
    out << "  " << pad("level", 8) << pad("GB/s", 11) << pad("95% CI", 20) << pad("GTXN/s", 10) << pad(per, 12)
        << pad("spread", 8) << "working set\n";
    for (const auto& l : m.memory) {
      const std::string ci = l.gbs_ci95.known() ? fmt("%.1f", l.gbs_ci95.lo) + " - " + fmt("%.1f", l.gbs_ci95.hi) : "-";
      out << "  " << pad(l.level, 8) << pad(fmt("%.1f", l.gbs), 11) << pad(ci, 20) << pad(fmt("%.2f", l.gtxn_s), 10)
          << pad(l.bytes_per_clk_per_unit > 0 ? fmt("%.1f", l.bytes_per_clk_per_unit) : "-", 12)
          << pad(fmt("%.1f%%", 100 * l.stats.spread), 8) << format_bytes(l.working_set_lo) << " - "
          << format_bytes(l.working_set_hi) << (l.headline_series.empty() ? "" : "  " + l.headline_series)
          << (l.noisy ? "  (noisy)" : "") << "\n";
    }
    for (const auto& l : m.memory)
      if (!l.capacity_note.empty()) out << "  " << l.level << ": " << l.capacity_note << "\n";
    out << "\n";
  }
  if (!m.compute.empty()) {
    out << "  " << pad("ceiling", 18) << pad("GFLOP/s", 12) << pad("theoretical", 13) << pad("of theory", 11)
        << "instr GIPS\n";
    for (const auto& c : m.compute) {
      out << "  " << pad(c.name, 18) << pad(fmt("%.1f", c.gflops), 12)
          << pad(c.theoretical_gflops > 0 ? fmt("%.1f", c.theoretical_gflops) : "-", 13)
          << pad(c.theoretical_gflops > 0 ? fmt("%.1f%%", 100 * c.fraction_of_theoretical) : "-", 11)
          << (c.instructions_gips > 0 ? fmt("%.1f", c.instructions_gips) : "") << (c.noisy ? "  (noisy)" : "")
          << (c.throttled.empty() ? ""
              : c.limited_by.empty() || c.limited_by == "clock"
                  ? "  (throttled: " + c.throttled + ")"
                  : "  (limited by " + c.limited_by + "; throttled: " + c.throttled + ")")
          << "\n";
    }
    out << "\n";
  }
  print_sustained_summary(out, m);
  print_instruction_summary(out, m);
  if (m.energy && !m.energy->ceilings.empty()) {
    const EnergySection& e = *m.energy;
    out << "  energy (" << e.counter
        << (e.idle_power_w > 0 ? ", idle " + fmt("%.1f", e.idle_power_w) + " W" : std::string()) << ")\n";
    for (const EnergyFigure& f : e.ceilings)
      out << "  " << pad(f.name, 18) << pad(fmt("%.1f W", f.power_w), 12)
          << (f.pj_per_flop > 0 ? fmt("%.2f pJ/FLOP", f.pj_per_flop) : fmt("%.1f pJ/B", f.pj_per_byte)) << "\n";
    out << "\n";
  }
  if (m.energy_model) {
    const EnergyModelSection& e = *m.energy_model;
    out << "  energy model (" << e.points << " points, " << e.launches << " launches): constant power "
        << fmt("%.1f W", e.constant_power_w) << " [" << fmt("%.1f", e.constant_power_ci95_lo) << ", "
        << fmt("%.1f", e.constant_power_ci95_hi) << "]\n";
    auto coefficient = [&](const EnergyCoefficient& c, const char* unit) {
      out << "  " << pad(c.name, 18) << pad(fmt("%.3g ", c.value) + unit, 14) << "[" << fmt("%.3g", c.ci95_lo) << ", "
          << fmt("%.3g", c.ci95_hi) << "]\n";
    };
    for (const auto& c : e.pj_per_flop) coefficient(c, "pJ/FLOP");
    for (const auto& c : e.pj_per_byte) coefficient(c, "pJ/B");
    out << "  reproduces " << e.within_5pct << " of " << e.launches << " launches within 5% (worst "
        << fmt("%+.1f%%", 100 * e.residual_worst) << ": " << e.worst_launch << ")\n";
    for (const auto& b : e.balance)
      out << "  balance " << b.flops << " / " << b.level << ": time " << fmt("%.3g", b.time_flop_per_byte)
          << ", energy " << fmt("%.3g", b.energy_flop_per_byte) << " ("
          << fmt("%.3g", b.energy_with_constant_power_flop_per_byte) << " with constant power) FLOP/B, gap "
          << fmt("%.3g", b.gap) << "\n";
    for (const auto& c : e.checks)
      out << "  check: " << c.check << ": " << (c.holds ? "yes" : "no") << " (" << c.detail << ")\n";
    out << "\n";
  }
  if (m.power_caps && !m.power_caps->caps.empty()) {
    // Each ceiling under each cap beside its rate under the device's own limit.
    out << "  under power caps (limit restored to " << fmt("%g", m.power_caps->restored_w) << " W)\n";
    out << "  " << pad("cap", 9) << pad("ceiling", 18) << pad("rate", 16) << pad("of own", 9) << pad("clock MHz", 11)
        << "limited by\n";
    for (const PowerCapResult& cap : m.power_caps->caps)
      for (const PowerCapCeiling& c : cap.ceilings) {
        double own = 0;
        for (const ComputeCeiling& cc : m.compute)
          if (c.kind == "compute" && cc.name == c.name) own = cc.gflops;
        for (const MemoryLevel& l : m.memory)
          if (c.kind == "memory" && l.level == c.name) own = l.gbs;
        out << "  " << pad(fmt("%g W", cap.cap_w), 9) << pad(c.name, 18)
            << pad(fmt("%.1f ", c.rate) + (c.kind == "memory" ? "GB/s" : "GFLOP/s"), 16)
            << pad(own > 0 ? fmt("%.1f%%", 100 * c.rate / own) : "-", 9)
            << pad(c.clock_mhz > 0 ? fmt("%.0f", c.clock_mhz) : "-", 11) << (c.limited_by.empty() ? "-" : c.limited_by)
            << "\n";
      }
    out << "\n";
  }
  if (std::any_of(m.memory.begin(), m.memory.end(), [](const MemoryLevel& l) { return l.noisy; }) ||
      std::any_of(m.compute.begin(), m.compute.end(), [](const ComputeCeiling& c) { return c.noisy; }))
    out << "  (noisy): measured on samples flagged noisy only (a busy machine); see the spread\n";
  for (const auto& s : m.missing) out << "  missing: " << s << "\n";
}

void print_probe_list(std::ostream& out, const std::vector<const Probe*>& probes) {
  for (const Probe* p : probes) {
    const ProbeInfo& info = p->info();
    out << info.name << " [" << info.backend << "]\n  " << info.description << "\n";
    for (const Axis& a : info.axes) {
      out << "    " << pad(a.name, 30) << pad(axis_type_name(a.type), 9);
      if (!a.choices.empty()) {
        std::string c;
        for (const auto& v : a.choices) c += (c.empty() ? "" : "|") + v;
        out << c;
      } else if (!a.defaults.empty()) {
        out << "default " << a.defaults.front() << (a.defaults.size() > 1 ? " .. " + a.defaults.back() : "");
      }
      out << "\n";
    }
  }
}

void print_existing_combinations(std::ostream& out, const std::vector<const Probe*>& probes, const DeviceInfo& device) {
  for (const Probe* p : probes) {
    std::vector<Params> combos{Params{}};
    for (const Axis& a : p->info().axes) {
      if (a.type != AxisType::Choice) continue;
      std::vector<Params> next;
      for (const Params& partial : combos)
        for (const std::string& v : a.choices) {
          Params q = partial;
          q[a.name] = v;
          next.push_back(std::move(q));
        }
      combos = std::move(next);
    }
    // Size and count axes take their first default: whether a combination exists does not
    // depend on them.
    for (Params& q : combos)
      for (const Axis& a : p->info().axes)
        if (a.type != AxisType::Choice && !a.defaults.empty()) q[a.name] = a.defaults.front();
    std::vector<std::string> existing;
    for (const Params& q : combos) {
      if (!p->exists_on(q, device)) continue;
      Params choices;
      for (const Axis& a : p->info().axes)
        if (a.type == AxisType::Choice) choices[a.name] = q.at(a.name);
      existing.push_back(params_to_string(choices));
    }
    out << p->info().name << " [" << p->info().backend << "]: " << existing.size() << " of " << combos.size()
        << " combinations exist\n";
    if (existing.size() == combos.size()) continue;
    for (const std::string& e : existing) out << "    " << e << "\n";
  }
}

}  // namespace roofprobe
