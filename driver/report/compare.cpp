// `roofprobe compare`: the side-by-side table and its text, markdown and CSV forms.
#include "driver/report/compare.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>

#include "driver/model/errors.hpp"
#include "driver/model/units.hpp"
#include "driver/report/export.hpp"

namespace roofprobe {

const std::vector<std::string>& compare_formats() {
  static const std::vector<std::string> formats = {"text", "markdown", "csv"};
  return formats;
}

namespace {

constexpr const char* kDeviceMemory = "device memory";

// Rows keyed by name within a section, in the order names first appear over the files.
class RowSet {
 public:
  RowSet(std::string section, std::string unit, std::size_t files)
      : section_(std::move(section)), unit_(std::move(unit)), files_(files) {}

  void set(const std::string& name, std::size_t file, double value, const std::string& source) {
    if (!finite_positive(value)) return;
    CompareRow& row = find(name);
    if (row.cells[file].present) return;  // the first entry of a name wins
    row.cells[file] = {true, value, source};
  }
  // Reserves a row's place without a value (keeps a level's "(spec)" row next to it).
  CompareRow& find(const std::string& name) {
    for (CompareRow& r : rows_)
      if (r.name == name) return r;
    rows_.push_back({section_, name, unit_, std::vector<CompareCell>(files_)});
    return rows_.back();
  }
  void append_to(std::vector<CompareRow>& out) const {
    for (const CompareRow& r : rows_)
      if (std::any_of(r.cells.begin(), r.cells.end(), [](const CompareCell& c) { return c.present; })) out.push_back(r);
  }

 private:
  std::string section_, unit_;
  std::size_t files_;
  std::vector<CompareRow> rows_;
};

std::string wall_name(const Wall& w, bool shared) {
  if (shared) return "shared " + w.pattern;
  return "global " + w.pattern + " (" + std::to_string(w.word_bytes) + " B)";
}

std::vector<std::string> unique_labels(const std::vector<std::string>& files, const std::vector<Machine>& machines) {
  std::vector<std::string> labels;
  for (std::size_t i = 0; i < machines.size(); ++i)
    labels.push_back(machines[i].device.name.empty() ? files[i] : machines[i].device.name);
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const bool repeated = std::count(labels.begin(), labels.end(), labels[i]) > 1;
    if (repeated)
      for (std::size_t j = 0; j < labels.size(); ++j)
        if (j != i && labels[j] == labels[i]) labels[j] += " (" + files[j] + ")";
    if (repeated) labels[i] += " (" + files[i] + ")";
  }
  return labels;
}

}  // namespace

