// The export formats: ERT roofline.json here; the NERSC plotting scripts' text (export_nersc.cpp)
// and AMD's roofline.csv (export_rocprof.cpp).
// Each follows what its consumer parses (results/README.md, "Exports"): field names, order,
// units (GB/s and GFLOP/s, 1e9).
#include "driver/report/export.hpp"
#include "driver/report/export_common.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <stdexcept>

#include "driver/model/errors.hpp"

namespace roofprobe {

const std::vector<std::string>& export_formats() {
  static const std::vector<std::string> formats = {"ert-json", "nersc", "rocprof-csv", "json"};
  return formats;
}

// ---- best available value per ceiling -----------------------------------------------------

int source_rank(const std::string& source) {
  if (source == "empirical") return 0;
  if (source == "published") return 1;
  if (source == "spec") return 2;
  return 3;
}

bool is_measured(const std::string& source) { return source_rank(source) <= 1; }

namespace {

// The entry of lowest source rank per key, in the order the keys first appear.
template <typename T, typename Key>
std::vector<const T*> best_by(const std::vector<T>& entries, Key key) {
  std::vector<const T*> out;
  for (const T& e : entries) {
    auto same = std::find_if(out.begin(), out.end(), [&](const T* o) { return key(*o) == key(e); });
    if (same == out.end())
      out.push_back(&e);
    else if (source_rank(e.source) < source_rank((*same)->source))
      *same = &e;
  }
  return out;
}

}  // namespace

std::vector<const MemoryLevel*> best_memory_levels(const Machine& m) {
  std::vector<const MemoryLevel*> out;
  for (const MemoryLevel* l : best_by(m.memory, [](const MemoryLevel& l) { return l.level; }))
    if (finite_positive(l->gbs)) out.push_back(l);
  return out;
}

std::vector<const ComputeCeiling*> best_compute_ceilings(const Machine& m) {
  std::vector<const ComputeCeiling*> out;
  for (const ComputeCeiling* c : best_by(m.compute, [](const ComputeCeiling& c) { return c.name; }))
    if (finite_positive(c->gflops)) out.push_back(c);
  return out;
}

std::vector<std::pair<std::string, double>> theoretical_peaks(const Machine& m) {
  std::map<std::string, double> peaks;
  for (const auto& [name, gflops] : m.device.theoretical_gflops)
    if (finite_positive(gflops)) peaks[name] = gflops;
  for (const ComputeCeiling& c : m.compute)
    if (finite_positive(c.theoretical_gflops)) peaks[c.name] = std::max(peaks[c.name], c.theoretical_gflops);
  return {peaks.begin(), peaks.end()};
}

double spec_bandwidth(const Machine& m, const std::string& level) {
  for (const MemoryLevel& l : m.memory)
    if (l.level == level && l.source == "spec" && finite_positive(l.gbs)) return l.gbs;
  return 0;
}

namespace {

using json::Value;

// [[name, value], ...] sorted by value, highest first (stable: ties keep file order), the entry
// named `first` (when there is one) ahead of them all.
Value name_value_list(std::vector<std::pair<std::string, double>> items, const std::string& first = {}) {
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  auto lead = std::find_if(items.begin(), items.end(), [&](const auto& item) { return item.first == first; });
  if (!first.empty() && lead != items.end()) std::rotate(items.begin(), lead, lead + 1);
  Value data = Value::array();
  for (const auto& [name, value] : items)
    data.push(Value::array().push(Value::string(name)).push(Value::number(value)));
  return data;
}

std::string source_note(const std::string& source, const std::string& citation) {
  return citation.empty() ? source : source + ": " + citation;
}

}  // namespace

// ---- ert-json ------------------------------------------------------------------------------
// ERT's Python driver (ert_core.py, build_database) writes roofline.json as
//   {"empirical": {"metadata": {...}, "gflops": {"data": [[name, GFLOP/s]], "metadata": {...}},
//                  "gbytes": {"data": [[level, GB/s], ...], "metadata": {...}}},
//    "spec": {"gflops": {"data": [...]}, "gbytes": {"data": [...]}}}
// with json.dump(indent=3), numbers as floats. ERT measures one precision (its FP64 kernels, with
// FMA) and records one GFLOP/s; its plot script takes gflops data[0] as the peak and gbytes
// data[0] as the fastest level. So the FMA peak of --precision (FP64 by default) comes first,
// then the other ceilings highest first (a tensor or int8 rate first would be read as the FP64
// peak), and the levels fastest first. Integer rates are not FLOPs: they are listed under "giops"
// (same layout), which ERT's readers do not look at. "empirical" holds only measured values
// (empirical or published); "spec" the theoretical peaks, the spec-sheet bandwidths and the
// device memory's peak from its bus width and clock (device.extra.memory_peak_gbs).
namespace {

bool is_integer_ceiling(const std::string& name) {
  std::string u = upper(name);
  if (u.rfind("TENSOR.", 0) == 0) u = u.substr(7);
  return u.rfind("INT", 0) == 0 || u.rfind("UINT", 0) == 0;
}

// ERT's own names: "FP64 GFLOPs" for a precision's FMA peak ("INT32 GIOPs" for an integer one),
// "DRAM" for the device memory.
struct ErtNames {
  const Machine& m;
  bool ert;  // --names ert; otherwise roofprobe's names are kept
  std::string ceiling(const std::string& name) const {
    if (!ert) return name;
    const std::string unit = is_integer_ceiling(name) ? " GIOPs" : " GFLOPs";
    const std::size_t dot = name.find('.');
    if (dot != std::string::npos && upper(name.substr(dot + 1)) == "FMA") return name.substr(0, dot) + unit;
    return name + unit;
  }
  std::string level(const std::string& name) const {
    const std::string u = upper(name);
    const bool memory = name == m.device.memory_name || u == "HBM" || u == "DRAM" || u.rfind("GDDR", 0) == 0;
    return ert && memory ? std::string("DRAM") : name;
  }
};

// One of ERT's lists: [name, value] pairs, a note (source, basis or citation) per name, and the
// name that goes first.
struct ErtList {
  std::vector<std::pair<std::string, double>> data;
  Value notes = Value::object();
  std::string first;
};

// The measured (`measured`) or theoretical compute figures, floating-point or integer
// (`integer`), the FMA peak of `precision` named as the one to go first.
ErtList ert_compute(const Machine& m, const ErtNames& names, const std::string& precision, bool measured,
                    bool integer) {
  ErtList out;
  const std::string lead = upper(precision) + ".FMA";
  auto add = [&](const std::string& name, double value, const std::string& note) {
    if (is_integer_ceiling(name) != integer) return;
    out.data.emplace_back(names.ceiling(name), value);
    if (!note.empty()) out.notes.set(names.ceiling(name), Value::string(note));
    if (upper(name) == lead) out.first = names.ceiling(name);
  };
  if (measured) {
    for (const ComputeCeiling* c : best_compute_ceilings(m))
      if (is_measured(c->source)) add(c->name, c->gflops, source_note(c->source, c->citation));
  } else {
    for (const auto& [name, gf] : theoretical_peaks(m)) {
      auto basis = m.device.theoretical_basis.find(name);
      add(name, gf, basis == m.device.theoretical_basis.end() ? std::string() : basis->second);
    }
  }
  return out;
}

ErtList measured_gbytes(const Machine& m, const ErtNames& names) {
  ErtList out;
  for (const MemoryLevel* l : best_memory_levels(m))
    if (is_measured(l->source)) {
      out.data.emplace_back(names.level(l->level), l->gbs);
      out.notes.set(names.level(l->level), Value::string(source_note(l->source, l->citation)));
    }
  return out;
}

// The spec-sheet bandwidths, and the device memory's peak from its bus (a GPU run records it in
// device.extra) where no spec-sheet figure names that level.
ErtList spec_gbytes(const Machine& m, const ErtNames& names) {
  ErtList out;
  std::set<std::string> spec_levels;
  for (const MemoryLevel& l : m.memory)
    if (l.source == "spec" && finite_positive(l.gbs) && spec_levels.insert(l.level).second) {
      out.data.emplace_back(names.level(l.level), l.gbs);
      if (!l.citation.empty()) out.notes.set(names.level(l.level), Value::string(l.citation));
    }
  const auto peak = m.device.extra.find("memory_peak_gbs");
  if (peak != m.device.extra.end()) {
    double gbs = 0;
    try {
      gbs = std::stod(peak->second);
    } catch (const std::exception&) {
      gbs = 0;  // not a number: no spec figure, as when the key is absent
    }
    std::string level = m.device.memory_name;
    if (level.empty())
      for (const MemoryLevel* l : best_memory_levels(m)) level = l->level;  // the farthest level
    if (finite_positive(gbs) && !level.empty() && spec_levels.insert(level).second) {
      out.data.emplace_back(names.level(level), gbs);
      const auto basis = m.device.extra.find("memory_peak_basis");
      out.notes.set(names.level(level),
                    Value::string(basis == m.device.extra.end() ? std::string("device.extra.memory_peak_gbs")
                                                                : "bus width x clock: " + basis->second));
    }
  }
  return out;
}

// {"data": [[name, value], ...], "metadata": {<notes_key>: {name: note}}}
Value ert_list(ErtList list, const char* notes_key) {
  return Value::object()
      .set("data", name_value_list(std::move(list.data), list.first))
      .set("metadata", Value::object().set(notes_key, std::move(list.notes)));
}

Value ert_metadata(const Machine& m) {
  Value metadata = Value::object();
  metadata.set("TOOL", Value::string("roofprobe"));
  metadata.set("SCHEMA", Value::string(m.schema));
  metadata.set("DEVICE", Value::string(m.device.name));
  if (!m.device.vendor.empty()) metadata.set("VENDOR", Value::string(m.device.vendor));
  for (const char* key : {"version", "host", "started", "finished", "command"}) {
    auto it = m.provenance.find(key);
    if (it == m.provenance.end()) continue;
    std::string upper = key;
    std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return char(std::toupper(c)); });
    if (upper == "VERSION") upper = "ROOFPROBE_VERSION";
    if (upper == "HOST") upper = "HOSTNAME";
    metadata.set(upper, Value::string(it->second));
  }
  metadata.set("COMPLETE", Value::boolean(m.complete));
  metadata.set(
      "UNITS",
      Value::string("gbytes: GB/s (1e9 bytes/s); gflops: GFLOP/s (1e9 FLOP/s); giops: integer GOP/s (1e9 op/s)"));
  return metadata;
}

}  // namespace

