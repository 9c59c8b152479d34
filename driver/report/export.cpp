// The export formats: ERT roofline.json, the NERSC plotting scripts' text, AMD's roofline.csv.
// Each follows what its consumer parses (results/README.md, "Exports"): field names, order,
// units (GB/s and GFLOP/s, 1e9).
#include "driver/report/export.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

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

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

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

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  return s;
}

// [[name, value], ...] sorted by value, highest first (stable: ties keep file order).
Value name_value_list(std::vector<std::pair<std::string, double>> items) {
  std::stable_sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
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
// with json.dump(indent=3), numbers as floats. ERT records one (the highest) GFLOP/s; its plot
// script takes data[0] as the peak and gbytes[0] as the fastest level, so both lists here are
// sorted highest first. "empirical" holds only measured values (empirical or published), "spec"
// the theoretical and spec-sheet figures.
std::string export_ert_json(const Machine& m, const ExportSettings& settings) {
  if (settings.names != "roofprobe" && settings.names != "ert")
    throw InputError("export --names: unknown '" + settings.names + "' (use roofprobe or ert)");
  const bool ert_names = settings.names == "ert";
  // ERT's own names: "FP64 GFLOPs" for a precision's FMA peak, "DRAM" for the device memory.
  auto ceiling_name = [&](const std::string& name) {
    if (!ert_names) return name;
    const std::size_t dot = name.find('.');
    if (dot != std::string::npos && upper(name.substr(dot + 1)) == "FMA") return name.substr(0, dot) + " GFLOPs";
    return name + " GFLOPs";
  };
  auto level_name = [&](const std::string& level) {
    const std::string u = upper(level);
    const bool memory = level == m.device.memory_name || u == "HBM" || u == "DRAM" || u.rfind("GDDR", 0) == 0;
    return ert_names && memory ? std::string("DRAM") : level;
  };
  std::vector<std::pair<std::string, double>> gflops, gbytes, spec_gflops, spec_gbytes;
  Value gflops_sources = Value::object(), gbytes_sources = Value::object();
  for (const ComputeCeiling* c : best_compute_ceilings(m))
    if (is_measured(c->source)) {
      gflops.emplace_back(ceiling_name(c->name), c->gflops);
      gflops_sources.set(ceiling_name(c->name), Value::string(source_note(c->source, c->citation)));
    }
  for (const MemoryLevel* l : best_memory_levels(m))
    if (is_measured(l->source)) {
      gbytes.emplace_back(level_name(l->level), l->gbs);
      gbytes_sources.set(level_name(l->level), Value::string(source_note(l->source, l->citation)));
    }
  if (settings.notes != nullptr && (gflops.empty() || gbytes.empty()))
    settings.notes->push_back(
        std::string("warning: ert-json: this file has no measured ") +
        (gflops.empty() && gbytes.empty() ? "ceiling or level"
         : gflops.empty()                 ? "compute ceiling"
                                          : "memory level") +
        ": its empirical lists are empty (ERT's plot script reads data[0]); the spec values are under \"spec\"");
  Value spec_gflops_notes = Value::object(), spec_gbytes_notes = Value::object();
  for (const auto& [name, gf] : theoretical_peaks(m)) {
    spec_gflops.emplace_back(ceiling_name(name), gf);
    auto basis = m.device.theoretical_basis.find(name);
    if (basis != m.device.theoretical_basis.end())
      spec_gflops_notes.set(ceiling_name(name), Value::string(basis->second));
  }
  std::set<std::string> spec_levels;
  for (const MemoryLevel& l : m.memory)
    if (l.source == "spec" && finite_positive(l.gbs) && spec_levels.insert(l.level).second) {
      spec_gbytes.emplace_back(level_name(l.level), l.gbs);
      if (!l.citation.empty()) spec_gbytes_notes.set(level_name(l.level), Value::string(l.citation));
    }

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
  metadata.set("UNITS", Value::string("gbytes: GB/s (1e9 bytes/s); gflops: GFLOP/s (1e9 FLOP/s)"));

  Value empirical = Value::object();
  empirical.set("metadata", std::move(metadata));
  empirical.set("gflops", Value::object()
                              .set("data", name_value_list(gflops))
                              .set("metadata", Value::object().set("SOURCE", std::move(gflops_sources))));
  empirical.set("gbytes", Value::object()
                              .set("data", name_value_list(gbytes))
                              .set("metadata", Value::object().set("SOURCE", std::move(gbytes_sources))));
  Value spec = Value::object();
  spec.set("gflops", Value::object()
                         .set("data", name_value_list(spec_gflops))
                         .set("metadata", Value::object().set("BASIS", std::move(spec_gflops_notes))));
  spec.set("gbytes", Value::object()
                         .set("data", name_value_list(spec_gbytes))
                         .set("metadata", Value::object().set("CITATION", std::move(spec_gbytes_notes))));
  Value root = Value::object();
  root.set("empirical", std::move(empirical));
  root.set("spec", std::move(spec));
  return root.dump(3) + "\n";
}

// ---- nersc ---------------------------------------------------------------------------------
// The NERSC hierarchical roofline plotting script (plot_roofline_hierarchical.py of
// cyanguwa/nersc-roofline) reads a text file line by line and picks a line by substring:
//   memroofs 14336 2996.77 828.758          GB/s, fastest first (roof 0 places the ceilings)
//   mem_roof_names 'L1' 'L2' 'HBM'          split on single quotes
//   comproofs 7068.86 3535.79               GFLOP/s, peak first (ceiling 0 ends the roofs)
//   comp_roof_names 'FMA' 'No-FMA'
// Any line containing one of its keys (memroofs, mem_roof_names, comproofs, comp_roof_names,
// AI_HBM, AI_L2, AI_L1, FLOPS, labels) is parsed as that key, so no other line and no name may
// contain one; names may not contain a quote.
namespace {

const char* const kNerscKeys[] = {"memroofs", "mem_roof_names", "comproofs", "comp_roof_names", "AI_HBM",
                                  "AI_L2",    "AI_L1",          "FLOPS",     "labels"};

std::string nersc_safe(const std::string& text) {
  std::string out;
  for (unsigned char c : text) out += (c < 0x20 || c == 0x7F || c == '\'' || c == '#') ? '_' : char(c);
  // Break any key the script would match: "FLOPS" -> "F_LOPS".
  for (bool changed = true; changed;) {
    changed = false;
    for (const char* key : kNerscKeys) {
      const std::size_t at = out.find(key);
      if (at != std::string::npos) {
        out.insert(at + 1, "_");
        changed = true;
      }
    }
  }
  return out;
}

// The shortest text that reads back to the same value, without an exponent ("1513000").
std::string plain_number(double v) {
  std::string text = json::real(v);
  if (text.size() > 2 && text.compare(text.size() - 2, 2, ".0") == 0) text.resize(text.size() - 2);
  return text;
}

template <typename T, typename Value>
void sort_highest_first(std::vector<const T*>& items, Value value) {
  std::stable_sort(items.begin(), items.end(), [&](const T* a, const T* b) { return value(*a) > value(*b); });
}

}  // namespace

namespace {

// The memory roofs the script draws, in its order (its colours and the AI_L1/AI_L2/AI_HBM point
// lines are fixed by position): L1, L2, and the device's memory (HBM, DRAM, GDDR) in the HBM slot.
struct NerscRoof {
  const char* slot;  // the script's name for the position: its AI_<slot> line
  const MemoryLevel* level = nullptr;
};

std::vector<NerscRoof> nersc_roofs(const Machine& m, std::vector<std::string>& left_out) {
  std::vector<NerscRoof> roofs = {{"L1"}, {"L2"}, {"HBM"}};
  for (const MemoryLevel* l : best_memory_levels(m)) {
    const std::string u = upper(l->level);
    if (u == "L1")
      roofs[0].level = l;
    else if (u == "L2")
      roofs[1].level = l;
    else if (l->level == m.device.memory_name || u == "HBM" || u == "DRAM" || u.rfind("GDDR", 0) == 0)
      roofs[2].level = l;
    else
      left_out.push_back(l->level);
  }
  return roofs;
}

bool has_type(const std::string& ceiling, const std::string& type) {
  const std::string u = upper(ceiling);
  return u.rfind(type + ".", 0) == 0 || u.rfind("TENSOR." + type + ".", 0) == 0;
}

}  // namespace

std::string export_nersc(const Machine& m, const ExportSettings& settings) {
  const std::string type = upper(settings.precision);
  std::vector<std::string> left_out;
  std::vector<NerscRoof> roofs = nersc_roofs(m, left_out);
  std::vector<const ComputeCeiling*> ceilings, other;
  for (const ComputeCeiling* c : best_compute_ceilings(m)) (has_type(c->name, type) ? ceilings : other).push_back(c);
  if (std::none_of(roofs.begin(), roofs.end(), [](const NerscRoof& r) { return r.level != nullptr; }))
    throw InputError(
        "export --format nersc: the NERSC roofline scripts need an L1, L2 or memory level; this machine "
        "file has none with a bandwidth");
  // The script ends every memory roof at the first compute roof: the vector FMA peak of the
  // precision, then its other ceilings (noFMA, tensor) highest first. A tensor roof first put the
  // elbows beyond the script's axes (IndexError).
  sort_highest_first(ceilings, [](const ComputeCeiling& c) { return c.gflops; });
  const auto fma = std::find_if(ceilings.begin(), ceilings.end(),
                                [&](const ComputeCeiling* c) { return upper(c->name) == type + ".FMA"; });
  if (fma == ceilings.end()) {
    std::string have;
    for (const ComputeCeiling* c : best_compute_ceilings(m)) have += (have.empty() ? "" : ", ") + c->name;
    throw InputError("export --format nersc: no " + type + ".FMA ceiling in this machine file (it has " +
                     (have.empty() ? std::string("none") : have) + "); choose another with --precision");
  }
  std::rotate(ceilings.begin(), fma, fma + 1);
  std::string s;
  s += "# roofprobe export for the NERSC hierarchical roofline scripts: " + nersc_safe(m.device.name) + "\n";
  s += "# bandwidths in GB/s, compute in GFLOP/s (1e9); " + type + " ceilings, the FMA peak first\n";
  std::string roof_values = "memroofs", roof_names = "mem_roof_names", comp = "comproofs",
              comp_names = "comp_roof_names";
  // The format has no source field: a spec-sheet value (nothing measured) says so in its name.
  auto mark = [](const std::string& source) { return source == "spec" ? std::string(" (spec)") : std::string(); };
  std::vector<std::string> missing_slots;
  for (const NerscRoof& r : roofs) {
    if (r.level == nullptr) {
      missing_slots.push_back(r.slot);
      continue;
    }
    roof_values += " " + plain_number(r.level->gbs);
    roof_names += " '" + nersc_safe(r.level->level + mark(r.level->source)) + "'";
  }
  for (const ComputeCeiling* c : ceilings) {
    comp += " " + plain_number(c->gflops);
    comp_names += " '" + nersc_safe(c->name + mark(c->source)) + "'";
  }
  // The script draws three memory roofs: what else the file has is named, not drawn.
  if (!left_out.empty() || !other.empty()) {
    s += "# not drawn:";
    for (const std::string& l : left_out) s += " " + nersc_safe(l);
    for (const ComputeCeiling* c : other) s += " " + nersc_safe(c->name);
    s += "\n";
  }
  if (!missing_slots.empty()) {
    s += "# no level for the script's";
    for (const std::string& slot : missing_slots) s += " " + slot;
    s += " roof\n";
  }
  s += roof_values + "\n" + roof_names + "\n" + comp + "\n" + comp_names + "\n";
  // The script reads its kernel lines unconditionally (it loops over AI_L1, AI_L2, AI_HBM and
  // indexes FLOPS and labels with them): without them it stops with a NameError. No points: the
  // lines are there, empty, and it draws the roofs alone.
  if (settings.points.empty()) return s + "AI_L1\nAI_L2\nAI_HBM\nFLOPS\nlabels\n";

  // Kernel points: one FLOP/s per kernel and its intensity at each of the three roofs. A kernel
  // needs all three (the script indexes the lines together), and the machine all three roofs.
  if (!missing_slots.empty())
    throw InputError(
        "export --format nersc --points: the script plots each kernel at L1, L2 and HBM; this machine "
        "file has no " +
        missing_slots.front() + " level");
  std::vector<std::string> kernels;
  std::map<std::string, std::map<std::string, double>> ai;
  std::map<std::string, double> flops;
  for (const KernelPoint& p : settings.points) {
    if (p.kind != "flop") continue;
    if (std::find(kernels.begin(), kernels.end(), p.kernel) == kernels.end()) kernels.push_back(p.kernel);
    for (const NerscRoof& r : roofs)
      if (p.level == r.level->level || upper(p.level) == r.slot) ai[p.kernel][r.slot] = p.intensity;
    flops[p.kernel] = std::max(flops[p.kernel], p.performance);
  }
  std::vector<std::string> kept, skipped;
  for (const std::string& k : kernels) (ai[k].size() == roofs.size() ? kept : skipped).push_back(k);
  if (kept.empty())
    throw InputError("export --format nersc --points: no kernel has an intensity at all of " + roofs[0].level->level +
                     ", " + roofs[1].level->level + " and " + roofs[2].level->level);
  if (!skipped.empty()) {
    s += "# kernels without all three intensities, not plotted:";
    for (const std::string& k : skipped) s += " " + nersc_safe(k);
    s += "\n";
  }
  for (const NerscRoof& r : roofs) {
    s += std::string("AI_") + r.slot;
    for (const std::string& k : kept) s += " " + plain_number(ai[k][r.slot]);
    s += "\n";
  }
  s += "FLOPS";
  for (const std::string& k : kept) s += " " + plain_number(flops[k]);
  s += "\nlabels";
  for (const std::string& k : kept) s += " '" + nersc_safe(k) + "'";
  return s + "\n";
}

// ---- rocprof-csv ---------------------------------------------------------------------------
// AMD's roofline benchmark (rocm-amdgpu-bench, `roofline`) writes roofline.csv: this header, then
// one row per GPU, the device index first and every value in GB/s or GFLOP/s (GOP/s for the
// integer columns) with 8 significant digits; an unsupported benchmark is written as 0.
// rocprofiler-compute drops the first column, keys the rest by header name and the row by
// device index. Value/Low/High: AMD writes mean and mean -/+ a confidence half-width; roofprobe
// writes its value (the median) with the lowest and highest sample behind it (Low = best -
// spread x median, High = best); values without samples (spec, published) get Low = High =
// value. The header keeps AMD's own spelling, including "hbmBwHigh".
namespace {

struct RocColumn {
  const char* name;  // value column; Low/High follow
  const char* low;
  const char* high;
};

const RocColumn kRocColumns[] = {
    {"HBMBw", "HBMBwLow", "hbmBwHigh"},
    {"MALLBw", "MALLBwLow", "MALLBwHigh"},
    {"L2Bw", "L2BwLow", "L2BwHigh"},
    {"L1Bw", "L1BwLow", "L1BwHigh"},
    {"LDSBw", "LDSBwLow", "LDSBwHigh"},
    {"FP8Flops", "FP8FlopsLow", "FP8FlopsHigh"},
    {"FP16Flops", "FP16FlopsLow", "FP16FlopsHigh"},
    {"BF16Flops", "BF16FlopsLow", "BF16FlopsHigh"},
    {"FP32Flops", "FP32FlopsLow", "FP32FlopsHigh"},
    {"FP64Flops", "FP64FlopsLow", "FP64FlopsHigh"},
    {"I8Ops", "I8OpsLow", "I8OpsHigh"},
    {"I32Ops", "I32OpsLow", "I32OpsHigh"},
    {"I64Ops", "I64OpsLow", "I64OpsHigh"},
    {"MFMAF4Flops", "MFMAF4FlopsLow", "MFMAF4FlopsHigh"},
    {"MFMAF6Flops", "MFMAF6FlopsLow", "MFMAF6FlopsHigh"},
    {"MFMAF8Flops", "MFMAF8FlopsLow", "MFMAF8FlopsHigh"},
    {"MFMAF16Flops", "MFMAF16FlopsLow", "MFMAF16FlopsHigh"},
    {"MFMABF16Flops", "MFMABF16FlopsLow", "MFMABF16FlopsHigh"},
    {"MFMAF32Flops", "MFMAF32FlopsLow", "MFMAF32FlopsHigh"},
    {"MFMAF64Flops", "MFMAF64FlopsLow", "MFMAF64FlopsHigh"},
    {"MFMAI8Ops", "MFMAI8OpsLow", "MFMAI8OpsHigh"},
};

struct Triple {
  double value = 0, low = 0, high = 0;
};

Triple triple(double value, const Stats& s) {
  Triple t{value, value, value};
  if (s.samples > 0 && finite_positive(s.best) && std::isfinite(s.spread) && s.spread >= 0) {
    const double scale = finite_positive(s.median) ? s.median : value;
    t.high = std::max(s.best, value);
    t.low = std::min(std::max(0.0, s.best - s.spread * scale), value);
  }
  return t;
}

// The column a memory level feeds: the device's last level (DRAM, HBM, GDDR) is AMD's HBM.
const char* memory_column(const Machine& m, const std::string& level) {
  const std::string u = upper(level);
  if (u == "L1") return "L1Bw";
  if (u == "L2") return "L2Bw";
  if (u == "SHARED" || u == "LDS") return "LDSBw";
  if (u == "MALL") return "MALLBw";
  if (u == "HBM" || u == "DRAM" || u.rfind("GDDR", 0) == 0 || level == m.device.memory_name) return "HBMBw";
  return nullptr;
}

// The column a compute ceiling feeds: vector peaks from the FMA ceilings, matrix (MFMA) peaks
// from the tensor ceilings by input type (the highest over accumulator types). TF32 tensor
// ceilings have no AMD column (MFMAF32 is full FP32).
const char* compute_column(const std::string& name) {
  const std::string u = upper(name);
  const std::size_t dot = u.find('.');
  const std::string head = u.substr(0, dot);
  const std::string rest = dot == std::string::npos ? "" : u.substr(dot + 1);
  if (head == "TENSOR") {
    const std::string in = rest.substr(0, rest.find('.'));
    if (in == "FP4") return "MFMAF4Flops";
    if (in == "FP6") return "MFMAF6Flops";
    if (in == "FP8" || in == "E4M3" || in == "E5M2") return "MFMAF8Flops";
    if (in == "FP16") return "MFMAF16Flops";
    if (in == "BF16") return "MFMABF16Flops";
    if (in == "FP32") return "MFMAF32Flops";
    if (in == "FP64") return "MFMAF64Flops";
    if (in == "INT8") return "MFMAI8Ops";
    return nullptr;
  }
  if (head == "INT8") return "I8Ops";
  if (head == "INT32") return "I32Ops";
  if (head == "INT64") return "I64Ops";
  if (rest != "FMA") return nullptr;  // noFMA ceilings are not AMD's peak
  if (head == "FP8") return "FP8Flops";
  if (head == "FP16") return "FP16Flops";
  if (head == "BF16") return "BF16Flops";
  if (head == "FP32") return "FP32Flops";
  if (head == "FP64") return "FP64Flops";
  return nullptr;
}

std::string csv_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.8g", std::isfinite(v) ? v : 0.0);
  return buf;
}

}  // namespace

