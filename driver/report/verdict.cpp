// `roofprobe compare MEASURED REFERENCE --verdict` (driver/report/verdict.hpp).
#include "driver/report/verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <sstream>

#include "driver/report/compare.hpp"
#include "driver/model/errors.hpp"
#include "driver/model/units.hpp"
#include "driver/report/export.hpp"

namespace roofprobe {

namespace {

// A reference entry of `source` for the memory level named `level`, 0 when the file has none.
double reference_level(const Machine& r, const std::string& level, const std::string& source) {
  for (const MemoryLevel& l : r.memory)
    if (l.level == level && l.source == source && finite_positive(l.gbs)) return l.gbs;
  return 0;
}

double reference_compute(const Machine& r, const std::string& name, const std::string& source) {
  for (const ComputeCeiling& c : r.compute)
    if (c.name == name && c.source == source && finite_positive(c.gflops)) return c.gflops;
  return 0;
}

// Decides row.verdict from the figures already in the row (constants in verdict.hpp).
void judge(VerdictRow& row) {
  const double above = 1 + kVerdictAboveTolerance;
  if (finite_positive(row.peak) && row.measured > row.peak * above) {
    row.verdict = "above peak";
    row.basis = "peak";
  } else if (finite_positive(row.spec) && row.measured > row.spec * above) {
    row.verdict = "above spec";
    row.basis = "spec";
  } else if (finite_positive(row.published)) {
    row.verdict = row.measured >= kVerdictOkOfPublished * row.published ? "ok" : "low";
    row.basis = "published";
  } else if (finite_positive(row.spec)) {
    row.verdict = row.measured >= kVerdictOkOfSpec * row.spec ? "ok" : "low";
    row.basis = "spec";
  } else if (finite_positive(row.peak)) {
    row.verdict = row.measured >= kVerdictOkOfSpec * row.peak ? "ok" : "low";
    row.basis = "peak";
  } else {
    row.verdict = "unchecked";
  }
}

void count(Verdict& v, const VerdictRow& row) {
  if (row.verdict == "ok")
    ++v.ok;
  else if (row.verdict == "low")
    ++v.low;
  else if (row.verdict == "above peak")
    ++v.above_peak;
  else if (row.verdict == "above spec")
    ++v.above_spec;
  else
    ++v.unchecked;
}

void add_memory_rows(Verdict& v, const Machine& m, const Machine& r) {
  for (const MemoryLevel* l : best_memory_levels(m)) {
    if (l->source != "empirical" || !finite_positive(l->gbs)) continue;
    // The device's own memory has the reference's name for it (DRAM, HBM, GDDR).
    const bool device_memory = l->level == m.device.memory_name && !r.device.memory_name.empty();
    const std::string ref = device_memory ? r.device.memory_name : l->level;
    VerdictRow row{"memory bandwidth", l->level, "GB/s", l->gbs};
    row.spec = reference_level(r, ref, "spec");
    row.published = reference_level(r, ref, "published");
    v.rows.push_back(row);
  }
}

void add_compute_rows(Verdict& v, const Machine& m, const Machine& r) {
  const std::vector<std::pair<std::string, double>> ref_peaks = theoretical_peaks(r);
  for (const ComputeCeiling* c : best_compute_ceilings(m)) {
    if (c->source != "empirical" || !finite_positive(c->gflops)) continue;
    VerdictRow row{"compute", c->name, "GFLOP/s", c->gflops};
    row.peak = c->theoretical_gflops;
    row.peak_clock_mhz = c->clock_mhz;
    row.spec = reference_compute(r, c->name, "spec");
    if (!finite_positive(row.spec))  // a reference whose ceiling is published has its spec as the peak
      for (const auto& [name, gflops] : ref_peaks)
        if (name == c->name) row.spec = gflops;
    row.published = reference_compute(r, c->name, "published");
    v.rows.push_back(row);
  }
}

void add_instruction_rows(Verdict& v, const Machine& m, const Machine& r) {
  if (!m.warp_gips || !finite_positive(m.warp_gips->measured_gips)) return;
  VerdictRow row{"instructions", "warp GIPS", "GIPS", m.warp_gips->measured_gips};
  row.peak = m.warp_gips->theoretical_gips;
  row.peak_clock_mhz = m.warp_gips->clock_mhz;
  if (r.warp_gips) {
    row.spec = r.warp_gips->theoretical_gips;
    if (r.warp_gips->source == "published") row.published = r.warp_gips->measured_gips;
  }
  v.rows.push_back(row);
}

std::string num(double v) {
  if (!finite_positive(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, v >= 100 ? "%.0f" : v >= 10 ? "%.1f" : "%.2f", v);
  return buf;
}

std::string percent(double part, double whole) {
  if (!finite_positive(part) || !finite_positive(whole)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", 100 * part / whole);
  return buf;
}

std::string peak_text(const VerdictRow& r) {
  if (!finite_positive(r.peak)) return "-";
  return finite_positive(r.peak_clock_mhz) ? num(r.peak) + " @" + num(r.peak_clock_mhz) : num(r.peak);
}

const char* kColumns[] = {"ceiling", "unit",    "measured",  "peak @MHz",    "of peak",
                          "spec",    "of spec", "published", "of published", "verdict"};

std::vector<std::string> cells(const VerdictRow& r) {
  return {r.name,
          r.unit,
          num(r.measured),
          peak_text(r),
          percent(r.measured, r.peak),
          num(r.spec),
          percent(r.measured, r.spec),
          num(r.published),
          percent(r.measured, r.published),
          r.verdict};
}

std::string legend() {
  std::ostringstream out;
  out << "peak: the physical peak at the clock measured during the run (the measured file's); "
      << "spec, published: the reference's spec-sheet figure and published measurement.\n"
      << "rule: 'above peak' / 'above spec' beyond " << kVerdictAboveTolerance * 100
      << "% (a bug until proven otherwise); else 'ok' at >= " << kVerdictOkOfPublished * 100
      << "% of the published figure, or >= " << kVerdictOkOfSpec * 100
      << "% of the spec (or of the peak) where none is published; 'low' below.\n";
  return out.str();
}

std::string format_text(const Verdict& v) {
  std::vector<std::vector<std::string>> table{{std::begin(kColumns), std::end(kColumns)}};
  for (const VerdictRow& r : v.rows) table.push_back(cells(r));
  std::vector<std::size_t> width(table[0].size(), 0);
  for (const auto& row : table)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::ostringstream out;
  out << "measured: " << v.measured_label << "\nreference: " << v.reference_label << "\n\n";
  for (const auto& row : table) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      const bool last = i + 1 == row.size();
      const std::string pad(last ? 0 : width[i] - row[i].size(), ' ');
      out << (i ? "  " : "") << (i < 2 || last ? row[i] + pad : pad + row[i]);
    }
    out << "\n";
  }
  out << "\n" << legend() << verdict_summary(v) << "\n";
  return out.str();
}

std::string format_markdown(const Verdict& v) {
  std::ostringstream out;
  out << "Measured: " << v.measured_label << "  \nReference: " << v.reference_label << "\n\n|";
  for (const char* c : kColumns) out << " " << c << " |";
  out << "\n|";
  for (std::size_t i = 0; i < std::size(kColumns); ++i) out << (i < 2 || i == 9 ? " --- |" : " ---: |");
  out << "\n";
  for (const VerdictRow& r : v.rows) {
    out << "|";
    for (const std::string& c : cells(r)) out << " " << c << " |";
    out << "\n";
  }
  out << "\n" << legend() << "\n" << verdict_summary(v) << "\n";
  return out.str();
}

std::string csv_number(double v) {
  if (!finite_positive(v)) return "";
  std::ostringstream s;
  s.precision(17);
  s << v;
  return s.str();
}

std::string format_csv(const Verdict& v) {
  std::ostringstream out;
  out << "section,ceiling,unit,measured,peak,peak_clock_mhz,spec,published,verdict,basis\n";
  for (const VerdictRow& r : v.rows)
    out << r.section << ',' << r.name << ',' << r.unit << ',' << csv_number(r.measured) << ',' << csv_number(r.peak)
        << ',' << csv_number(r.peak_clock_mhz) << ',' << csv_number(r.spec) << ',' << csv_number(r.published) << ','
        << r.verdict << ',' << r.basis << '\n';
  return out.str();
}

}  // namespace

Verdict build_verdict(const Machine& measured, const std::string& measured_label, const Machine& reference,
                      const std::string& reference_label) {
  Verdict v;
  v.measured_label = measured_label;
  v.reference_label = reference_label;
  add_memory_rows(v, measured, reference);
  add_compute_rows(v, measured, reference);
  add_instruction_rows(v, measured, reference);
  for (VerdictRow& row : v.rows) {
    judge(row);
    count(v, row);
  }
  return v;
}

std::string verdict_summary(const Verdict& v) {
  std::ostringstream out;
  out << "verdict: " << v.ok << " ok, " << v.low << " low, " << v.above_peak << " above peak, " << v.above_spec
      << " above spec, " << v.unchecked << " unchecked";
  return out.str();
}

std::string format_verdict(const Verdict& verdict, const std::string& format) {
  check_compare_format(format);
  if (format == "text") return format_text(verdict);
  if (format == "markdown") return format_markdown(verdict);
  return format_csv(verdict);
}

}  // namespace roofprobe
