// export --format nersc: the text the NERSC hierarchical roofline plotting script reads.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "driver/model/errors.hpp"
#include "driver/report/export.hpp"
#include "driver/report/export_common.hpp"

namespace roofprobe {

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

// The compute roofs of the precision (`type`), the others in `other` (named, not drawn). The
// script ends every memory roof at the first compute roof: the vector FMA peak of the
// precision, then its other ceilings (noFMA, tensor) highest first. A tensor roof first put the
// elbows beyond the script's axes (IndexError).
std::vector<const ComputeCeiling*> nersc_compute_roofs(const Machine& m, const std::string& type,
                                                       std::vector<const ComputeCeiling*>* other) {
  std::vector<const ComputeCeiling*> ceilings;
  for (const ComputeCeiling* c : best_compute_ceilings(m)) (has_type(c->name, type) ? ceilings : *other).push_back(c);
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
  return ceilings;
}

// The script's slots (L1, L2, HBM) this machine file has no level for.
std::vector<std::string> missing_slots(const std::vector<NerscRoof>& roofs) {
  std::vector<std::string> out;
  for (const NerscRoof& r : roofs)
    if (r.level == nullptr) out.push_back(r.slot);
  return out;
}

// The memroofs, mem_roof_names, comproofs and comp_roof_names lines.
std::string nersc_roof_lines(const std::vector<NerscRoof>& roofs, const std::vector<const ComputeCeiling*>& ceilings) {
  std::string roof_values = "memroofs", roof_names = "mem_roof_names", comp = "comproofs",
              comp_names = "comp_roof_names";
  // The format has no source field: a spec-sheet value (nothing measured) says so in its name.
  auto mark = [](const std::string& source) { return source == "spec" ? std::string(" (spec)") : std::string(); };
  for (const NerscRoof& r : roofs) {
    if (r.level == nullptr) continue;
    roof_values += " " + plain_number(r.level->gbs);
    roof_names += " '" + nersc_safe(r.level->level + mark(r.level->source)) + "'";
  }
  for (const ComputeCeiling* c : ceilings) {
    comp += " " + plain_number(c->gflops);
    comp_names += " '" + nersc_safe(c->name + mark(c->source)) + "'";
  }
  return roof_values + "\n" + roof_names + "\n" + comp + "\n" + comp_names + "\n";
}

// Comment lines for what the script will not draw.
std::string nersc_not_drawn(const std::vector<std::string>& left_out, const std::vector<const ComputeCeiling*>& other,
                            const std::vector<std::string>& missing) {
  std::string s;
  // The script draws three memory roofs: what else the file has is named, not drawn.
  if (!left_out.empty() || !other.empty()) {
    s += "# not drawn:";
    for (const std::string& l : left_out) s += " " + nersc_safe(l);
    for (const ComputeCeiling* c : other) s += " " + nersc_safe(c->name);
    s += "\n";
  }
  if (!missing.empty()) {
    s += "# no level for the script's";
    for (const std::string& slot : missing) s += " " + slot;
    s += " roof\n";
  }
  return s;
}

// Kernel points: one FLOP/s per kernel and its intensity at each of the three roofs. A kernel
// needs all three (the script indexes the lines together), and the machine all three roofs.
std::string nersc_kernel_lines(const std::vector<NerscRoof>& roofs, const std::vector<KernelPoint>& points,
                               const std::vector<std::string>& missing) {
  if (!missing.empty())
    throw InputError(
        "export --format nersc --points: the script plots each kernel at L1, L2 and HBM; this machine "
        "file has no " +
        missing.front() + " level");
  std::vector<std::string> kernels;
  std::map<std::string, std::map<std::string, double>> ai;
  std::map<std::string, double> flops;
  for (const KernelPoint& p : points) {
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
  std::string s;
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

}  // namespace

std::string export_nersc(const Machine& m, const ExportSettings& settings) {
  const std::string type = upper(settings.precision);
  std::vector<std::string> left_out;
  const std::vector<NerscRoof> roofs = nersc_roofs(m, left_out);
  if (std::none_of(roofs.begin(), roofs.end(), [](const NerscRoof& r) { return r.level != nullptr; }))
    throw InputError(
        "export --format nersc: the NERSC roofline scripts need an L1, L2 or memory level; this machine "
        "file has none with a bandwidth");
  std::vector<const ComputeCeiling*> other;
  const std::vector<const ComputeCeiling*> ceilings = nersc_compute_roofs(m, type, &other);
  const std::vector<std::string> missing = missing_slots(roofs);
  std::string s;
  s += "# roofprobe export for the NERSC hierarchical roofline scripts: " + nersc_safe(m.device.name) + "\n";
  s += "# bandwidths in GB/s, compute in GFLOP/s (1e9); " + type + " ceilings, the FMA peak first\n";
  s += nersc_not_drawn(left_out, other, missing);
  s += nersc_roof_lines(roofs, ceilings);
  // The script reads its kernel lines unconditionally (it loops over AI_L1, AI_L2, AI_HBM and
  // indexes FLOPS and labels with them): without them it stops with a NameError. No points: the
  // lines are there, empty, and it draws the roofs alone.
  if (settings.points.empty()) return s + "AI_L1\nAI_L2\nAI_HBM\nFLOPS\nlabels\n";
  return s + nersc_kernel_lines(roofs, settings.points, missing);
}

}  // namespace roofprobe