std::string export_ert_json(const Machine& m, const ExportSettings& settings) {
  if (settings.names != "roofprobe" && settings.names != "ert")
    throw InputError("export --names: unknown '" + settings.names + "' (use roofprobe or ert)");
  const ErtNames names{m, settings.names == "ert"};
  ErtList gflops = ert_compute(m, names, settings.precision, true, false);
  ErtList giops = ert_compute(m, names, settings.precision, true, true);
  ErtList gbytes = measured_gbytes(m, names);
  if (settings.notes != nullptr && (gflops.data.empty() || gbytes.data.empty()))
    settings.notes->push_back(
        std::string("warning: ert-json: this file has no measured ") +
        (gflops.data.empty() && gbytes.data.empty() ? "ceiling or level"
         : gflops.data.empty()                      ? "compute ceiling"
                                                    : "memory level") +
        ": its empirical lists are empty (ERT's plot script reads data[0]); the spec values are under \"spec\"");
  if (settings.notes != nullptr && !gflops.data.empty() && gflops.first.empty()) {
    const auto highest = std::max_element(gflops.data.begin(), gflops.data.end(),
                                          [](const auto& a, const auto& b) { return a.second < b.second; });
    settings.notes->push_back("note: ert-json: no measured " + upper(settings.precision) +
                              ".FMA ceiling: gflops data[0], which ERT's readers take as the peak, is " +
                              highest->first);
  }

  Value empirical = Value::object();
  empirical.set("metadata", ert_metadata(m));
  empirical.set("gflops", ert_list(std::move(gflops), "SOURCE"));
  if (!giops.data.empty()) empirical.set("giops", ert_list(std::move(giops), "SOURCE"));
  empirical.set("gbytes", ert_list(std::move(gbytes), "SOURCE"));
  Value spec = Value::object();
  spec.set("gflops", ert_list(ert_compute(m, names, settings.precision, false, false), "BASIS"));
  ErtList spec_giops = ert_compute(m, names, settings.precision, false, true);
  if (!spec_giops.data.empty()) spec.set("giops", ert_list(std::move(spec_giops), "BASIS"));
  spec.set("gbytes", ert_list(spec_gbytes(m, names), "CITATION"));
  Value root = Value::object();
  root.set("empirical", std::move(empirical));
  root.set("spec", std::move(spec));
  return root.dump(3) + "\n";
}

// ---- dispatch ------------------------------------------------------------------------------

void check_export_format(const std::string& format) {
  const auto& formats = export_formats();
  if (std::find(formats.begin(), formats.end(), format) != formats.end()) return;
  std::string list;
  for (std::size_t i = 0; i < formats.size(); ++i)
    list += (i == 0 ? "" : i + 1 == formats.size() ? " or " : ", ") + formats[i];
  throw InputError("unknown export format '" + format + "' (use " + list + ")");
}

std::string export_machine(const Machine& machine, const std::string& format, const ExportSettings& settings) {
  check_export_format(format);
  if (format == "ert-json") return export_ert_json(machine, settings);
  if (format == "nersc") return export_nersc(machine, settings);
  if (format == "rocprof-csv") return export_rocprof_csv(machine, settings);
  return export_json(machine);
}

std::string export_json(const Machine& machine) { return machine_document(machine).dump(2) + "\n"; }

}  // namespace roofprobe
