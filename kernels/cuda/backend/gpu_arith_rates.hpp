// Per-SM arithmetic throughput of NVIDIA GPUs for the precisions the CUDA FLOP probe adds to
// FP64/FP32 (those stay in kernels/cuda/backend/gpu_arch.hpp): fp16, bf16 and 32-bit integer multiply-add, as results
// per clock per SM, and the theoretical peaks they give at a clock. Host-only, no CUDA headers;
// tests/probes/flops/model_test.cpp checks them against published peaks, and
// tests/unit/gpu_tables_cover_every_cc_test.cpp that every compute capability 7.0-12.1 has a row.
#pragma once

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>

namespace roofprobe {

struct GpuArithRates {
  int fp16 = 0;       // 16-bit float add/mul/FMA results per clock per SM (an f16x2 op gives 2)
  int bf16 = 0;       // the same for bfloat16; 0: no bf16 arithmetic (cc < 8.0) or unknown
  int int32_mad = 0;  // 32-bit integer multiply / multiply-add results per clock per SM
  int int32_add = 0;  // 32-bit integer add results per clock per SM
  int issue = 0;      // thread instructions issued per clock per SM: 4 schedulers x 32 lanes
  const char* source = "";
  const char* unknown = "";  // "unknown: ..." why a rate above is 0 (bf16 before 8.0 needs none)
};

// Source: CUDA C++ Programming Guide, "Arithmetic Instructions", table "Throughput of Native
// Arithmetic Instructions (Operations per Clock Cycle per Multiprocessor)" (rows "16-bit
// floating-point add, multiply, multiply-add" with its footnote for __nv_bfloat16, "32-bit integer
// add ...", "32-bit integer multiply, multiply-add ..."), cross-checked against the vendors'
// published non-tensor peaks: V100, A100 and H100 whitepapers (FP16 31.4 / 78 / 133.8 TFLOP/s,
// BF16 - / 39 / 133.8, INT32 15.7 / 19.5 / 33.5 TOPS, which count an IMAD as 2 ops), and the
// GA102 (RTX 3090: FP16 = BF16 = FP32 rate, 35.6) and AD102 (RTX 4090: FP16 = FP32 rate, 82.6)
// whitepapers; 8.6 is taken from the GA102 whitepaper. Every compute capability from 7.0 to 12.1
// has a row; a rate we could not check stays 0 and the row's `unknown` says why (no peak rather
// than a guess). A compute capability without a row yields zeros.
inline GpuArithRates gpu_arith_rates(int major, int minor) {
  constexpr const char* kGuide = "CUDA C++ Programming Guide, arithmetic instruction throughput";
  constexpr const char* kOrin16 =
      "unknown: fp16/bf16 rate of compute capability 8.7 (the Programming Guide's 16-bit row "
      "disagrees with the GA102 whitepaper for 8.6, and no Orin document gives a non-tensor FP16 "
      "peak to check it against)";
  constexpr const char* kBlackwell =
      "unknown: no fp16/bf16/int32 (non-tensor) rate per SM for this Blackwell compute capability "
      "checked against a published peak (Programming Guide table or whitepaper)";
  switch (major * 10 + minor) {
    case 70:  // V100
    case 72:  // Xavier
    case 75:  // Turing: no bf16 arithmetic before 8.0
      return {128, 0, 64, 64, 128, kGuide};
    case 80:  // A100: bf16 at half the fp16 rate (the table's footnote; A100: 39 vs 78 TFLOP/s)
      return {256, 128, 64, 64, 128, kGuide};
    case 86:  // GA10x (RTX 30xx, A40): fp16/bf16 at the FP32 rate per the GA102 whitepaper
      return {128, 128, 64, 64, 128, "GA102 whitepaper (FP16/BF16 non-tensor = FP32 rate)"};
    case 87:  // Orin: int32 per the Programming Guide (64 / 64, as every 8.x and 9.0 column)
      return {0, 0, 64, 64, 128, kGuide, kOrin16};
    case 89:  // Ada (RTX 40xx, L40S)
      return {128, 128, 64, 64, 128, kGuide};
    case 90:  // H100, H200, GH200
      return {256, 256, 64, 64, 128, kGuide};
    case 100:  // B200, GB200
    case 103:  // B300, GB300
    case 110:  // Jetson Thor
    case 120:  // RTX 50xx
    case 121:  // GB10
      return {0, 0, 0, 0, 0, "", kBlackwell};
    default:
      return {};
  }
}

// "9.0" -> 9, 0. False for text that is not <major>.<minor>.
inline bool parse_compute_capability(const std::string& text, int& major, int& minor) {
  int ma = 0, mi = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%d.%d%c", &ma, &mi, &tail) != 2 || ma <= 0 || mi < 0) return false;
  major = ma;
  minor = mi;
  return true;
}

struct ArithPeak {
  double gflops = 0;
  std::string basis;
};

// Results per clock per SM of the INT32 noFMA chain (a multiply and an add per step). The
// multiply runs on the FMA pipe and the add on the integer ALU pipe (Volta and newer), so the
// two can overlap: a multiply+add pair costs max(1/mad, 1/add) clocks, and no fewer than the
// 2 issue slots it takes. With the table's 64 + 64 and 128 issue lanes that is 128 results per
// clock, the same as the IMAD form (64 x 2): both forms are bounded alike, unlike FP where
// FMUL/FADD share the FMA pipe and noFMA is half the FMA peak.
inline double int32_nofma_results_per_clock(const GpuArithRates& r) {
  if (r.int32_mad <= 0 || r.int32_add <= 0 || r.issue <= 0) return 0;
  const double pair_clocks = std::max({1.0 / r.int32_mad, 1.0 / r.int32_add, 2.0 / r.issue});
  return 2.0 / pair_clocks;
}

// The FP16/BF16/INT32 ceilings (FMA and noFMA) of `sms` SMs of compute capability major.minor at
// `clock_mhz`, keyed by ceiling name ("FP16.FMA", "INT32.noFMA"), with one line of provenance
// each. FMA: results x 2 operations; noFMA: results x 1. Empty for an unknown architecture, and
// no BF16 entries where the architecture has no bf16 arithmetic.
inline std::map<std::string, ArithPeak> gpu_arith_peaks(int major, int minor, int sms, double clock_mhz,
                                                        const std::string& clock_kind) {
  std::map<std::string, ArithPeak> out;
  const GpuArithRates r = gpu_arith_rates(major, minor);
  if (sms <= 0 || clock_mhz <= 0) return out;
  const std::string cc = std::to_string(major) + "." + std::to_string(minor);
  char mhz_text[32];
  std::snprintf(mhz_text, sizeof mhz_text, "%.1f", clock_mhz);
  const std::string tail =
      std::string(" x ") + mhz_text + " MHz (" + clock_kind + " SM clock); " + r.source + ", cc " + cc;
  auto add = [&](const std::string& name, double results_per_clock, double ops_per_result, const std::string& what) {
    if (results_per_clock <= 0) return;
    ArithPeak p;
    p.gflops = sms * results_per_clock * ops_per_result * clock_mhz * 1e-3;
    char rate[32];
    std::snprintf(rate, sizeof rate, "%g", results_per_clock);
    p.basis = std::to_string(sms) + " SMs x " + rate + " " + what + " results/clk/SM x " +
              (ops_per_result == 2 ? "2 ops/result" : "1 op/result") + tail;
    out[name] = p;
  };
  add("FP16.FMA", r.fp16, 2, "fp16 FMA");
  add("FP16.noFMA", r.fp16, 1, "fp16 mul/add");
  add("BF16.FMA", r.bf16, 2, "bf16 FMA");
  add("BF16.noFMA", r.bf16, 1, "bf16 mul/add");
  add("INT32.FMA", r.int32_mad, 2, "int32 IMAD");
  add("INT32.noFMA", int32_nofma_results_per_clock(r), 1,
      "int32 mul+add (IMAD on the FMA pipe overlapping IADD on the ALU pipe, issue-bound)");
  return out;
}

// Why each FP16/BF16/INT32 ceiling of compute capability major.minor has no peak, keyed like
// gpu_arith_peaks: the row's own reason, or that the table has no row. The flops probe records
// them as theoretical_unknown.<ceiling> (as the tensor probe does). Nothing for a ceiling with a
// rate, and no BF16 entries before 8.0 (no bf16 arithmetic: the probe does not run it there).
inline std::map<std::string, std::string> gpu_arith_unknown(int major, int minor) {
  std::map<std::string, std::string> out;
  const GpuArithRates r = gpu_arith_rates(major, minor);
  const std::string cc = std::to_string(major) + "." + std::to_string(minor);
  const std::string why =
      r.unknown[0] != '\0'
          ? std::string(r.unknown) + " (compute capability " + cc + ", kernels/cuda/backend/gpu_arith_rates.hpp)"
          : "unknown: the arithmetic rate table (kernels/cuda/backend/gpu_arith_rates.hpp) has no row for "
            "compute capability " +
                cc;
  auto add = [&](const std::string& name, double results_per_clock) {
    if (results_per_clock <= 0) out[name] = why;
  };
  add("FP16.FMA", r.fp16);
  add("FP16.noFMA", r.fp16);
  if (major >= 8) {
    add("BF16.FMA", r.bf16);
    add("BF16.noFMA", r.bf16);
  }
  add("INT32.FMA", r.int32_mad);
  add("INT32.noFMA", int32_nofma_results_per_clock(r));
  return out;
}

}  // namespace roofprobe
