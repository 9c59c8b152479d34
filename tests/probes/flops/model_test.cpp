// Host tests of the CUDA FLOP probe's fp16 / bf16 / int32 precisions: the FLOP accounting of a
// packed element, the starting values the kernel writes, the host models verify() uses (the
// 16-bit chains with an independent rounding to 11 / 8 significand bits; the int32 affine-map
// shortcut against plain iteration), and the per-architecture rates behind the theoretical peaks
// against published figures. Plain C++: no CUDA header.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/flop_chain.hpp"
#include "kernels/cuda/backend/gpu_arith_rates.hpp"
#include "kernels/cuda/backend/stream_pattern.hpp"
#include "kernels/cuda/flops/model.hpp"

namespace roofprobe {
namespace {

// ---- independent 16-bit formats (normal numbers only: the chains stay in [0.5, 8]) -----------
double round_to_significand_bits(double v, int bits) {
  int e = 0;
  const double m = std::frexp(v, &e);                                // v = m 2^e, m in [0.5, 1)
  return std::ldexp(std::nearbyint(std::ldexp(m, bits)), e - bits);  // ties to even
}

// The probe's rounding (kernels/cuda/flops/probe.cu) goes through float (cuda_fp16.h's host-callable conversions)
// and refuses values float cannot hold; every intermediate the chains reach must be one it can.
void expect_exact_in_float(double v) {
  EXPECT_EQ(static_cast<double>(static_cast<float>(v)), v) << "intermediate not exact in float";
}

struct TestFp16 {
  static double to_format(double v) {
    EXPECT_TRUE(std::fabs(v) >= std::ldexp(1.0, -14) && std::fabs(v) <= 65504) << v;
    expect_exact_in_float(v);
    return round_to_significand_bits(v, 11);
  }
  static double decode(std::uint16_t bits) {
    const int e = (bits >> 10) & 31;
    EXPECT_TRUE(e != 0 && e != 31) << "not a normal fp16 number: " << bits;
    return std::ldexp(1024 + (bits & 1023), e - 25) * ((bits & 0x8000) ? -1 : 1);
  }
};

struct TestBf16 {
  static double to_format(double v) {
    expect_exact_in_float(v);
    return round_to_significand_bits(v, 8);
  }
  static double decode(std::uint16_t bits) {
    const int e = (bits >> 7) & 255;
    EXPECT_TRUE(e != 0 && e != 255) << "not a normal bf16 number: " << bits;
    return std::ldexp(128 + (bits & 127), e - 134) * ((bits & 0x8000) ? -1 : 1);
  }
};

// ---- FLOP accounting ------------------------------------------------------------------------
TEST(FlopsPrecisions, PackedElementsCountFlopsPerSixteenBitValue) {
  // One f16x2 word gets the chain of K in each lane: K/2 packed FMAs x 2 lanes x 2 FLOPs.
  EXPECT_EQ(chain_flops_per_word(64, 2), 128.0);
  EXPECT_EQ(chain_flops_per_word(64, 2), 2 * chain_fma_ops(64, FlopForm::Fma) * 2);
  EXPECT_EQ(chain_flops_per_word(1, 2), 2.0);  // the single add, in both lanes
  // noFMA: K/2 packed multiplies + K/2 packed adds, 2 lanes, 1 FLOP each.
  EXPECT_EQ(chain_flops_per_word(64, 2),
            2.0 * (chain_mul_ops(64, FlopForm::NoFma) + chain_add_ops(64, FlopForm::NoFma)));
  // Scalars (fp64, fp32, int32 with a mad counted as 2 ops) are words of one lane.
  EXPECT_EQ(chain_flops_per_word(1024, 1), 1024.0);
  // Intensity per byte moved is that of a scalar 16-bit value: K FLOPs per 2 bytes each way.
  EXPECT_EQ(chain_flops_per_word(64, 2) / 4, 64.0 / 2);
}

// ---- starting values ------------------------------------------------------------------------
template <class Format>
void expect_initial_words(Half16 kind) {
  for (std::size_t w = 0; w < 300; ++w) {
    const std::uint32_t word = half16_initial_word(w, kind);
    const double lo = Format::decode(static_cast<std::uint16_t>(word & 0xFFFF));
    const double hi = Format::decode(static_cast<std::uint16_t>(word >> 16));
    EXPECT_EQ(lo, half16_initial_lane(w, 0)) << w;
    EXPECT_EQ(hi, half16_initial_lane(w, 1)) << w;
    EXPECT_NE(lo, hi) << w;  // swapped lanes would show
    EXPECT_GE(lo, 1.0);
    EXPECT_LT(hi, 2.0);
    if (w % 64 != 63) EXPECT_NE(half16_initial_word(w + 1, kind), word) << w;
  }
  EXPECT_EQ(half16_initial_word(0, kind), half16_initial_word(64, kind));  // period 64 words
}

TEST(FlopsPrecisions, SixteenBitStartingValuesAreExact) {
  expect_initial_words<TestFp16>(Half16::Fp16);
  expect_initial_words<TestBf16>(Half16::Bf16);
  EXPECT_EQ(half16_initial_word(0, Half16::Fp16), 0x3C083C00u);  // {1.0, 1 + 1/128}
  EXPECT_EQ(half16_initial_word(0, Half16::Bf16), 0x3F813F80u);
}

TEST(FlopsPrecisions, Int32StartingValuesDiffer) {
  for (std::size_t i = 0; i < 1000; ++i) EXPECT_NE(int32_initial_value(i), int32_initial_value(i + 1)) << i;
}

TEST(FlopsPrecisions, SixteenBitConstantsAreRepresentable) {
  EXPECT_EQ(TestFp16::to_format(kChainFp16A), kChainFp16A);
  EXPECT_EQ(TestFp16::to_format(kChainFp16B), kChainFp16B);
  EXPECT_EQ(TestBf16::to_format(kChainBf16A), kChainBf16A);
  EXPECT_EQ(TestBf16::to_format(kChainBf16B), kChainBf16B);
  EXPECT_LT(kChainFp16A, 1.0);
  EXPECT_LT(kChainBf16A, 1.0);
  // The largest values below 1: one unit in the last place (2^-11, 2^-8) further is 1.
  EXPECT_EQ(kChainFp16A + std::ldexp(1.0, -11), 1.0);
  EXPECT_EQ(kChainBf16A + std::ldexp(1.0, -8), 1.0);
}

// ---- the 16-bit host model ------------------------------------------------------------------
// Passes of the chain of K from x until it stops changing (at most `limit`).
template <class Format, int K, FlopForm Form>
long long passes_to_fixed_point(HalfLanes& x, HalfLanes a, HalfLanes b, long long limit) {
  for (long long p = 0; p < limit; ++p) {
    const HalfLanes next = flop_chain<K, Form, HalfLaneOps<Format>>(x, a, b);
    if (next == x) return p;
    x = next;
  }
  return limit;
}

template <class Format, int K, FlopForm Form>
void expect_chain_settles(double a, double b, const char* what) {
  const HalfLanes av{a, a}, bv{b, b};
  for (std::size_t w = 0; w < 64; ++w) {  // all 128 starting values
    HalfLanes x{half16_initial_lane(w, 0), half16_initial_lane(w, 1)};
    long long passes = 0;
    ASSERT_NO_THROW((passes = passes_to_fixed_point<Format, K, Form>(x, av, bv, 100000)))
        << what << " K=" << K << ": the model's intermediates must be exact";
    // A fixed point within a bounded number of passes keeps verify() cheap.
    EXPECT_LT(passes, 100000) << what << " K=" << K << " word " << w;
    EXPECT_TRUE(std::isfinite(x.lo) && std::isfinite(x.hi));
    // Far from every starting value: a kernel that skipped the chain would show.
    EXPECT_GE(x.lo, 2.0) << what << " K=" << K;
    EXPECT_GE(x.hi, 2.0) << what << " K=" << K;
    EXPECT_LE(x.lo, 4.0) << what << " K=" << K;
  }
}

template <class Format>
void expect_all_chains_settle(double a, double b, const char* what) {
  expect_chain_settles<Format, 1, FlopForm::Fma>(a, b, what);
  expect_chain_settles<Format, 2, FlopForm::Fma>(a, b, what);
  expect_chain_settles<Format, 2, FlopForm::NoFma>(a, b, what);
  expect_chain_settles<Format, 8, FlopForm::Fma>(a, b, what);
  expect_chain_settles<Format, 8, FlopForm::NoFma>(a, b, what);
  expect_chain_settles<Format, 64, FlopForm::Fma>(a, b, what);
  expect_chain_settles<Format, 64, FlopForm::NoFma>(a, b, what);
  expect_chain_settles<Format, 1024, FlopForm::Fma>(a, b, what);
  expect_chain_settles<Format, 1024, FlopForm::NoFma>(a, b, what);
}

TEST(FlopsPrecisions, SixteenBitChainsStayFiniteAndSettle) {
  expect_all_chains_settle<TestFp16>(kChainFp16A, kChainFp16B, "fp16");
  expect_all_chains_settle<TestBf16>(kChainBf16A, kChainBf16B, "bf16");
}

// "Changing for a while": from x = 1 the chain moves for many steps before it stalls, so short
// runs of passes give different results (and a pass count off by one shows early on).
template <class Format, FlopForm Form>
long long steps_before_stall(double a, double b) {
  HalfLanes x{1.0, 1.0};
  return passes_to_fixed_point<Format, 2, Form>(x, {a, a}, {b, b}, 100000);
}

TEST(FlopsPrecisions, SixteenBitChainsChangeForHundredsOfFlops) {
  const long long fp16_fma = steps_before_stall<TestFp16, FlopForm::Fma>(kChainFp16A, kChainFp16B);
  const long long fp16_nofma = steps_before_stall<TestFp16, FlopForm::NoFma>(kChainFp16A, kChainFp16B);
  const long long bf16_fma = steps_before_stall<TestBf16, FlopForm::Fma>(kChainBf16A, kChainBf16B);
  const long long bf16_nofma = steps_before_stall<TestBf16, FlopForm::NoFma>(kChainBf16A, kChainBf16B);
  std::printf("steps from 1.0 to the stall: fp16 fma %lld nofma %lld, bf16 fma %lld nofma %lld\n", fp16_fma, fp16_nofma,
              bf16_fma, bf16_nofma);
  // About one step per unit in the last place of [1, 2): 2^10 for fp16, 2^7 for bf16.
  EXPECT_GE(fp16_fma, 1000);
  EXPECT_GE(fp16_nofma, 1000);
  EXPECT_GE(bf16_fma, 120);
  EXPECT_GE(bf16_nofma, 120);
}

// The model rounds each operation once: an FMA differs from a rounded multiply then add where
// the product's rounding matters: x = 4 + 2^-8, x a = 4 + 2^-8 - 2^-9 - 2^-19 rounds to 4 alone,
// and 4 + 2^-9 ties to 4, while the fused x a + b = 4 + 2^-8 - 2^-19 rounds to 4 + 2^-8.
TEST(FlopsPrecisions, SixteenBitModelRoundsOncePerOperation) {
  using Ops = HalfLaneOps<TestFp16>;
  const double x0 = 4 + std::ldexp(1.0, -8);
  const HalfLanes x{x0, 1.5}, a{kChainFp16A, kChainFp16A}, b{kChainFp16B, kChainFp16B};
  const HalfLanes fused = Ops::fma(x, a, b);
  const HalfLanes separate = Ops::add(Ops::mul(x, a), b);
  EXPECT_EQ(fused.lo, x0);
  EXPECT_EQ(separate.lo, 4.0);
  EXPECT_EQ(fused.hi, round_to_significand_bits(1.5 * kChainFp16A + kChainFp16B, 11));
  // An intermediate that double cannot hold exactly is refused, not guessed.
  EXPECT_THROW(Ops::add({1.0, 1.0}, {std::ldexp(1.0, -60), 0.0}), std::logic_error);
}

// ---- the int32 host model -------------------------------------------------------------------
struct IntOps {
  static std::uint32_t fma(std::uint32_t x, std::uint32_t a, std::uint32_t b) { return x * a + b; }
  static std::uint32_t mul(std::uint32_t x, std::uint32_t a) { return x * a; }
  static std::uint32_t add(std::uint32_t x, std::uint32_t b) { return x + b; }
};

template <int K, FlopForm Form>
void expect_affine_model_matches_iteration() {
  const Affine32 pass = int32_chain_map(K, kChainInt32A, kChainInt32B);
  for (std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{12345}}) {
    std::uint32_t x = int32_initial_value(i);
    const std::uint32_t start = x;
    for (long long p = 1; p <= 40; ++p) {
      x = flop_chain<K, Form, IntOps>(x, kChainInt32A, kChainInt32B);
      ASSERT_EQ(affine_power(pass, static_cast<unsigned long long>(p))(start), x) << "K=" << K << " passes=" << p;
    }
  }
}

TEST(FlopsPrecisions, Int32AffineModelMatchesIteration) {
  expect_affine_model_matches_iteration<1, FlopForm::Fma>();
  expect_affine_model_matches_iteration<2, FlopForm::Fma>();
  expect_affine_model_matches_iteration<2, FlopForm::NoFma>();
  expect_affine_model_matches_iteration<64, FlopForm::Fma>();
  expect_affine_model_matches_iteration<64, FlopForm::NoFma>();
  expect_affine_model_matches_iteration<1024, FlopForm::NoFma>();
  // Large pass counts by squaring agree with plain repetition.
  const Affine32 pass = int32_chain_map(16, kChainInt32A, kChainInt32B);
  std::uint32_t x = 7;
  for (int p = 0; p < 100000; ++p) x = pass(x);
  EXPECT_EQ(affine_power(pass, 100000)(7), x);
  EXPECT_EQ(affine_power(pass, 0)(7), 7u);
}

TEST(FlopsPrecisions, Int32ChainNeverSettles) {
  // Every pass changes the value (no short cycle), so verify() checks the exact pass count.
  const Affine32 pass = int32_chain_map(64, kChainInt32A, kChainInt32B);
  std::uint32_t x = int32_initial_value(3);
  const std::uint32_t start = x;
  for (int p = 1; p <= 100000; ++p) {
    x = pass(x);
    ASSERT_NE(x, start) << "cycle of length " << p;
  }
}

// ---- arithmetic rates vs published peaks ----------------------------------------------------
struct PublishedPeak {
  const char* gpu;
  int major, minor, sms;
  double mhz;  // the clock the vendor's figure uses
  const char* ceiling;
  double tflops;  // vendor figure, non-tensor, dense
};

TEST(GpuArithRates, PeaksMatchPublishedFigures) {
  const PublishedPeak refs[] = {
      // clang-format off
      {"V100 SXM2", 7, 0, 80, 1530, "FP16.FMA", 31.4},    // V100 whitepaper
      {"V100 SXM2", 7, 0, 80, 1530, "INT32.FMA", 15.7},
      {"A100 SXM", 8, 0, 108, 1410, "FP16.FMA", 78},      // A100 whitepaper
      {"A100 SXM", 8, 0, 108, 1410, "BF16.FMA", 39},
      {"A100 SXM", 8, 0, 108, 1410, "INT32.FMA", 19.5},
      {"RTX 3090", 8, 6, 82, 1695, "FP16.FMA", 35.6},     // GA102 whitepaper
      {"RTX 3090", 8, 6, 82, 1695, "BF16.FMA", 35.6},
      {"RTX 4090", 8, 9, 128, 2520, "FP16.FMA", 82.6},    // AD102 whitepaper
      {"H100 SXM", 9, 0, 132, 1980, "FP16.FMA", 133.8},   // H100 whitepaper
      {"H100 SXM", 9, 0, 132, 1980, "BF16.FMA", 133.8},
      {"H100 SXM", 9, 0, 132, 1980, "INT32.FMA", 33.5},
      // clang-format on
  };
  for (const PublishedPeak& r : refs) {
    const auto peaks = gpu_arith_peaks(r.major, r.minor, r.sms, r.mhz, "nominal");
    const auto it = peaks.find(r.ceiling);
    ASSERT_NE(it, peaks.end()) << r.gpu << " " << r.ceiling;
    EXPECT_NEAR(it->second.gflops / 1000, r.tflops, 0.01 * r.tflops) << r.gpu << " " << r.ceiling;
    EXPECT_NE(it->second.basis.find("results/clk/SM"), std::string::npos) << it->second.basis;
  }
}

TEST(GpuArithRates, FormsAndUnknownArchitectures) {
  const auto h100 = gpu_arith_peaks(9, 0, 132, 1980, "measured");
  ASSERT_EQ(h100.size(), 6u);
  EXPECT_DOUBLE_EQ(h100.at("FP16.noFMA").gflops, h100.at("FP16.FMA").gflops / 2);
  EXPECT_DOUBLE_EQ(h100.at("BF16.noFMA").gflops, h100.at("BF16.FMA").gflops / 2);
  // int32 multiply (FMA pipe) and add (ALU pipe) overlap: noFMA is bounded like IMAD.
  EXPECT_DOUBLE_EQ(h100.at("INT32.noFMA").gflops, h100.at("INT32.FMA").gflops);
  EXPECT_NE(h100.at("FP16.FMA").basis.find("132 SMs x 256"), std::string::npos) << h100.at("FP16.FMA").basis;
  EXPECT_NE(h100.at("FP16.FMA").basis.find("Programming Guide"), std::string::npos);
  EXPECT_NE(h100.at("FP16.FMA").basis.find("1980.0 MHz (measured"), std::string::npos);

  // No bf16 arithmetic before 8.0: no BF16 ceilings.
  const auto v100 = gpu_arith_peaks(7, 0, 80, 1530, "measured");
  EXPECT_EQ(v100.count("BF16.FMA"), 0u);
  EXPECT_EQ(v100.count("FP16.FMA"), 1u);
  EXPECT_EQ(gpu_arith_rates(7, 5).bf16, 0);

  // Unknown rates and missing clocks give nothing rather than a guess (the row says why instead).
  EXPECT_TRUE(gpu_arith_peaks(12, 0, 170, 2400, "measured").empty());
  EXPECT_TRUE(gpu_arith_peaks(12, 3, 170, 2400, "measured").empty());  // no row at all
  const auto orin = gpu_arith_peaks(8, 7, 16, 1300, "measured");       // int32 known, 16-bit not
  EXPECT_EQ(orin.count("FP16.FMA") + orin.count("BF16.FMA"), 0u);
  EXPECT_EQ(orin.count("INT32.FMA"), 1u);
  EXPECT_EQ(gpu_arith_unknown(8, 7).count("FP16.FMA"), 1u);
  EXPECT_TRUE(gpu_arith_peaks(9, 0, 132, 0, "measured").empty());
}

TEST(GpuArithRates, ParsesComputeCapability) {
  int major = 0, minor = 0;
  EXPECT_TRUE(parse_compute_capability("9.0", major, minor));
  EXPECT_EQ(major, 9);
  EXPECT_EQ(minor, 0);
  EXPECT_TRUE(parse_compute_capability("12.1", major, minor));
  EXPECT_EQ(major, 12);
  EXPECT_EQ(minor, 1);
  EXPECT_FALSE(parse_compute_capability("", major, minor));
  EXPECT_FALSE(parse_compute_capability("9", major, minor));
  EXPECT_FALSE(parse_compute_capability("9.0a", major, minor));
  EXPECT_FALSE(parse_compute_capability("sm_90", major, minor));
}

// ---- FLOP probe layout ----------------------------------------------------------------------
TEST(FlopTiles, EveryElementExactlyOncePerPass) {
  const int block = 64, ilp = 8;
  for (int tiles : {1, 5, 12}) {
    for (int grid : {1, 3, 4, 12}) {
      std::vector<int> touched(static_cast<std::size_t>(tiles) * block * ilp, 0);
      for (int b = 0; b < grid; ++b) {
        for (int tile = b; tile < tiles; tile += grid) {  // the kernel's tile loop
          for (int x = 0; x < block; ++x) {
            for (int j = 0; j < ilp; ++j) ++touched.at(tile_element(tile, j, x, block, ilp));
          }
        }
      }
      for (std::size_t e = 0; e < touched.size(); ++e) ASSERT_EQ(touched[e], 1) << "element " << e;
    }
  }
}

TEST(FlopTiles, SlotsAreCoalesced) {
  for (int j = 0; j < 8; ++j) {
    std::vector<std::uint64_t> addr;
    for (int lane = 0; lane < 32; ++lane) addr.push_back(8 * tile_element(3, j, 64 + lane, 256, 8));
    EXPECT_EQ(sectors_per_warp_request(addr.data(), 32, 8), 8) << "slot " << j;  // 256 B, 8 sectors
  }
}

TEST(FlopTiles, ShapeRoundsToWholeWavesAndStaysInsideTheWorkingSet) {
  // H100-like: 132 SMs x 8 blocks of 256 threads, 8 FP64 elements each -> a wave is 17.3 MB.
  const int resident = 132 * 8;
  const FlopTiles t = flop_tiles(64ull << 20, 8, 256, 8, resident);
  EXPECT_EQ(t.tile_elements, 2048u);
  EXPECT_EQ(t.blocks, resident);
  EXPECT_EQ(t.tiles % resident, 0u);
  EXPECT_EQ(t.tiles, 3u * resident);
  EXPECT_EQ(t.elements, t.tiles * t.tile_elements);
  EXPECT_LE(t.elements * 8, 64ull << 20);

  const FlopTiles small = flop_tiles(1 << 20, 8, 256, 8, resident);  // less than a wave
  EXPECT_EQ(small.tiles, 64u);
  EXPECT_EQ(small.blocks, 64);

  const FlopTiles tiny = flop_tiles(100, 4, 256, 8, resident);  // below one tile: one tile
  EXPECT_EQ(tiny.tiles, 1u);
  EXPECT_EQ(tiny.blocks, 1);
}

TEST(FlopTiles, InitialValuesAreExactAndDistinct) {
  EXPECT_EQ(flops_initial_value<double>(0), 1.0);
  EXPECT_EQ(flops_initial_value<double>(1), 1.0 + 1.0 / 4096);
  EXPECT_EQ(flops_initial_value<float>(1023), 1.0f + 1023.0f / 4096);
  EXPECT_EQ(flops_initial_value<double>(1024), 1.0);  // period 1024
  EXPECT_EQ(static_cast<double>(flops_initial_value<float>(777)), flops_initial_value<double>(777));
}

// The default working set (0) is at least 4x the device's L2, so the low-intensity points of the
// sweep stream from device memory: 64 MiB alone sits mostly in an H100's 50 MB L2.
TEST(FlopsWorkingSet, TheDefaultIsFourTimesTheL2AndAtLeast64MiB) {
  const std::uint64_t mib = std::uint64_t{1} << 20;
  EXPECT_EQ(flops_working_set_bytes(0, 6 * mib), 64 * mib);          // V100: 6 MiB L2
  EXPECT_EQ(flops_working_set_bytes(0, 50 * mib), 200 * mib);        // H100 SXM: 50 MB
  EXPECT_EQ(flops_working_set_bytes(0, 72 * mib), 288 * mib);        // RTX 4090
  EXPECT_EQ(flops_working_set_bytes(0, 126 * mib), 504 * mib);       // B200
  EXPECT_EQ(flops_working_set_bytes(0, 40 * mib + 1), 161 * mib);    // rounded up to whole MiB
  EXPECT_EQ(flops_working_set_bytes(0, 0), 512 * mib);               // unknown: the largest L2 named
  EXPECT_EQ(flops_working_set_bytes(32 * mib, 50 * mib), 32 * mib);  // an explicit size is kept
}

}  // namespace
}  // namespace roofprobe
