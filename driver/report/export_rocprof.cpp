// export --format rocprof-csv: AMD's roofline.csv, as rocprofiler-compute reads it.
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
// from the tensor ceilings whose input and accumulator types are those of the MFMA instruction
// AMD's benchmark times for that column (rocm-amdgpu-bench): MFMAF16 is v_mfma_f32_32x32x8f16,
// FP16 in and FP32 accumulate; MFMABF16 bf16 -> FP32; MFMAF8 fp8 -> FP32; MFMAF32 FP32 -> FP32
// (full FP32, not TF32); MFMAF64 FP64 -> FP64; MFMAI8 int8 -> int32. NVIDIA's FP16-accumulate
// rate (twice the FP32-accumulate one on GeForce cards) and TF32 have no AMD column.
const char* compute_column(const std::string& name) {
  const std::string u = upper(name);
  const std::size_t dot = u.find('.');
  const std::string head = u.substr(0, dot);
  const std::string rest = dot == std::string::npos ? "" : u.substr(dot + 1);
  if (head == "TENSOR") {
    const std::string in = rest.substr(0, rest.find('.'));
    const std::string acc = rest.find('.') == std::string::npos ? "" : rest.substr(rest.find('.') + 1);
    if (in == "FP4" && acc == "FP32") return "MFMAF4Flops";
    if (in == "FP6" && acc == "FP32") return "MFMAF6Flops";
    if ((in == "FP8" || in == "E4M3" || in == "E5M2") && acc == "FP32") return "MFMAF8Flops";
    if (in == "FP16" && acc == "FP32") return "MFMAF16Flops";
    if (in == "BF16" && acc == "FP32") return "MFMABF16Flops";
    if (in == "FP32" && acc == "FP32") return "MFMAF32Flops";
    if (in == "FP64" && acc == "FP64") return "MFMAF64Flops";
    if (in == "INT8" && acc == "INT32") return "MFMAI8Ops";
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
  std::set<std::string> bounds;  // columns holding a lower bound rather than a figure of their own
  auto stand_in = [&](const char* missing, const char* from, const std::string& why, bool bound = false) {
    if (values.count(missing) != 0 || values.count(from) == 0) return;
    values[missing] = values[from];
    const bool from_bound = bounds.count(from) != 0;
    if (bound || from_bound) bounds.insert(missing);
    notes.push_back(std::string(missing) + " is " + from + "'s " + csv_number(values[from].value) + " (" + why +
                    (from_bound ? std::string("; ") + from + " is itself a lower bound, so this is one too" : "") +
                    ")");
  };
  const bool nvidia =
      !cpu && (upper(m.device.vendor).find("NVIDIA") != std::string::npos || m.device.backend == "cuda");
  const char* kSram = "NVIDIA's L1 and shared memory are one SRAM with one datapath";
  if (nvidia) {
    stand_in("L1Bw", "LDSBw", kSram);
    stand_in("LDSBw", "L1Bw", kSram);
  }
  // A cache level the file has no figure for (spec sheets rarely give one for the L2) is bounded
  // below by the level behind it: every byte the memory delivers passes through the L2 (and the
  // MALL, where there is one), and every byte the L2 delivers passes through the L1. The bound
  // stands in, and the note calls it a lower bound: an L2 roof drawn at the HBM's height then says
  // "no L2 figure", never a 0 that the tool would divide by.
  stand_in("L2Bw", values.count("MALLBw") != 0 ? "MALLBw" : "HBMBw",
           "a lower bound: the file has no L2 figure, and every byte from beyond the L2 passes through it", true);
  stand_in("L1Bw", "L2Bw", "a lower bound: the file has no L1 figure, and every byte from the L2 passes through the L1",
           true);
  // LDS from an L1 that only now has a value (a bound): the first SRAM stand-in had none to copy.
  if (cpu) stand_in("LDSBw", "L1Bw", "a CPU has no LDS; its L1 is the nearest memory");
  if (nvidia) stand_in("LDSBw", "L1Bw", kSram);
  std::vector<std::string> absent;
  for (const char* need : {"HBMBw", "L2Bw", "L1Bw", "LDSBw"})
    if (values.count(need) == 0 || !(values[need].value > 0)) absent.push_back(need);
  if (!absent.empty()) {
    std::string list;
    for (const std::string& a : absent) list += (list.empty() ? "" : ", ") + a;
    throw InputError("export --format rocprof-csv: AMD's roofline_calc divides by " + list +
                     ", and this machine file has no level (measured, published or spec) for " +
                     (absent.size() == 1 ? "it" : "them") + " nor for the memory that would bound " +
                     (absent.size() == 1 ? "it" : "them") +
                     " (a run that measures the memory, or a spec value in the file, is needed)");
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

}  // namespace roofprobe
