#include "kernels/cpu/uarch.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <tuple>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace roofprobe::cpu {

std::pair<int, int> decode_family_model(unsigned eax) {
  const int base_family = static_cast<int>((eax >> 8) & 0xF);
  const int base_model = static_cast<int>((eax >> 4) & 0xF);
  const int ext_family = static_cast<int>((eax >> 20) & 0xFF);
  const int ext_model = static_cast<int>((eax >> 16) & 0xF);
  const int family = base_family == 0xF ? base_family + ext_family : base_family;
  const int model = (base_family == 0xF || base_family == 0x6) ? (ext_model << 4) | base_model : base_model;
  return {family, model};
}

CpuIdentity read_cpu_identity() {
  CpuIdentity id;
#if defined(__x86_64__) || defined(__i386__)
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d) == 0) return id;
  char vendor[13] = {};
  // Leaf 0 spells the vendor in EBX, EDX, ECX order.
  for (int i = 0; i < 4; ++i) {
    vendor[i] = static_cast<char>((b >> (8 * i)) & 0xFF);
    vendor[4 + i] = static_cast<char>((d >> (8 * i)) & 0xFF);
    vendor[8 + i] = static_cast<char>((c >> (8 * i)) & 0xFF);
  }
  id.vendor = vendor;
  if (__get_cpuid(1, &a, &b, &c, &d) == 0) return id;
  std::tie(id.family, id.model) = decode_family_model(a);
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) != 0) {
    if (b & (1u << 16)) id.features |= kAvx512F;
    if (d & (1u << 23)) id.features |= kAvx512Fp16;
    if (d & (1u << 24)) id.features |= kAmxTile;
  }
#endif
  return id;
}

