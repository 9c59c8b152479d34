// The microarchitecture table behind the CPU theoretical peaks: known cores give the documented
// FLOP/cycle, SKU-dependent and unknown parts give no value and a reason, rows do not overlap.
#include <gtest/gtest.h>

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
  const CorePeak expected = core_peak(read_cpu_identity(), 8 * std::stoi(d.extra.at("simd_bytes")), 64);
  if (expected.known) {
    ASSERT_TRUE(d.theoretical_gflops.count("FP64.FMA"));
    EXPECT_NEAR(d.theoretical_gflops.at("FP64.FMA"),
                d.compute_units * expected.fma_flops_per_cycle * d.clock_measured_mhz / 1000, 1e-6);
    EXPECT_NE(d.theoretical_basis.at("FP64.FMA").find("source: "), std::string::npos);
    EXPECT_EQ(d.extra.count("theoretical_unknown"), 0u);
  } else {
    EXPECT_TRUE(d.theoretical_gflops.empty());
    EXPECT_EQ(d.extra.at("theoretical_unknown"), expected.why_unknown);
  }
}

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
}

}  // namespace
}  // namespace roofprobe::cpu
