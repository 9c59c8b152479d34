#include "driver/summary.hpp"

#include <cstdio>

#include "driver/units.hpp"

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
    case AxisType::Integer: return "integer";
    case AxisType::Bytes: return "bytes";
    case AxisType::Choice: return "choice";
  }
  return "?";
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
    out << "  " << pad("level", 8) << pad("GB/s", 11) << pad("GTXN/s", 10) << pad(per, 12)
        << pad("spread", 8) << "working set\n";
    for (const auto& l : m.memory) {
      out << "  " << pad(l.level, 8) << pad(fmt("%.1f", l.gbs), 11) << pad(fmt("%.2f", l.gtxn_s), 10)
          << pad(l.bytes_per_clk_per_unit > 0 ? fmt("%.1f", l.bytes_per_clk_per_unit) : "-", 12)
          << pad(fmt("%.1f%%", 100 * l.stats.spread), 8) << format_bytes(l.working_set_lo) << " - "
          << format_bytes(l.working_set_hi) << "\n";
    }
    out << "\n";
  }
  if (!m.compute.empty()) {
    out << "  " << pad("ceiling", 14) << pad("GFLOP/s", 11) << pad("theoretical", 13) << "of theory\n";
    for (const auto& c : m.compute) {
      out << "  " << pad(c.name, 14) << pad(fmt("%.1f", c.gflops), 11)
          << pad(c.theoretical_gflops > 0 ? fmt("%.1f", c.theoretical_gflops) : "-", 13)
          << (c.theoretical_gflops > 0 ? fmt("%.1f%%", 100 * c.fraction_of_theoretical) : "-") << "\n";
    }
    out << "\n";
  }
  for (const auto& s : m.missing) out << "  missing: " << s << "\n";
}

void print_probe_list(std::ostream& out, const std::vector<const Probe*>& probes) {
  for (const Probe* p : probes) {
    const ProbeInfo& info = p->info();
    out << info.name << " [" << info.backend << "]\n  " << info.description << "\n";
    for (const Axis& a : info.axes) {
      out << "    " << pad(a.name, 20) << pad(axis_type_name(a.type), 9);
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

}  // namespace roofprobe