namespace {

constexpr const char* kAmd = "AuthenticAMD";
constexpr const char* kIntel = "GenuineIntel";

constexpr FpUnits no_avx512{0, 0, 0, "this core has no AVX-512"};

// Sources named once, quoted by the rows.
constexpr const char* kIntelOrm = "Intel 64 and IA-32 Architectures Optimization Reference Manual (order no. 248966)";
constexpr const char* kSkuRule =
    "1 or 2 512-bit FMA units per core depending on the SKU, which CPUID does not report "
    "(Intel ARK lists '# of AVX-512 FMA Units' per SKU; the Optimization Reference Manual gives a "
    "timing test); build with -DROOFPROBE_CPU_ARCH=x86-64-v3 for a 256-bit figure";
constexpr FpUnits sku_dependent_avx512{0, 0, 0, kSkuRule, true};

constexpr unsigned kPreAvx512 = kAvx512F | kAvx512Fp16 | kAmxTile;
constexpr unsigned kPreFp16 = kAvx512Fp16 | kAmxTile;

// ---- AMD (model ranges as Linux arch/x86/kernel/cpu/amd.c assigns Zen generations) ----
void add_amd_rows(std::vector<UarchRow>& t) {
  // Zen/Zen+: four 128-bit FP pipes, FP0/FP1 FMUL/FMA, FP2/FP3 FADD; 256-bit ops split in two.
  t.push_back({kAmd,
               0x17,
               {{0x00, 0x2F}, {0x50, 0x5F}},
               "AMD Zen / Zen+",
               {128, 2, 2},
               {128, 2, 2},
               no_avx512,
               "AMD Software Optimization Guide for AMD Family 17h Processors (pub. 55723), "
               "ch. 2 'Floating-Point Unit'; Agner Fog microarchitecture.pdf, 'AMD Zen'",
               kPreAvx512});
  t.push_back({kAmd,
               0x17,
               {{0x30, 0x4F}, {0x60, 0x7F}, {0x90, 0x91}, {0xA0, 0xAF}},
               "AMD Zen 2",
               {128, 2, 2},
               {256, 2, 2},
               no_avx512,
               "AMD Software Optimization Guide for AMD Family 17h Models 30h and Greater "
               "(pub. 56305), ch. 2 'Floating-Point Unit': 256-bit FP0/FP1 FMA, FP2/FP3 FADD",
               kPreAvx512});
  t.push_back({kAmd,
               0x19,
               {{0x00, 0x0F}, {0x20, 0x5F}},
               "AMD Zen 3",
               {128, 2, 2},
               {256, 2, 2},
               no_avx512,
               "AMD Software Optimization Guide for AMD Family 19h Processors (pub. 56665), "
               "ch. 2 'Floating-Point Unit': 256-bit FP0/FP1 FMA, FP2/FP3 FADD",
               kPreAvx512});
  // Zen 4 runs AVX-512 on the same 256-bit pipes, one 512-bit op in two halves.
  t.push_back({kAmd,
               0x19,
               {{0x10, 0x1F}, {0x60, 0xAF}},
               "AMD Zen 4",
               {128, 2, 2},
               {256, 2, 2},
               {256, 2, 2},
               "AMD Software Optimization Guide for the AMD Zen4 Microarchitecture (pub. 57647), "
               "ch. 2 'Floating-Point Unit' (512-bit ops on 256-bit FP0/FP1 FMA, FP2/FP3 FADD); "
               "Chips and Cheese, 'AMD's Zen 4 Part 1: Frontend and Execution Engine' (2022); "
               "A. Yee, 'Zen4's AVX512 Teardown' (numberworld.org, 2022)",
               kPreFp16});
  // Zen 5 desktop (Granite Ridge) and server (Turin): full 512-bit pipes.
  t.push_back({kAmd,
               0x1A,
               {{0x00, 0x0F}, {0x40, 0x4F}},
               "AMD Zen 5 (Turin, Granite Ridge)",
               {128, 2, 2},
               {256, 2, 2},
               {512, 2, 2},
               "AMD Software Optimization Guide for the AMD Zen5 Microarchitecture (pub. 58455), "
               "ch. 2 'Floating-Point Unit'; A. Yee, 'Zen5's AVX512 Teardown' (numberworld.org, 2024)",
               kAmxTile});
  // Zen 5 mobile (Strix Point) keeps Zen 4's 256-bit datapath for 512-bit ops.
  t.push_back({kAmd,
               0x1A,
               {{0x20, 0x2F}},
               "AMD Zen 5 mobile (Strix Point)",
               {128, 2, 2},
               {256, 2, 2},
               {256, 2, 2},
               "Chips and Cheese, 'AMD's Strix Point: Zen 5 Hits Mobile' (2024): 512-bit ops on "
               "256-bit pipes as in Zen 4; A. Yee, 'Zen5's AVX512 Teardown' (numberworld.org, 2024)",
               kAmxTile});
  t.push_back({kAmd,
               0x1A,
               {{0x10, 0x1F}, {0x60, 0x7F}},
               "AMD Zen 5 (Turin dense, Krackan, Strix Halo)",
               {128, 2, 2},
               {256, 2, 2},
               {0, 0, 0,
                "Zen 5 parts differ in AVX-512 datapath width (512-bit on Granite Ridge/"
                "Turin, 256-bit on Strix Point) and no source in this table covers these models"},
               "AMD Software Optimization Guide for the AMD Zen5 Microarchitecture (pub. 58455), "
               "ch. 2 'Floating-Point Unit' (256-bit figures)",
               kAmxTile});
}

// ---- Intel family 6 (model numbers as Linux arch/x86/include/asm/intel-family.h) ----
void add_intel_hybrid_rows(std::vector<UarchRow>& t) {
  constexpr const char* hybrid =
      "hybrid part: P-cores and E-cores have different FP units, so the peak depends on which "
      "cores the threads land on";
  t.push_back({kIntel,
               6,
               {{0x97, 0x97},
                {0x9A, 0x9A},
                {0xB7, 0xB7},
                {0xBA, 0xBA},
                {0xBF, 0xBF},
                {0xAA, 0xAA},
                {0xAC, 0xAC},
                {0xBD, 0xBD},
                {0xC5, 0xC6}},
               "Intel hybrid client (Alder/Raptor/Meteor/Lunar/Arrow Lake)",
               {0, 0, 0, hybrid},
               {0, 0, 0, hybrid},
               {0, 0, 0, hybrid},
               kIntelOrm,
               kAmxTile});
}

void add_intel_rows(std::vector<UarchRow>& t) {
  // Haswell/Broadwell: FMA on ports 0 and 1, FADD on port 1 only (min(2f, f + a) = 2 holds).
  t.push_back({kIntel,
               6,
               {{0x3C, 0x3C}, {0x3F, 0x3F}, {0x45, 0x46}, {0x3D, 0x3D}, {0x47, 0x47}, {0x4F, 0x4F}, {0x56, 0x56}},
               "Intel Haswell / Broadwell",
               {128, 2, 0},
               {256, 2, 0},
               no_avx512,
               "Intel 64 and IA-32 Architectures Optimization Reference Manual (248966), Haswell "
               "microarchitecture: FMA on ports 0 and 1; Agner Fog microarchitecture.pdf, 'Haswell'",
               kPreAvx512});
  t.push_back({kIntel,
               6,
               {{0x4E, 0x4E}, {0x5E, 0x5E}, {0x8E, 0x8E}, {0x9E, 0x9E}, {0xA5, 0xA6}},
               "Intel Skylake client (Kaby/Coffee/Comet Lake)",
               {128, 2, 0},
               {256, 2, 0},
               no_avx512,
               "Intel Optimization Reference Manual (248966), Skylake client microarchitecture: "
               "FMA/FMUL/FADD on ports 0 and 1; Agner Fog microarchitecture.pdf, 'Skylake'",
               kPreAvx512});
  t.push_back({kIntel,
               6,
               {{0x55, 0x55}},
               "Intel Skylake-SP / Cascade Lake / Cooper Lake",
               {128, 2, 0},
               {256, 2, 0},
               sku_dependent_avx512,
               "Intel Optimization Reference Manual (248966), Skylake server microarchitecture "
               "(ports 0+1 fused for 512-bit, port 5 FMA on some SKUs); Agner Fog microarchitecture.pdf",
               kPreFp16});
  t.push_back({kIntel,
               6,
               {{0x7D, 0x7E}, {0x8C, 0x8D}, {0xA7, 0xA7}},
               "Intel Ice Lake / Tiger Lake / Rocket Lake client",
               {128, 2, 0},
               {256, 2, 0},
               {512, 1, 0},
               "Intel Optimization Reference Manual (248966), Ice Lake client microarchitecture: one "
               "512-bit FMA (ports 0+1 fused), no port-5 FMA; Agner Fog microarchitecture.pdf, 'Ice Lake'",
               kPreFp16});
  t.push_back({kIntel,
               6,
               {{0x6A, 0x6A}, {0x6C, 0x6C}},
               "Intel Ice Lake-SP / Ice Lake-D",
               {128, 2, 0},
               {256, 2, 0},
               sku_dependent_avx512,
               "Intel Optimization Reference Manual (248966), Ice Lake server; Intel ARK",
               kPreFp16});
  // Golden Cove servers: FMA on ports 0/1, FADD units on ports 1/5 (port 5 a pipe of its own).
  t.push_back({kIntel,
               6,
               {{0x8F, 0x8F}, {0xCF, 0xCF}},
               "Intel Sapphire Rapids / Emerald Rapids",
               {128, 2, 1},
               {256, 2, 1},
               sku_dependent_avx512,
               "Intel Optimization Reference Manual (248966), Golden Cove microarchitecture (FADD on "
               "ports 1 and 5); Chips and Cheese, 'Popping the Hood on Golden Cove' (2021)"});
}

const std::vector<UarchRow>& build_table() {
  static const std::vector<UarchRow> table = [] {
    std::vector<UarchRow> t;
    add_amd_rows(t);
    add_intel_rows(t);
    add_intel_hybrid_rows(t);
    return t;
  }();
  return table;
}

std::string hex(int v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%X", v);
  return buf;
}

std::string fmt(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

const std::vector<UarchRow>& uarch_table() { return build_table(); }

namespace {

const UarchRow* row_by_model(const CpuIdentity& id) {
  for (const UarchRow& row : uarch_table()) {
    if (id.vendor != row.vendor || id.family != row.family) continue;
    for (auto [lo, hi] : row.models)
      if (id.model >= lo && id.model <= hi) return &row;
  }
  return nullptr;
}

// Intel cores with AMX are the Xeon P-cores from Sapphire Rapids on (Golden Cove, Raptor Cove,
// Redwood Cove): FMA on ports 0 and 1, FADD also on port 5 for 128/256-bit; 512-bit ops on the
// fused port 0+1 and, on SKUs with a second unit, port 5. Reached by the ISA alone, where the
// model number is not in the table or contradicts the ISA.
const UarchRow& amx_xeon_row() {
  static const UarchRow row{kIntel,
                            6,
                            {},
                            "Intel Xeon core with AMX (Sapphire Rapids or later), identified by its ISA",
                            {128, 2, 1},
                            {256, 2, 1},
                            sku_dependent_avx512,
                            "Intel Optimization Reference Manual (248966), Golden Cove and Redwood Cove "
                            "microarchitectures (FMA on ports 0/1, FADD on ports 1 and 5; 512-bit on ports "
                            "0+1 fused and 5); Intel SDM vol. 2A, CPUID leaf 7 (AMX-TILE: EDX bit 24)",
                            0};
  return row;
}

const UarchRow* row_by_isa(const CpuIdentity& id) {
  if (id.vendor == kIntel && id.family == 6 && (id.features & kAmxTile) != 0) return &amx_xeon_row();
  return nullptr;
}

}  // namespace

const UarchRow* find_uarch(const CpuIdentity& id) {
  const UarchRow* row = row_by_model(id);
  return row != nullptr ? row : row_by_isa(id);
}

std::string describe_features(unsigned features) {
  std::string out;
  for (auto [bit, name] :
       {std::pair<unsigned, const char*>{kAvx512F, "AVX-512F"}, {kAvx512Fp16, "AVX512-FP16"}, {kAmxTile, "AMX"}})
    if ((features & bit) != 0) out += (out.empty() ? "" : ", ") + std::string(name);
  return out.empty() ? "none of AVX-512F, AVX512-FP16, AMX" : out;
}

// One unit: half the instruction rate, less where the 512-bit licence clock is lower (<= ~0.5).
// Two units: the same rate times the licence clocks' ratio (Skylake-SP's heavy AVX-512 clock is
// ~0.85 of its heavy AVX2 clock; Sapphire Rapids' nearly 1).
int fma_units_from_ratio(double ratio) {
  if (ratio >= 0.7 && ratio < 1.5) return 2;
  if (ratio > 0.25 && ratio <= 0.55) return 1;
  return 0;
}

void FmaRateRounds::add(double wide_rate, double narrow_rate) {
  const bool rose = wide_rate > best_wide_ * (1 + kSettled) || narrow_rate > best_narrow_ * (1 + kSettled);
  best_wide_ = std::max(best_wide_, wide_rate);
  best_narrow_ = std::max(best_narrow_, narrow_rate);
  ++rounds_;
  steady_rounds_ = rose ? 0 : steady_rounds_ + 1;
}

bool FmaRateRounds::done() const {
  if (rounds_ >= kMaxRounds) return true;
  return rounds_ >= kMinRounds && steady_rounds_ >= kSettledRounds && fma_units_from_ratio(ratio()) != 0;
}

std::string describe_identity(const CpuIdentity& id) {
  if (id.vendor.empty()) return "a CPU without x86 CPUID";
  const std::string who = id.vendor == kAmd ? "AMD" : id.vendor == kIntel ? "Intel" : id.vendor;
  return who + " family " + hex(id.family) + " model " + hex(id.model);
}

CorePeak core_peak(const CpuIdentity& id, int vector_bits, int element_bits, const Avx512FmaUnits& units) {
  CorePeak p;
  const UarchRow* row = find_uarch(id);
  std::string contradiction;
  if (row != nullptr && (id.features & row->lacks) != 0) {
    // The model number names cores without an extension this CPU has: it is not the silicon's.
    contradiction = "CPUID's " + describe_identity(id) + " names " + row->name + ", but the CPU reports " +
                    describe_features(id.features & row->lacks) +
                    ", which those cores lack (a hypervisor's model number)";
    row = row_by_isa(id);
    if (row == nullptr) {
      p.why_unknown = contradiction + ": the FMA pipe count and datapath width are unknown";
      return p;
    }
  }
  if (row == nullptr) {
    p.why_unknown = describe_identity(id) +
                    " is not in the microarchitecture table (kernels/cpu/uarch.cpp): its FMA pipe "
                    "count and datapath width are unknown";
    return p;
  }
  p.uarch = row->name;
  p.source = row->source;
  if (!contradiction.empty()) p.source += "; " + contradiction;
  FpUnits u = vector_bits >= 512 ? row->v512 : vector_bits >= 256 ? row->v256 : row->v128;
  std::string timed;
  if (vector_bits >= 512 && u.fma_units_by_sku && units.units > 0) {
    // 512-bit ops issue to the fused port 0+1 and, with a second unit, to port 5; FADDs go to
    // the same units, so no FADD-only pipe is left at this width.
    u = FpUnits{512, units.units, 0};
    char text[200];
    std::snprintf(text, sizeof text, "; %d 512-bit FMA unit%s per core by timing (%s: ratio %.2f)", units.units,
                  units.units == 1 ? "" : "s", units.method.c_str(), units.ratio);
    p.source += text;
  }
  if (u.unknown != nullptr || u.datapath_bits <= 0 || element_bits <= 0) {
    p.why_unknown = std::string(row->name) + " (" + describe_identity(id) + "), " + std::to_string(vector_bits) +
                    "-bit vectors: " + (u.unknown ? u.unknown : "no figure");
    if (u.fma_units_by_sku && !units.method.empty()) p.why_unknown += "; timing test: " + units.method;
    return p;
  }
  const int bits = std::min(u.datapath_bits, vector_bits);
  const double lanes = static_cast<double>(bits) / element_bits;
  const int mix_ops = std::min(2 * u.fma_pipes, u.fma_pipes + u.add_pipes);
  p.known = true;
  p.fma_flops_per_cycle = u.fma_pipes * lanes * 2;
  p.nofma_flops_per_cycle = mix_ops * lanes;
  const std::string width = "min(" + std::to_string(u.datapath_bits) + "-bit datapath, " + std::to_string(vector_bits) +
                            "-bit vectors) / " + std::to_string(element_bits) + "-bit lanes";
  p.fma_rule = std::to_string(u.fma_pipes) + " FMA pipes x " + width + " x 2 FLOP = " + fmt(p.fma_flops_per_cycle) +
               " FLOP/cycle/core";
  p.nofma_rule = "min(2 x " + std::to_string(u.fma_pipes) + " FMA, " + std::to_string(u.fma_pipes) + " FMA + " +
                 std::to_string(u.add_pipes) + " FADD-only) pipes x " + width +
                 " x 1 FLOP = " + fmt(p.nofma_flops_per_cycle) + " FLOP/cycle/core";
  return p;
}

}  // namespace roofprobe::cpu
