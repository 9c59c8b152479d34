// The microarchitecture table behind the CPU theoretical peaks: known cores give the documented
// FLOP/cycle, SKU-dependent and unknown parts give no value and a reason, rows do not overlap.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "kernels/contract/probe.hpp"
#include "kernels/cpu/core_clock.hpp"
#include "kernels/cpu/uarch.hpp"

namespace roofprobe::cpu {
namespace {

const CpuIdentity kGenoa{"AuthenticAMD", 0x19, 0x11};  // EPYC 9004 (this project's CI VM)

TEST(Uarch, DecodesFamilyAndModelFromCpuidSignatures) {
  EXPECT_EQ(decode_family_model(0x00A10F11), (std::pair<int, int>{0x19, 0x11}));  // Zen 4 Genoa
  EXPECT_EQ(decode_family_model(0x00A20F12), (std::pair<int, int>{0x19, 0x21}));  // Zen 3 Vermeer
  EXPECT_EQ(decode_family_model(0x00830F10), (std::pair<int, int>{0x17, 0x31}));  // Zen 2 Rome
  EXPECT_EQ(decode_family_model(0x00050654), (std::pair<int, int>{0x06, 0x55}));  // Skylake-SP
  EXPECT_EQ(decode_family_model(0x000806F8), (std::pair<int, int>{0x06, 0x8F}));  // Sapphire Rapids
  // Family 5 (Pentium): extended model is not used.
  EXPECT_EQ(decode_family_model(0x00010543), (std::pair<int, int>{0x05, 0x04}));
}

TEST(Uarch, Zen4RunsAvx512OnTwo256BitFmaPipes) {
  const CorePeak fp64 = core_peak(kGenoa, 512, 64);
  ASSERT_TRUE(fp64.known) << fp64.why_unknown;
  EXPECT_EQ(fp64.uarch, "AMD Zen 4");
  EXPECT_DOUBLE_EQ(fp64.fma_flops_per_cycle, 16);    // 2 pipes x 256/64 lanes x 2
  EXPECT_DOUBLE_EQ(fp64.nofma_flops_per_cycle, 16);  // FMULs on FP0/1, FADDs on FP2/3
  EXPECT_NE(fp64.fma_rule.find("256-bit datapath"), std::string::npos) << fp64.fma_rule;
  EXPECT_NE(fp64.source.find("57647"), std::string::npos) << fp64.source;
  EXPECT_DOUBLE_EQ(core_peak(kGenoa, 512, 32).fma_flops_per_cycle, 32);
  // The same core with AVX2 code: same FLOP/cycle, 512-bit vectors buy nothing on Zen 4.
  EXPECT_DOUBLE_EQ(core_peak(kGenoa, 256, 64).fma_flops_per_cycle, 16);
  EXPECT_DOUBLE_EQ(core_peak(kGenoa, 128, 64).fma_flops_per_cycle, 8);
}

TEST(Uarch, Zen5DesktopHas512BitPipesMobileDoesNot) {
  EXPECT_DOUBLE_EQ(core_peak({"AuthenticAMD", 0x1A, 0x44}, 512, 64).fma_flops_per_cycle, 32);  // Granite Ridge
  EXPECT_DOUBLE_EQ(core_peak({"AuthenticAMD", 0x1A, 0x02}, 512, 64).fma_flops_per_cycle, 32);  // Turin
  EXPECT_DOUBLE_EQ(core_peak({"AuthenticAMD", 0x1A, 0x24}, 512, 64).fma_flops_per_cycle, 16);  // Strix Point
  const CorePeak halo = core_peak({"AuthenticAMD", 0x1A, 0x70}, 512, 64);
  EXPECT_FALSE(halo.known);
  EXPECT_NE(halo.why_unknown.find("datapath"), std::string::npos) << halo.why_unknown;
  EXPECT_TRUE(core_peak({"AuthenticAMD", 0x1A, 0x70}, 256, 64).known);  // 256-bit is the same on all
}

TEST(Uarch, OlderZenAndIntelClientFigures) {
  EXPECT_DOUBLE_EQ(core_peak({"AuthenticAMD", 0x17, 0x01}, 256, 64).fma_flops_per_cycle, 8);   // Zen: 128-bit
  EXPECT_DOUBLE_EQ(core_peak({"AuthenticAMD", 0x17, 0x31}, 256, 64).fma_flops_per_cycle, 16);  // Zen 2
  EXPECT_DOUBLE_EQ(core_peak({"AuthenticAMD", 0x19, 0x01}, 256, 32).fma_flops_per_cycle, 32);  // Zen 3
  const CpuIdentity haswell{"GenuineIntel", 6, 0x3F};
  EXPECT_DOUBLE_EQ(core_peak(haswell, 256, 64).fma_flops_per_cycle, 16);
  EXPECT_DOUBLE_EQ(core_peak(haswell, 256, 64).nofma_flops_per_cycle, 8);  // one FADD port
  const CpuIdentity icelake_client{"GenuineIntel", 6, 0x7E};
  EXPECT_DOUBLE_EQ(core_peak(icelake_client, 512, 64).fma_flops_per_cycle, 16);  // one 512-bit FMA
  EXPECT_DOUBLE_EQ(core_peak(icelake_client, 256, 64).fma_flops_per_cycle, 16);
  const CpuIdentity spr{"GenuineIntel", 6, 0x8F};
  EXPECT_DOUBLE_EQ(core_peak(spr, 256, 64).nofma_flops_per_cycle, 12);  // FMUL p0/p1, FADD p1/p5
}

TEST(Uarch, SkuDependentAvx512GivesNoValueAndSaysWhy) {
  for (int model : {0x55, 0x6A, 0x8F}) {
    SCOPED_TRACE(model);
    const CpuIdentity xeon{"GenuineIntel", 6, model};
    const CorePeak p = core_peak(xeon, 512, 64);
    EXPECT_FALSE(p.known);
    EXPECT_DOUBLE_EQ(p.fma_flops_per_cycle, 0);
    EXPECT_NE(p.why_unknown.find("depending on the SKU"), std::string::npos) << p.why_unknown;
    EXPECT_TRUE(core_peak(xeon, 256, 64).known) << "AVX2 runs on ports 0 and 1 on every SKU";
  }
}

TEST(Uarch, SkuDependentAvx512TakesTheTimedUnitCount) {
  const CpuIdentity spr{"GenuineIntel", 6, 0x8F, kAvx512F | kAvx512Fp16 | kAmxTile};
  const CorePeak two = core_peak(spr, 512, 64, {2, 0.93, "timed"});
  ASSERT_TRUE(two.known) << two.why_unknown;
  EXPECT_DOUBLE_EQ(two.fma_flops_per_cycle, 32);    // 2 units x 8 lanes x 2
  EXPECT_DOUBLE_EQ(two.nofma_flops_per_cycle, 16);  // FMUL and FADD share the two units
  EXPECT_NE(two.source.find("2 512-bit FMA units per core by timing (timed: ratio 0.93)"), std::string::npos)
      << two.source;
  EXPECT_DOUBLE_EQ(core_peak(spr, 512, 32, {1, 0.5, "timed"}).fma_flops_per_cycle, 32);  // 1 unit x 16 x 2
  const CorePeak inconclusive = core_peak(spr, 512, 64, {0, 0.7, "timed, inconclusive"});
  EXPECT_FALSE(inconclusive.known);
  EXPECT_NE(inconclusive.why_unknown.find("timing test: timed, inconclusive"), std::string::npos)
      << inconclusive.why_unknown;
  // A core whose 512-bit figure does not depend on the SKU ignores a timed count.
  EXPECT_DOUBLE_EQ(core_peak(kGenoa, 512, 64, {2, 1.0, "timed"}).fma_flops_per_cycle, 16);
  EXPECT_DOUBLE_EQ(core_peak(spr, 256, 64, {1, 0.5, "timed"}).fma_flops_per_cycle, 16);  // AVX2: ports 0, 1
}

TEST(Uarch, FmaUnitsFromTheirThroughputRatio) {
  EXPECT_EQ(fma_units_from_ratio(0.93), 2);
  EXPECT_EQ(fma_units_from_ratio(1.02), 2);
  EXPECT_EQ(fma_units_from_ratio(0.5), 1);
  EXPECT_EQ(fma_units_from_ratio(0.75), 2);  // two units under a lower AVX-512 licence clock
  EXPECT_EQ(fma_units_from_ratio(0.62), 0);  // neither: no count
  EXPECT_EQ(fma_units_from_ratio(0), 0);
  EXPECT_EQ(fma_units_from_ratio(3), 0);
}

// A VM on an AMX Xeon was seen reporting model 0xA7 (Rocket Lake: one 512-bit FMA, no AMX): the
// table's row would have halved the peak. The ISA outranks the model number.
TEST(Uarch, AModelNumberTheIsaContradictsIsNotBelieved) {
  const CpuIdentity vm{"GenuineIntel", 6, 0xA7, kAvx512F | kAvx512Fp16 | kAmxTile};
  const CorePeak wide = core_peak(vm, 512, 64, {2, 0.92, "timed"});
  ASSERT_TRUE(wide.known) << wide.why_unknown;
  EXPECT_NE(wide.uarch.find("AMX"), std::string::npos) << wide.uarch;
  EXPECT_DOUBLE_EQ(wide.fma_flops_per_cycle, 32);
  EXPECT_NE(wide.source.find("names Intel Ice Lake / Tiger Lake / Rocket Lake client, but the CPU reports "
                             "AVX512-FP16, AMX, which those cores lack"),
            std::string::npos)
      << wide.source;
  EXPECT_FALSE(core_peak(vm, 512, 64).known);  // SKU-dependent until timed
  EXPECT_DOUBLE_EQ(core_peak(vm, 256, 64).nofma_flops_per_cycle, 12);
  // The same model number without AMX is what it says.
  EXPECT_DOUBLE_EQ(core_peak({"GenuineIntel", 6, 0xA7, kAvx512F}, 512, 64).fma_flops_per_cycle, 16);
  // A contradiction with no class to fall back on gives no value.
  const CorePeak zen3 = core_peak({"AuthenticAMD", 0x19, 0x01, kAvx512F}, 256, 64);
  EXPECT_FALSE(zen3.known);
  EXPECT_NE(zen3.why_unknown.find("reports AVX-512F, which those cores lack"), std::string::npos) << zen3.why_unknown;
  // An unknown Intel model number with AMX is the same class.
  EXPECT_TRUE(core_peak({"GenuineIntel", 6, 0xAD, kAvx512F | kAmxTile}, 256, 64).known);
  EXPECT_FALSE(core_peak({"GenuineIntel", 6, 0xAD, kAvx512F}, 256, 64).known);
}

// Rates as FMA instructions per ns; a two-unit core runs both widths at 4.
TEST(FmaRateRounds, AQuietCoreStopsAfterTheMinimumWithItsRatio) {
  FmaRateRounds rounds;
  for (int i = 0; i < FmaRateRounds::kMinRounds - 1; ++i) {
    rounds.add(4.0, 4.0);
    EXPECT_FALSE(rounds.done()) << rounds.rounds();
  }
  rounds.add(4.0, 4.0);
  EXPECT_TRUE(rounds.done());
  EXPECT_EQ(rounds.rounds(), FmaRateRounds::kMinRounds);
  EXPECT_DOUBLE_EQ(rounds.ratio(), 1.0);
}

TEST(FmaRateRounds, ABusySpellOnOneWidthIsOutlastedNotRead) {
  // The 512-bit try of the first rounds lost 31% to another tenant: 0.69 alone is neither count.
  FmaRateRounds rounds;
  for (int i = 0; i < FmaRateRounds::kMinRounds; ++i) rounds.add(2.76, 4.0);
  EXPECT_FALSE(rounds.done());
  EXPECT_EQ(fma_units_from_ratio(rounds.ratio()), 0);
  rounds.add(3.9, 3.2);  // the spell ends for the wide try and begins for the narrow one
  EXPECT_FALSE(rounds.done()) << "the wide best just rose";
  rounds.add(3.95, 4.0);
  EXPECT_FALSE(rounds.done()) << "one steady round is not yet settled";
  rounds.add(3.9, 3.9);
  EXPECT_TRUE(rounds.done());
  EXPECT_NEAR(rounds.ratio(), 3.95 / 4.0, 1e-12);
  EXPECT_EQ(fma_units_from_ratio(rounds.ratio()), 2);
  // A one-unit core (wide at half the narrow rate) disturbed on its narrow try is not read as two.
  FmaRateRounds one_unit;
  one_unit.add(2.0, 2.8);  // narrow slowed: 0.71 would say two units
  for (int i = 0; i < 3; ++i) one_unit.add(2.0, 4.0);
  EXPECT_TRUE(one_unit.done());
  EXPECT_EQ(fma_units_from_ratio(one_unit.ratio()), 1);
}

TEST(FmaRateRounds, RatesThatNeverSettleOrSettleBetweenCountsStopAtTheCap) {
  FmaRateRounds rising;  // a clock ramping up by 3% a round
  double rate = 2.0;
  while (!rising.done()) {
    rising.add(rate, rate);
    rate *= 1.03;
    ASSERT_LE(rising.rounds(), FmaRateRounds::kMaxRounds);
  }
  EXPECT_EQ(rising.rounds(), FmaRateRounds::kMaxRounds);
  FmaRateRounds between;  // steady at 0.62: measured, but neither count
  while (!between.done()) between.add(2.48, 4.0);
  EXPECT_EQ(between.rounds(), FmaRateRounds::kMaxRounds);
  EXPECT_EQ(fma_units_from_ratio(between.ratio()), 0);
  EXPECT_DOUBLE_EQ(FmaRateRounds().ratio(), 0) << "no rounds, no ratio";
}

TEST(FmaUnits, ThisMachinesCountIsTimedWhereItHasAvx512) {
  const Avx512FmaUnits units = time_avx512_fma_units();
  EXPECT_FALSE(units.method.empty());
#if defined(__x86_64__)
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << units.method;
  // 512-bit FMAs run at most as fast as 256-bit ones (per instruction) and at least at half.
  EXPECT_GT(units.ratio, 0.3);
  EXPECT_LT(units.ratio, 1.3);
  EXPECT_NE(units.method.find("best of "), std::string::npos) << units.method;
  std::printf("512/256-bit FMA throughput ratio %.3f -> %d units; %s\n", units.ratio, units.units,
              units.method.c_str());
#endif
}

TEST(Uarch, UnknownAndHybridPartsGiveNoValue) {
  const CorePeak zen6 = core_peak({"AuthenticAMD", 0x1A, 0x50}, 512, 64);
  EXPECT_FALSE(zen6.known);
  EXPECT_NE(zen6.why_unknown.find("AMD family 0x1A model 0x50 is not in the microarchitecture table"),
            std::string::npos)
      << zen6.why_unknown;
  EXPECT_FALSE(core_peak({"HygonGenuine", 0x18, 0x00}, 256, 64).known);
  EXPECT_FALSE(core_peak({"", -1, -1}, 128, 64).known);
  const CorePeak alder = core_peak({"GenuineIntel", 6, 0x97}, 256, 64);
  EXPECT_FALSE(alder.known);
  EXPECT_NE(alder.why_unknown.find("hybrid"), std::string::npos) << alder.why_unknown;
  const CorePeak zen3_avx512 = core_peak({"AuthenticAMD", 0x19, 0x01}, 512, 64);
  EXPECT_FALSE(zen3_avx512.known);
  EXPECT_NE(zen3_avx512.why_unknown.find("no AVX-512"), std::string::npos);
}

// Every (vendor, family, model) matches at most one row, and every row names its source.
TEST(Uarch, RowsDoNotOverlapAndCiteSources) {
  const auto& table = uarch_table();
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_GT(std::string(table[i].source).size(), 20u) << table[i].name;
    for (auto [lo, hi] : table[i].models) {
      ASSERT_LE(lo, hi) << table[i].name;
      for (int m = lo; m <= hi; ++m) {
        const UarchRow* found = find_uarch({table[i].vendor, table[i].family, m});
        EXPECT_EQ(found, &table[i]) << table[i].name << " model " << m << " also matches "
                                    << (found ? found->name : "nothing");
      }
    }
  }
}

TEST(Uarch, ThisMachineHasAnIdentity) {
#if defined(__x86_64__)
  const CpuIdentity id = read_cpu_identity();
  EXPECT_FALSE(id.vendor.empty());
  EXPECT_GT(id.family, 0);
  EXPECT_GE(id.model, 0);
#else
  GTEST_SKIP() << "CPUID is x86-only";
#endif
}

// The CPU backend writes either peaks with their rule and source, or the reason there are none.
TEST(CpuBackendPeaks, EitherSourcedPeaksOrAReason) {
  DeviceInfo d = Registry::instance().backend("cpu")->describe(2);
  ASSERT_GT(d.clock_measured_mhz, 100);
  ASSERT_TRUE(d.extra.count("clock_method"));
  EXPECT_FALSE(d.extra.at("clock_method").empty());
  // The probes' vector width (they are built with -march=native, this test is not).
  // ... and the 512-bit FMA unit count the backend timed, where the SKU decides it.
  Avx512FmaUnits units;
  if (d.extra.count("avx512_fma_units")) units.units = std::stoi(d.extra.at("avx512_fma_units"));
  const CorePeak expected = core_peak(read_cpu_identity(), 8 * std::stoi(d.extra.at("simd_bytes")), 64, units);
  if (expected.known) {
    ASSERT_TRUE(d.theoretical_gflops.count("FP64.FMA"));
    EXPECT_NEAR(d.theoretical_gflops.at("FP64.FMA"),
                d.compute_units * expected.fma_flops_per_cycle * d.clock_measured_mhz / 1000, 1e-6);
    EXPECT_NE(d.theoretical_basis.at("FP64.FMA").find("source: "), std::string::npos);
    EXPECT_EQ(d.extra.count("theoretical_unknown"), 0u);
  } else {
    EXPECT_TRUE(d.theoretical_gflops.empty());
    // Where the SKU decides the count and the backend's timing was inconclusive (a core shared
    // with another job can give a ratio between ~0.5 and ~1), the reason ends with that timing's
    // own words and ratio, which this test cannot repeat: the rest of the reason must match.
    const std::string& why = d.extra.at("theoretical_unknown");
    ASSERT_EQ(why.substr(0, expected.why_unknown.size()), expected.why_unknown);
    const std::string timing = why.substr(expected.why_unknown.size());
    if (!timing.empty()) {
      EXPECT_EQ(timing.rfind("; timing test: ", 0), 0u) << timing;
      EXPECT_NE(timing.find("inconclusive"), std::string::npos) << timing;
    }
  }
}

#if defined(__x86_64__)
// A chain of dependent 64-bit multiplies (latency 3 on every x86-64 core since Core 2 and Zen):
// an independent reading of the clock for the add chain to agree with.
double imul_chain_mhz() {
  std::uint64_t x = 1;
  const std::uint64_t three = 3;
  constexpr long kIterations = 200000;
  double best = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    const double start = thread_cpu_seconds();
    for (long i = 0; i < kIterations; ++i)
      asm volatile("imul %1, %0\n\timul %1, %0\n\timul %1, %0\n\timul %1, %0\n\t" : "+r"(x) : "r"(three));
    const double seconds = thread_cpu_seconds() - start;
    if (seconds > 0) best = std::max(best, 3.0 * 4 * kIterations / seconds / 1e6);
  }
  return best;
}