CompareTable build_compare_table(const std::vector<std::string>& files, const std::vector<Machine>& machines) {
  CompareTable table;
  table.files = files;
  table.labels = unique_labels(files, machines);
  const std::size_t n = machines.size();

  RowSet device("device", "", n);
  RowSet memory("memory bandwidth", "GB/s", n);
  RowSet compute("compute", "GFLOP/s", n);
  RowSet tensor("tensor instructions", "GIPS", n);
  RowSet instructions("instructions", "GIPS", n);
  RowSet walls("walls", "warp instr/txn", n);
  // What each ceiling costs where a file has energy figures (its `energy:` section):
  // GFLOP/s per watt is GFLOP per joule, 1000 / pJ per FLOP.
  RowSet efficiency("energy efficiency", "GFLOP/s/W", n);
  RowSet per_byte("energy per byte", "pJ/B", n);
  RowSet power("power", "W", n);
  RowSet model("energy model", "", n);
  std::vector<std::string> memory_names;  // the last level's names over the files, in order

  for (std::size_t i = 0; i < n; ++i) {
    const Machine& m = machines[i];
    const DeviceInfo& d = m.device;
    // Device rows carry their unit in the name (one section, several units).
    device.set("compute units (" + (d.compute_unit_name.empty() ? std::string("count") : d.compute_unit_name) + ")", i,
               d.compute_units, "");
    device.set("max clock [MHz]", i, d.clock_max_mhz, "");
    device.set("measured clock [MHz]", i, d.clock_measured_mhz, "");
    device.set("memory size [GiB]", i, double(d.memory_bytes) / (1024.0 * 1024 * 1024), "");

    // The device's own memory is one row whatever each file calls it (DRAM, HBM, GDDR).
    auto row_of = [&](const std::string& level) {
      if (level != d.memory_name) return level;
      if (std::find(memory_names.begin(), memory_names.end(), level) == memory_names.end())
        memory_names.push_back(level);
      return std::string(kDeviceMemory);
    };
    for (const MemoryLevel& l : m.memory) {  // every level, in file order, with its spec row after it
      memory.find(row_of(l.level));
      if (l.source == "spec") memory.find(row_of(l.level) + " (spec)");
    }
    for (const MemoryLevel* l : best_memory_levels(m)) memory.set(row_of(l->level), i, l->gbs, l->source);
    for (const MemoryLevel& l : m.memory)
      if (l.source == "spec") memory.set(row_of(l.level) + " (spec)", i, l.gbs, "spec");

    const std::vector<std::pair<std::string, double>> peaks = theoretical_peaks(m);
    auto peak_of = [&](const std::string& name) {
      for (const auto& [n2, v] : peaks)
        if (n2 == name) return v;
      return 0.0;
    };
    // A measured ceiling's peak is at the clock it ran at (its own theoretical_gflops), as its
    // fraction of peak in the machine file is; the device's start-up clock would overstate it
    // for a ceiling that ran throttled.
    std::set<std::string> own_peak;
    for (const ComputeCeiling* c : best_compute_ceilings(m)) {
      compute.set(c->name, i, c->gflops, c->source);
      const bool own = finite_positive(c->theoretical_gflops);
      compute.set(c->name + " (theoretical)", i, own ? c->theoretical_gflops : peak_of(c->name), "theoretical");
      if (own) own_peak.insert(c->name);
      if (c->instructions_gips > 0) tensor.set(c->name, i, c->instructions_gips, c->source);
    }
    for (const auto& [name, v] : peaks)
      if (!own_peak.count(name)) compute.set(name + " (theoretical)", i, v, "theoretical");

    if (m.warp_gips) {
      instructions.set("warp GIPS", i, m.warp_gips->measured_gips, m.warp_gips->source);
      instructions.set("warp GIPS (theoretical)", i, m.warp_gips->theoretical_gips, "theoretical");
    }
    if (m.energy)
      for (const EnergyFigure& f : m.energy->ceilings) {
        if (f.pj_per_flop > 0) efficiency.set(f.name, i, 1e3 / f.pj_per_flop, "empirical");
        if (f.pj_per_byte > 0) per_byte.set(row_of(f.name), i, f.pj_per_byte, "empirical");
        power.set(f.pj_per_byte > 0 ? row_of(f.name) : f.name, i, f.power_w, "empirical");
      }
    if (m.energy && m.energy->idle_power_w > 0) power.set("idle", i, m.energy->idle_power_w, "empirical");
    if (m.energy_model) {
      // Model rows carry their unit in the name (pJ/FLOP, pJ/B and W in one section).
      const EnergyModelSection& e = *m.energy_model;
      model.set("constant power [W]", i, e.constant_power_w, "empirical");
      for (const EnergyCoefficient& c : e.pj_per_flop) model.set(c.name + " [pJ/FLOP]", i, c.value, "empirical");
      for (const EnergyCoefficient& c : e.pj_per_byte) model.set(row_of(c.name) + " [pJ/B]", i, c.value, "empirical");
    }
    for (const Wall& w : m.global_walls)
      walls.set(wall_name(w, false), i, w.measured_intensity > 0 ? w.measured_intensity : w.instruction_intensity,
                w.measured_intensity > 0 ? "empirical" : "theoretical");
    for (const Wall& w : m.shared_walls)
      walls.set(wall_name(w, true), i, w.measured_intensity > 0 ? w.measured_intensity : w.instruction_intensity,
                w.measured_intensity > 0 ? "empirical" : "theoretical");
  }
  for (const RowSet* set :
       {&device, &memory, &compute, &tensor, &instructions, &walls, &efficiency, &per_byte, &power, &model})
    set->append_to(table.rows);
  // "device memory" says what the files call it: "device memory (HBM/GDDR)".
  std::string names;
  for (const std::string& n2 : memory_names) names += (names.empty() ? "" : "/") + n2;
  for (CompareRow& r : table.rows)
    if (r.section != "device" && r.name.rfind(kDeviceMemory, 0) == 0 && !names.empty())
      r.name.insert(std::string(kDeviceMemory).size(), " (" + names + ")");
  return table;
}

