// Floating-point execution resources of known x86 cores, keyed by vendor + CPUID family/model,
// each row with the documents it comes from; and the per-core FLOP/cycle rule built on them.
// Pure host code (no probe, no OpenMP): the CPU backend multiplies the result by cores and the
// clock measured during each ceiling's samples.
//
// A part that is not in the table, or whose figure varies by SKU in a way CPUID does not show,
// gets no value and a sentence saying why: a theoretical peak off by 2x is worse than none.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace roofprobe::cpu {

// What CPUID leaf 0 / leaf 1 say about the processor.
struct CpuIdentity {
  std::string vendor;  // "AuthenticAMD", "GenuineIntel", ...
  int family = -1;     // display family (base + extended), e.g. 0x19
  int model = -1;      // display model (extended << 4 | base where the vendor uses it), e.g. 0x11
};

// Display family/model from CPUID leaf 1 EAX, by the rule of the Intel SDM (vol. 2A, CPUID) and
// AMD APM (vol. 3, CPUID Fn0000_0001_EAX): the extended fields count when the base family is
// 0xF (both vendors) or 0x6 (Intel; the extended model is used for family 6 and 0xF).
std::pair<int, int> decode_family_model(unsigned leaf1_eax);

// This machine's identity (the CPUID instruction); vendor "" and family/model -1 elsewhere.
CpuIdentity read_cpu_identity();

// The FP pipes that execute vector instructions of one width on one core.
struct FpUnits {
  int datapath_bits = 0;          // bits each pipe processes per cycle (wider ops take several passes)
  int fma_pipes = 0;              // pipes that execute FMA (and FMUL, FADD)
  int add_pipes = 0;              // further pipes, on ports of their own, that execute FADD only
  const char* unknown = nullptr;  // non-null: no figure for this width, and why
};

struct UarchRow {
  const char* vendor;
  int family;
  std::vector<std::pair<int, int>> models;  // inclusive CPUID model ranges
  const char* name;                         // "AMD Zen 4"
  FpUnits v128, v256, v512;                 // SSE/NEON-width, AVX/AVX2, AVX-512 instructions
  const char* source;                       // where the pipe counts and widths come from
};

const std::vector<UarchRow>& uarch_table();
const UarchRow* find_uarch(const CpuIdentity& id);  // nullptr when no row matches

// Peak FLOP per cycle of one core for vectors of `vector_bits` holding `element_bits` lanes.
//   FMA form:   fma_pipes x min(datapath, vector) / element x 2
//   noFMA form: (1:1 FMUL/FADD mix, what the noFMA probe runs) FMULs go to FMA pipes only,
//               FADDs to either kind, so min(2 x fma_pipes, fma_pipes + add_pipes) single-FLOP
//               ops per cycle x min(datapath, vector) / element
struct CorePeak {
  bool known = false;
  std::string why_unknown;  // when !known: one sentence naming the part and the reason
  std::string uarch;        // row name
  double fma_flops_per_cycle = 0;
  double nofma_flops_per_cycle = 0;
  std::string fma_rule;  // the formula with this core's numbers
  std::string nofma_rule;
  std::string source;
};

CorePeak core_peak(const CpuIdentity& id, int vector_bits, int element_bits);

// "AMD family 0x19 model 0x11" (for messages).
std::string describe_identity(const CpuIdentity& id);

}  // namespace roofprobe::cpu