// Golden Cove folds `add $1, reg` chains in the renamer: an immediate chain read 22 GHz.
// Each reading is the best of several, and more are taken while the two disagree: on a VM whose
// host runs something else beside it, a chain's CPU time can include stretches the vCPU did not
// run at full speed, which only ever lowers a reading. A chain that reads a wrong clock (the
// folded add) disagrees however many readings are taken.
TEST(CoreClock, AddChainAgreesWithAMultiplyChain) {
  double add = 0, mul = 0;
  for (int attempt = 0; attempt < 10; ++attempt) {
    add = std::max(add, chain_clock_mhz(0.005));
    mul = std::max(mul, imul_chain_mhz());
    if (attempt >= 2 && std::abs(add / mul - 1.0) <= 0.15) break;
  }
  EXPECT_NEAR(add / mul, 1.0, 0.15) << "add chain " << add << " MHz, imul chain " << mul << " MHz";
}
#endif

TEST(CoreClock, ChainAndLaunchClocksArePlausible) {
  const double mhz = chain_clock_mhz(0.002);
  EXPECT_GT(mhz, 200);
  EXPECT_LT(mhz, 10000);
  CoreClock clock;
  clock.open(2);
  EXPECT_FALSE(clock.method().empty());
  double during = 0;
  int launches = 0;
  const double seconds = clock.time([&] { ++launches; }, during);
  EXPECT_EQ(launches, 1);
  EXPECT_GE(seconds, 0);
  EXPECT_GT(during, 200);
  EXPECT_LT(during, 10000);
  clock.time([&] { ++launches; }, during, ChainLoad::vector_fma);
  EXPECT_EQ(launches, 2);
  EXPECT_GT(during, 200);
  EXPECT_LT(during, 10000);
}

// Among vector FMAs the adds stay the critical path: the chain reads the clock of a core doing
// vector work (an AVX-512 licence takes up to ~20% off the scalar clock on Intel cores), not the
// FMA rate. With FMAs as the limit it would read a fraction of the clock (a quarter of it with
// one 512-bit FMA pipe, if there were as many FMAs as adds).
TEST(CoreClock, VectorLoadedChainReadsTheClockNotTheFmaRate) {
  double scalar = 0, vector = 0;
  for (int attempt = 0; attempt < 3; ++attempt)
    scalar = std::max(scalar, chain_clock_mhz(0.005)),
    vector = std::max(vector, chain_clock_mhz(0.005, ChainLoad::vector_fma));
  EXPECT_GT(vector / scalar, 0.7) << "vector-loaded " << vector << " MHz, scalar " << scalar << " MHz";
  EXPECT_LT(vector / scalar, 1.15) << "vector-loaded " << vector << " MHz, scalar " << scalar << " MHz";
}

}  // namespace
}  // namespace roofprobe::cpu
