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

std::string lower_ascii(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

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

bool is_mix(const std::string& ceiling) { return upper(ceiling).find(".MIX") != std::string::npos; }

// Roofs closer than this (relative) print their labels over each other in the script, which writes
// each one at its roof's height: the lower of two such roofs is named in a comment, not drawn.
constexpr double kDistinctRoofs = 0.05;

// What the script is given of one precision, and what it is not.
struct NerscCeilings {
  std::vector<const ComputeCeiling*> drawn;   // the FMA peak first (the script ends the roofs there)
  std::vector<const ComputeCeiling*> close;   // within kDistinctRoofs of a drawn roof
  std::vector<const ComputeCeiling*> mixes;   // the fma_mix points, drawn only with --mix
  std::vector<std::string> other_precisions;  // "FP32", "BF16", ... (export --precision)
};

// The script ends every memory roof at the first compute roof: the vector FMA peak of the
// precision, then its noFMA and tensor ceilings, highest first (a tensor roof first put the
// elbows beyond the script's axes: IndexError). The fma_mix probe's points (MIX0 ... MIX1) lie
// between noFMA and FMA, MIX0 and MIX1 within a percent of them: they are drawn on request only.
NerscCeilings nersc_compute_roofs(const Machine& m, const std::string& type, bool mix) {
  NerscCeilings out;
  std::vector<const ComputeCeiling*> candidates;
  for (const ComputeCeiling* c : best_compute_ceilings(m)) {
    if (!has_type(c->name, type)) {
      const std::string u = upper(c->name);
      const std::string rest = u.rfind("TENSOR.", 0) == 0 ? u.substr(7) : u;
      const std::string other = rest.substr(0, rest.find('.'));
      if (std::find(out.other_precisions.begin(), out.other_precisions.end(), other) == out.other_precisions.end())
        out.other_precisions.push_back(other);
    } else if (is_mix(c->name) && !mix) {
      out.mixes.push_back(c);
    } else {
      candidates.push_back(c);
    }
  }
  sort_highest_first(candidates, [](const ComputeCeiling& c) { return c.gflops; });
  const auto fma = std::find_if(candidates.begin(), candidates.end(),
                                [&](const ComputeCeiling* c) { return upper(c->name) == type + ".FMA"; });
  if (fma == candidates.end()) {
    std::string have;
    for (const ComputeCeiling* c : best_compute_ceilings(m)) have += (have.empty() ? "" : ", ") + c->name;
    throw InputError("export --format nersc: no " + type + ".FMA ceiling in this machine file (it has " +
                     (have.empty() ? std::string("none") : have) + "); choose another with --precision");
  }
  std::rotate(candidates.begin(), fma, fma + 1);
  // Where a MIX point and a ceiling of the precision share a height, the ceiling keeps it.
  std::stable_partition(candidates.begin() + 1, candidates.end(),
                        [](const ComputeCeiling* c) { return !is_mix(c->name); });
  for (const ComputeCeiling* c : candidates) {
    const bool near = std::any_of(out.drawn.begin(), out.drawn.end(), [&](const ComputeCeiling* d) {
      return std::fabs(c->gflops / d->gflops - 1) < kDistinctRoofs;
    });
    (near ? out.close : out.drawn).push_back(c);
  }
  return out;
}

// 1, 2 or 5 times a power of ten, at or below (`up`: at or above) v.
double nice_bound(double v, bool up) {
  const double decade = std::pow(10.0, std::floor(std::log10(v)));
  const double steps[] = {1, 2, 5, 10};
  if (up) {
    for (double s : steps)
      if (s * decade >= v * (1 - 1e-12)) return s * decade;
    return 10 * decade;
  }
  for (int i = 3; i >= 0; --i)
    if (steps[i] * decade <= v * (1 + 1e-12)) return steps[i] * decade;
  return decade;
}

// The script's axes are fixed in its code (xmin = -0.65 and xmax = 2 as log10 of FLOP/byte, ymin =
// 500 and ymax = 13000 GFLOP/s: a V100), and it stops with an IndexError when a roof meets
// another outside them. The limits that hold this file's roofs and points, for the user to put
// there: every ridge with the first roof inside x with room, y from a decade and a half below the
// lowest ceiling to twice the highest.
struct AxisHint {
  int xmin = 0, xmax = 0;
  double ymin = 0, ymax = 0;
};

AxisHint nersc_axis_hint(const std::vector<NerscRoof>& roofs, const std::vector<const ComputeCeiling*>& ceilings,
                         const std::vector<KernelPoint>& points) {
  const MemoryLevel* first = nullptr;
  std::vector<double> ridges, rates;
  for (const NerscRoof& r : roofs)
    if (r.level != nullptr) {
      if (first == nullptr) first = r.level;
      ridges.push_back(ceilings.front()->gflops / r.level->gbs);
    }
  for (const ComputeCeiling* c : ceilings) {
    ridges.push_back(c->gflops / first->gbs);
    rates.push_back(c->gflops);
  }
  double x_lo = *std::min_element(ridges.begin(), ridges.end()), x_hi = *std::max_element(ridges.begin(), ridges.end());
  double y_lo = *std::min_element(rates.begin(), rates.end()) / 30,
         y_hi = *std::max_element(rates.begin(), rates.end()) * 2;
  for (const KernelPoint& p : points)
    if (p.kind == "flop" && finite_positive(p.intensity) && finite_positive(p.performance)) {
      x_lo = std::min(x_lo, p.intensity);
      x_hi = std::max(x_hi, p.intensity);
      y_lo = std::min(y_lo, p.performance / 2);
      y_hi = std::max(y_hi, p.performance * 2);
    }
  AxisHint hint;
  hint.xmin = int(std::floor(std::log10(x_lo / 2)));
  hint.xmax = std::max(int(std::ceil(std::log10(x_hi * 2))), hint.xmin + 2);
  hint.ymin = nice_bound(y_lo, false);
  hint.ymax = nice_bound(y_hi, true);
  return hint;
}

std::string hint_text(const AxisHint& h) {
  return "xmin = " + std::to_string(h.xmin) + ", xmax = " + std::to_string(h.xmax) +
         ", ymin = " + plain_number(h.ymin) + ", ymax = " + plain_number(h.ymax);
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

std::string name_list(const std::vector<const ComputeCeiling*>& ceilings) {
  std::string s;
  for (const ComputeCeiling* c : ceilings) s += " " + nersc_safe(c->name);
  return s;
}

// Comment lines for what the script will not draw, and why.
std::string nersc_not_drawn(const std::vector<std::string>& left_out, const NerscCeilings& ceilings,
                            const std::vector<std::string>& missing) {
  std::string s;
  // The script draws three memory roofs: what else the file has is named, not drawn.
  if (!left_out.empty()) {
    s += "# not drawn (the script has L1, L2 and HBM roofs only):";
    for (const std::string& l : left_out) s += " " + nersc_safe(l);
    s += "\n";
  }
  if (!ceilings.close.empty()) {
    s += "# not drawn, within 5% of a drawn roof (their values would print over each other):";
    for (const ComputeCeiling* c : ceilings.close) s += " " + nersc_safe(c->name) + " " + plain_number(c->gflops);
    s += "\n";
  }
  if (!ceilings.mixes.empty())
    s += "# not drawn, the FMA-mix points (export --mix):" + name_list(ceilings.mixes) + "\n";
  if (!ceilings.other_precisions.empty()) {
    s += "# other precisions in the machine file (export --precision):";
    for (const std::string& p : ceilings.other_precisions) s += " " + nersc_safe(lower_ascii(p));
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
  const NerscCeilings ceilings = nersc_compute_roofs(m, type, settings.mix);
  const std::vector<std::string> missing = missing_slots(roofs);
  const std::string hint = hint_text(nersc_axis_hint(roofs, ceilings.drawn, settings.points));
  std::string s;
  s += "# roofprobe export for the NERSC hierarchical roofline script (plot_roofline_hierarchical.py): " +
       nersc_safe(m.device.name) + "\n";
  s += "# bandwidths in GB/s, compute in GFLOP/s (1e9); " + type + " ceilings, the FMA peak first\n";
  // The script reads no axis settings from its input: the user edits them, so the file says how.
  s += "# the script runs under Python 2 only and draws fixed V100 axes (xmin = -0.65, xmax = 2: log10 of\n";
  s += "# FLOP/byte; ymin = 500, ymax = 13000: GFLOP/s; 'V100' in the corner); a roof that meets another\n";
  s += "# outside them stops it with an IndexError. Axes for this file, to set in the script:\n";
  s += "# " + hint + "\n";
  s += nersc_not_drawn(left_out, ceilings, missing);
  s += nersc_roof_lines(roofs, ceilings.drawn);
  if (settings.notes != nullptr)
    settings.notes->push_back(
        "note: nersc: plot_roofline_hierarchical.py needs Python 2 and draws fixed V100 axes; "
        "set " +
        hint + " in it (also in the file's comments)");
  // The script reads its kernel lines unconditionally (it loops over AI_L1, AI_L2, AI_HBM and
  // indexes FLOPS and labels with them): without them it stops with a NameError. No points: the
  // lines are there, empty, and it draws the roofs alone.
  if (settings.points.empty()) return s + "AI_L1\nAI_L2\nAI_HBM\nFLOPS\nlabels\n";
  return s + nersc_kernel_lines(roofs, settings.points, missing);
}

}  // namespace roofprobe