std::string export_rocprof_csv(const Machine& m, const ExportSettings& settings) {
  std::map<std::string, Triple> values;
  auto keep_highest = [&](const char* column, const Triple& t) {
    if (column == nullptr) return;
    auto it = values.find(column);
    if (it == values.end() || t.value > it->second.value) values[column] = t;
  };
  std::vector<std::string> notes;
  const bool cpu = m.device.kind == "cpu";
  const std::vector<const MemoryLevel*> levels = best_memory_levels(m);
  for (const MemoryLevel* l : levels) {
    const char* column = memory_column(m, l->level);
    // A CPU's last-level cache (L3, L4) is where AMD's tool has its last-level cache, MALL.
    if (column == nullptr && cpu && l != levels.back() && upper(l->level).rfind("L", 0) == 0 &&
        l->level.find('.') == std::string::npos && upper(l->level) != "L1" && upper(l->level) != "L2")
      column = "MALLBw";
    keep_highest(column, triple(l->gbs, l->stats));
  }
  for (const ComputeCeiling* c : best_compute_ceilings(m))
    keep_highest(compute_column(c->name), triple(c->gflops, c->stats));

  // rocprofiler-compute's roofline_calc divides each FLOP peak by the HBM, L2, L1 and LDS
  // bandwidths (the elbows): a 0 there is a ZeroDivisionError, so each has a value or the export
  // is refused. NVIDIA's L1 and shared memory are one SRAM with one datapath (128 B/clk/SM), and a
  // CPU has no LDS but its L1: each may stand in for the other, and the note says so.
  auto stand_in = [&](const char* missing, const char* from, const std::string& why) {
    if (values.count(missing) != 0 || values.count(from) == 0) return;
    values[missing] = values[from];
    notes.push_back(std::string(missing) + " is " + from + "'s " + csv_number(values[from].value) + " (" + why + ")");
  };
  if (cpu) {
    stand_in("LDSBw", "L1Bw", "a CPU has no LDS; its L1 is the nearest memory");
  } else if (upper(m.device.vendor).find("NVIDIA") != std::string::npos || m.device.backend == "cuda") {
    stand_in("L1Bw", "LDSBw", "NVIDIA's L1 and shared memory are one SRAM with one datapath");
    stand_in("LDSBw", "L1Bw", "NVIDIA's L1 and shared memory are one SRAM with one datapath");
  }
  std::vector<std::string> absent;
  for (const char* need : {"HBMBw", "L2Bw", "L1Bw", "LDSBw"})
    if (values.count(need) == 0 || !(values[need].value > 0)) absent.push_back(need);
  if (!absent.empty()) {
    std::string list;
    for (const std::string& a : absent) list += (list.empty() ? "" : ", ") + a;
    throw InputError("export --format rocprof-csv: AMD's roofline_calc divides by " + list +
                     ", and this machine file has no level (measured, published or spec) for " +
                     (absent.size() == 1 ? "it" : "them") + " (a run that measures " +
                     (absent.size() == 1 ? "it" : "them") + ", or a spec value in the file, is needed)");
  }
  if (settings.notes != nullptr)
    for (std::string& n : notes) settings.notes->push_back("note: rocprof-csv: " + n);

  std::string header = "device", row = "0";
  for (const RocColumn& col : kRocColumns) {
    header += std::string(",") + col.name + "," + col.low + "," + col.high;
    auto it = values.find(col.name);
    const Triple t = it == values.end() ? Triple{} : it->second;
    row += "," + csv_number(t.value) + "," + csv_number(t.low) + "," + csv_number(t.high);
  }
  return header + "\n" + row + "\n";
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