std::optional<double> compare_ratio(const CompareRow& row, std::size_t i) {
  if (i >= row.cells.size() || !row.cells[0].present || !row.cells[i].present) return std::nullopt;
  if (!finite_positive(row.cells[0].value)) return std::nullopt;
  // Valid extremes (1e200 against 1e-200) overflow or underflow: no ratio, rather than "inf" or 0.
  const double ratio = row.cells[i].value / row.cells[0].value;
  if (row.cells[i].value > 0 && !finite_positive(ratio)) return std::nullopt;
  return ratio;
}

std::vector<Machine> read_compare_inputs(const std::vector<std::string>& files) {
  if (files.size() < 2)
    throw InputError("compare: give at least two machine files (the first is the baseline of the ratios)");
  std::vector<Machine> machines;
  for (const std::string& f : files) machines.push_back(read_valid_machine_file(f));
  return machines;
}

// ---- printing ------------------------------------------------------------------------------
namespace {

// Readable value: integers above 100, then 1, 2 and 3 decimals; small values 3 significant digits.
std::string short_number(double v) {
  char buf[32];
  const double a = std::fabs(v);
  if (a >= 1e15)
    std::snprintf(buf, sizeof buf, "%.4g", v);  // past any real figure: an exponent, never cut off
  else if (v == std::floor(v))
    std::snprintf(buf, sizeof buf, "%.0f", v);  // counts, sizes, round figures
  else if (a >= 100)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else if (a >= 10)
    std::snprintf(buf, sizeof buf, "%.1f", v);
  else if (a >= 1)
    std::snprintf(buf, sizeof buf, "%.2f", v);
  else
    std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// Full precision for CSV: the shortest text that reads back to the same double.
std::string exact_number(double v) {
  char buf[64];
  const double a = std::fabs(v);
  const auto r = a >= 1e-6 && a < 1e15 ? std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed)
                                       : std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string source_mark(const std::string& source) {
  if (source == "published") return " [p]";
  if (source == "spec") return " [s]";
  return "";
}

std::string cell_text(const CompareRow& row, std::size_t i) {
  const CompareCell& c = row.cells[i];
  if (!c.present) return "-";
  // "(spec)" and "(theoretical)" rows say what they are; marks are for the mixed rows.
  const bool labelled_row =
      row.name.size() > 1 && row.name.back() == ')' &&
      (row.name.find("(spec)") != std::string::npos || row.name.find("(theoretical)") != std::string::npos);
  return short_number(c.value) + (labelled_row ? "" : source_mark(c.source));
}

std::string ratio_text(const CompareRow& row, std::size_t i) {
  const std::optional<double> r = compare_ratio(row, i);
  if (!r) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, *r >= 1e6 || *r < 1e-3 ? "%.3gx" : "%.2fx", *r);
  return buf;
}

std::string letter(std::size_t i) {
  std::string s;
  for (std::size_t k = i + 1; k > 0; k = (k - 1) / 26) s.insert(s.begin(), char('A' + (k - 1) % 26));
  return s;
}

std::string row_title(const CompareRow& row) { return row.unit.empty() ? row.name : row.name + " [" + row.unit + "]"; }

// Display width of UTF-8 text (code points; good enough for names).
std::size_t width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string pad(const std::string& s, std::size_t w, bool right) {
  const std::size_t have = width(s);
  const std::string fill(have < w ? w - have : 0, ' ');
  return right ? fill + s : s + fill;
}

bool any_mark(const CompareTable& t, const char* source) {
  for (const CompareRow& r : t.rows)
    for (std::size_t i = 0; i < r.cells.size(); ++i)
      if (r.cells[i].present && r.cells[i].source == source && cell_text(r, i).find('[') != std::string::npos)
        return true;
  return false;
}

std::string legend(const CompareTable& t) {
  std::string s;
  if (any_mark(t, "published")) s += "[p] published measurement";
  if (any_mark(t, "spec")) s += std::string(s.empty() ? "" : ", ") + "[s] spec-sheet value (nothing measured)";
  if (!s.empty()) s += "; ";
  return s + "ratios are to " + letter(0) + "; - = missing";
}

std::string format_text(const CompareTable& t) {
  const std::size_t n = t.labels.size();
  std::vector<std::vector<std::string>> cells;  // one per printed line, columns
  std::vector<bool> is_section;
  std::vector<std::string> header = {"ceiling"};
  for (std::size_t i = 0; i < n; ++i) {
    header.push_back(letter(i));
    if (i > 0) header.push_back(letter(i) + "/" + letter(0));
  }
  cells.push_back(header);
  is_section.push_back(false);
  std::string section;
  for (const CompareRow& r : t.rows) {
    if (r.section != section) {
      section = r.section;
      cells.push_back({section});
      is_section.push_back(true);
    }
    std::vector<std::string> line = {"  " + row_title(r)};
    for (std::size_t i = 0; i < n; ++i) {
      line.push_back(cell_text(r, i));
      if (i > 0) line.push_back(ratio_text(r, i));
    }
    cells.push_back(line);
    is_section.push_back(false);
  }
  std::vector<std::size_t> widths(header.size(), 0);
  for (std::size_t k = 0; k < cells.size(); ++k)
    if (!is_section[k])
      for (std::size_t c = 0; c < cells[k].size(); ++c) widths[c] = std::max(widths[c], width(cells[k][c]));

  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += letter(i) + ": " + t.labels[i] + "  (" + t.files[i] + ")\n";
  out += "\n";
  for (std::size_t k = 0; k < cells.size(); ++k) {
    if (is_section[k]) {
      out += cells[k][0] + "\n";
      continue;
    }
    std::string line;
    for (std::size_t c = 0; c < cells[k].size(); ++c)
      line += (c == 0 ? pad(cells[k][c], widths[c], false) : "  " + pad(cells[k][c], widths[c], true));
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out + "\n" + legend(t) + "\n";
}

std::string markdown_cell(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n' || c == '\r')
      out += ' ';
    else
      out += c;
  }
  return out;
}

std::string format_markdown(const CompareTable& t) {
  const std::size_t n = t.labels.size();
  std::string out = "| ceiling |";
  std::string rule = "| --- |";
  for (std::size_t i = 0; i < n; ++i) {
    out += " " + letter(i) + ": " + markdown_cell(t.labels[i]) + " |";
    rule += " ---: |";
    if (i > 0) {
      out += " " + letter(i) + "/" + letter(0) + " |";
      rule += " ---: |";
    }
  }
  out += "\n" + rule + "\n";
  std::string section;
  const std::size_t columns = 1 + n + (n - 1);
  for (const CompareRow& r : t.rows) {
    if (r.section != section) {
      section = r.section;
      out += "| **" + markdown_cell(section) + "** |";
      for (std::size_t c = 1; c < columns; ++c) out += " |";
      out += "\n";
    }
    out += "| " + markdown_cell(row_title(r)) + " |";
    for (std::size_t i = 0; i < n; ++i) {
      out += " " + markdown_cell(cell_text(r, i)) + " |";
      if (i > 0) out += " " + ratio_text(r, i) + " |";
    }
    out += "\n";
  }
  out += "\n" + markdown_cell(legend(t)) + "; files:";
  for (std::size_t i = 0; i < n; ++i) out += " " + letter(i) + " = `" + t.files[i] + "`" + (i + 1 < n ? "," : "");
  return out + "\n";
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string format_csv(const CompareTable& t) {
  const std::size_t n = t.labels.size();
  std::string out = "section,ceiling,unit";
  for (std::size_t i = 0; i < n; ++i) {
    out += "," + csv_field(t.labels[i]) + "," + csv_field(t.labels[i] + " source");
    if (i > 0) out += "," + csv_field(t.labels[i] + " / " + t.labels[0]);
  }
  out += "\n";
  for (const CompareRow& r : t.rows) {
    out += csv_field(r.section) + "," + csv_field(r.name) + "," + csv_field(r.unit);
    for (std::size_t i = 0; i < n; ++i) {
      const CompareCell& c = r.cells[i];
      out += "," + (c.present ? exact_number(c.value) : "") + "," +
             csv_field(c.present ? (c.source.empty() ? "device" : c.source) : "missing");
      if (i > 0) {
        const std::optional<double> ratio = compare_ratio(r, i);
        out += "," + (ratio ? exact_number(*ratio) : "");
      }
    }
    out += "\n";
  }
  return out;
}

}  // namespace

void check_compare_format(const std::string& format) {
  const auto& formats = compare_formats();
  if (std::find(formats.begin(), formats.end(), format) == formats.end())
    throw InputError("unknown compare format '" + format + "' (use text, markdown or csv)");
}

std::string format_compare_table(const CompareTable& table, const std::string& format) {
  check_compare_format(format);
  if (format == "text") return format_text(table);
  if (format == "markdown") return format_markdown(table);
  return format_csv(table);
}

}  // namespace roofprobe
