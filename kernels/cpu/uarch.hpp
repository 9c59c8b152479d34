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
  std::string vendor;     // "AuthenticAMD", "GenuineIntel", ...
  int family = -1;        // display family (base + extended), e.g. 0x19
  int model = -1;         // display model (extended << 4 | base where the vendor uses it), e.g. 0x11
  unsigned features = 0;  // CpuFeature bits CPUID leaf 7 reports
};

// ISA extensions that tell core generations apart where a hypervisor's CPUID model number does
// not: a VM on a Xeon with AMX was seen reporting model 0xA7 (Rocket Lake, a client core with one
// 512-bit FMA unit and no AMX).
enum CpuFeature : unsigned {
  kAvx512F = 1u << 0,     // leaf 7 EBX bit 16
  kAvx512Fp16 = 1u << 1,  // leaf 7 EDX bit 23
  kAmxTile = 1u << 2,     // leaf 7 EDX bit 24
};

// "AVX-512F, AVX512-FP16, AMX" (the bits set in `features`).
std::string describe_features(unsigned features);

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
  // True where the count of 512-bit FMA units varies by SKU and CPUID does not say it (Intel
  // Xeon): a timing test of the units (Avx512FmaUnits) then gives the count.
  bool fma_units_by_sku = false;
};

struct UarchRow {
  const char* vendor;
  int family;
  std::vector<std::pair<int, int>> models;  // inclusive CPUID model ranges
  const char* name;                         // "AMD Zen 4"
  FpUnits v128, v256, v512;                 // SSE/NEON-width, AVX/AVX2, AVX-512 instructions
  const char* source;                       // where the pipe counts and widths come from
  unsigned lacks = 0;                       // CpuFeature bits none of these cores has
};

const std::vector<UarchRow>& uarch_table();
// The row of the CPUID family/model; for an Intel model number no row knows, a core with AMX is
// a Golden Cove-class Xeon (Sapphire Rapids and later). nullptr when nothing matches.
const UarchRow* find_uarch(const CpuIdentity& id);

// The number of 512-bit FMA units of one core, found by timing (the Intel Optimization
// Reference Manual's method for SKUs whose count CPUID does not report): independent 512-bit FMAs
// run at the 256-bit FMA rate on a core with two units and at half of it with one. The ratio is
// free of the clock but for the AVX-512 licence: a lower 512-bit clock takes up to ~15% off on
// Skylake-SP. units 0: not measured (no AVX-512) or inconclusive; `method` says which.
struct Avx512FmaUnits {
  int units = 0;
  double ratio = 0;  // 512-bit FMA instructions per second / 256-bit ones
  std::string method;
};
// The count from a measured ratio: 2 at >= 0.7, 1 at <= 0.55, otherwise 0 (inconclusive).
int fma_units_from_ratio(double ratio);

// When to stop timing. Each round times both widths back to back, so a busy spell of a shared
// core (another tenant, a ctest job) slows a round's two rates alike. Disturbance only ever
// lowers a rate, so the best rate of each width rises towards the true one; the ratio of the
// bests is read once neither best has risen by more than `kSettled` over the last
// `kSettledRounds` rounds, and the count is settled. Rounds stop at `kMaxRounds` whatever the
// bests do: the ratio then stands as measured and may be inconclusive.
class FmaRateRounds {
 public:
  static constexpr int kMinRounds = 3;
  static constexpr int kSettledRounds = 2;
  static constexpr int kMaxRounds = 16;
  static constexpr double kSettled = 0.02;

  void add(double wide_rate, double narrow_rate);
  bool done() const;  // settled with a conclusive count, or kMaxRounds reached
  double ratio() const { return best_narrow_ > 0 ? best_wide_ / best_narrow_ : 0; }
  int rounds() const { return rounds_; }

 private:
  double best_wide_ = 0, best_narrow_ = 0;
  int rounds_ = 0;
  int steady_rounds_ = 0;  // rounds since either best last rose by more than kSettled
};

// The count, by FmaRateRounds over rounds of ~24-36 ms (both widths): 3 rounds (~0.1 s) on a quiet core,
// at most kMaxRounds. fma_units.cpp
Avx512FmaUnits time_avx512_fma_units();

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

// `units` settles rows whose 512-bit FMA count depends on the SKU. A row whose cores lack an
// extension the CPU reports (a hypervisor's model number) gives no value and says so.
CorePeak core_peak(const CpuIdentity& id, int vector_bits, int element_bits, const Avx512FmaUnits& units = {});

// "AMD family 0x19 model 0x11" (for messages).
std::string describe_identity(const CpuIdentity& id);

}  // namespace roofprobe::cpu
