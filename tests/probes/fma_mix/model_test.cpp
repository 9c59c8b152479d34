// Host tests of the fma_mix probe's mix and accounting (kernels/cuda/fma_mix/model.hpp): the
// operation counts per block for each FMA fraction, the FLOPs and the theoretical fraction
// (1 + a) / 2, the 16-bit peak table against published peaks, and the host arithmetic model
// (16-bit rounding, bit encodings, convergence of every chain to a fixed point).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "kernels/cuda/fma_mix/model.hpp"
#include "kernels/cuda/backend/gpu_arith_rates.hpp"

namespace roofprobe {
namespace {

TEST(FmaMix, OperationCountsPerBlock) {
  // a = q / 4: 2q FMAs, the rest half multiplies, half adds.
  const int fma[] = {0, 2, 4, 6, 8}, mul[] = {4, 3, 2, 1, 0};
  for (int q = 0; q <= 4; ++q) {
    EXPECT_EQ(mix_fma_ops(q), fma[q]) << q;
    EXPECT_EQ(mix_mul_ops(q), mul[q]) << q;
    EXPECT_EQ(mix_add_ops(q), mul[q]) << q;
    int counted[3] = {0, 0, 0};
    for (int pos = 0; pos < kMixOpsPerBlock; ++pos) ++counted[static_cast<int>(mix_op(q, pos))];
    EXPECT_EQ(counted[static_cast<int>(MixOp::Fma)], mix_fma_ops(q)) << q;
    EXPECT_EQ(counted[static_cast<int>(MixOp::Mul)], mix_mul_ops(q)) << q;
    EXPECT_EQ(counted[static_cast<int>(MixOp::Add)], mix_add_ops(q)) << q;
    EXPECT_EQ(mix_fma_ops(q) + mix_mul_ops(q) + mix_add_ops(q), kMixOpsPerBlock);
  }
  // Multiplies and adds alternate where there is no FMA.
  EXPECT_EQ(mix_op(1, 2), MixOp::Mul);
  EXPECT_EQ(mix_op(1, 3), MixOp::Add);
  EXPECT_EQ(mix_op(1, 4), MixOp::Mul);
  EXPECT_EQ(mix_op(0, 0), MixOp::Mul);
  EXPECT_EQ(mix_op(4, 7), MixOp::Fma);
}

TEST(FmaMix, FlopsAndPeakFraction) {
  EXPECT_DOUBLE_EQ(mix_flops_per_block(0), 8);
  EXPECT_DOUBLE_EQ(mix_flops_per_block(1), 10);
  EXPECT_DOUBLE_EQ(mix_flops_per_block(2), 12);
  EXPECT_DOUBLE_EQ(mix_flops_per_block(4), 16);
  for (int q = 0; q <= 4; ++q) {
    const double a = q / 4.0;
    // docs/ARCHITECTURE.md: peak x (2a + (1 - a)) / 2; at one instruction per op, FLOPs per
    // instruction / 2 (the FMA's) is the same fraction.
    EXPECT_DOUBLE_EQ(mix_peak_fraction(q), (2 * a + (1 - a)) / 2) << q;
    EXPECT_DOUBLE_EQ(mix_peak_fraction(q), mix_flops_per_block(q) / kMixOpsPerBlock / 2) << q;
  }
  EXPECT_EQ(mix_values_per_instruction(MixPrecision::Fp64), 1);
  EXPECT_EQ(mix_values_per_instruction(MixPrecision::Fp16), 2);
  EXPECT_EQ(mix_values_per_instruction(MixPrecision::Bf16), 2);
  // 1000 threads x 8 chains x 3 reps x 4 blocks x 12 FLOPs x 2 values (half2, a = 0.5).
  EXPECT_DOUBLE_EQ(mix_flops_per_launch(MixPrecision::Fp16, 2, 1000, 3), 1000.0 * 8 * 3 * 4 * 12 * 2);
  EXPECT_DOUBLE_EQ(mix_flops_per_launch(MixPrecision::Fp64, 0, 1000, 3), 1000.0 * 8 * 3 * 4 * 8);
  EXPECT_DOUBLE_EQ(mix_warp_instructions_per_launch(1024, 2), 32.0 * 8 * 2 * 4 * 8);
}

TEST(FmaMix, FractionTexts) {
  EXPECT_EQ(mix_quarters("0"), 0);
  EXPECT_EQ(mix_quarters("0.25"), 1);
  EXPECT_EQ(mix_quarters("0.5"), 2);
  EXPECT_EQ(mix_quarters("0.75"), 3);
  EXPECT_EQ(mix_quarters("1"), 4);
  EXPECT_EQ(mix_quarters("0.3"), -1);
  EXPECT_EQ(mix_quarters(""), -1);
}

// The 16-bit rates the probe uses (kernels/cuda/backend/gpu_arith_rates.hpp) reproduce the published non-tensor
// peaks (TFLOP/s at the boost clock).
TEST(FmaMix, SixteenBitPeaksMatchPublishedFigures) {
  auto tflops = [](int sms, int per_sm, double mhz) { return sms * per_sm * 2.0 * mhz * 1e-6; };
  EXPECT_NEAR(tflops(80, gpu_arith_rates(7, 0).fp16, 1530), 31.4, 0.1);   // V100
  EXPECT_NEAR(tflops(108, gpu_arith_rates(8, 0).fp16, 1410), 78.0, 0.1);  // A100
  EXPECT_NEAR(tflops(108, gpu_arith_rates(8, 0).bf16, 1410), 39.0, 0.1);
  EXPECT_NEAR(tflops(82, gpu_arith_rates(8, 6).fp16, 1695), 35.6, 0.1);    // 3090
  EXPECT_NEAR(tflops(128, gpu_arith_rates(8, 9).fp16, 2520), 82.6, 0.1);   // 4090
  EXPECT_NEAR(tflops(132, gpu_arith_rates(9, 0).fp16, 1980), 133.8, 0.1);  // H100
  EXPECT_NEAR(tflops(132, gpu_arith_rates(9, 0).bf16, 1980), 133.8, 0.1);
  EXPECT_EQ(gpu_arith_rates(7, 0).bf16, 0);   // no BF16 arithmetic before sm_80
  EXPECT_EQ(gpu_arith_rates(12, 3).fp16, 0);  // unknown: no peak
}

TEST(FmaMix, RoundingToSixteenBits) {
  // binary16: 11 significant bits. 1 + 2^-11 is a tie -> even (1); 1 + 3 x 2^-11 -> 1 + 2^-9.
  EXPECT_EQ(mix_round(1 + std::ldexp(1, -11), MixPrecision::Fp16), 1.0);
  EXPECT_EQ(mix_round(1 + 3 * std::ldexp(1, -11), MixPrecision::Fp16), 1 + std::ldexp(1, -9));
  EXPECT_EQ(mix_round(1 + std::ldexp(1, -11) + std::ldexp(1, -20), MixPrecision::Fp16), 1 + std::ldexp(1, -10));
  EXPECT_EQ(mix_round(3.999, MixPrecision::Fp16), 3.998046875);  // quantum 2^-9 in [2, 4)
  // bfloat16: 8 significant bits.
  EXPECT_EQ(mix_round(1 + std::ldexp(1, -8), MixPrecision::Bf16), 1.0);
  EXPECT_EQ(mix_round(1 + 3 * std::ldexp(1, -8), MixPrecision::Bf16), 1 + std::ldexp(1, -6));
  // binary32 agrees with the host's float conversion (round to nearest even).
  for (double v : {0.1, 1.0 / 3, 3.999999999, 1e-3}) {
    EXPECT_EQ(mix_round(v, MixPrecision::Fp32), static_cast<double>(static_cast<float>(v))) << v;
  }
  // Subnormal binary16: quantum 2^-24.
  EXPECT_EQ(mix_round(std::ldexp(3, -26), MixPrecision::Fp16), std::ldexp(1, -24));
}

TEST(FmaMix, SixteenBitEncodings) {
  EXPECT_EQ(mix_double_to_half(1.0), 0x3C00);
  EXPECT_EQ(mix_double_to_half(-2.0), 0xC000);
  EXPECT_EQ(mix_double_to_half(1.0 - 1.0 / 256), 0x3BF8);
  EXPECT_EQ(mix_double_to_half(1.0 / 64), 0x2400);
  EXPECT_EQ(mix_double_to_bf16(1.0), 0x3F80);
  EXPECT_EQ(mix_double_to_bf16(1.0 - 1.0 / 256), 0x3F7F);
  for (int i = 0; i < 64; ++i) {
    const double v = mix_initial_value(static_cast<std::uint64_t>(i)) * (i % 2 ? -1 : 1);
    EXPECT_EQ(mix_half_to_double(mix_double_to_half(v)), v);
    EXPECT_EQ(mix_bf16_to_double(mix_double_to_bf16(v)), v);
  }
  EXPECT_EQ(mix_half_to_double(0x0001), std::ldexp(1, -24));
  EXPECT_EQ(mix_half_to_double(0x7BFF), 65504.0);
}

// The host model is exact arithmetic: an FMA rounds once, mul + add twice.
TEST(FmaMix, HostOpsRoundLikeTheDevice) {
  const MixConstants k = mix_constants(MixPrecision::Fp16);
  // 1.5 x (1 - 2^-8) = 1.494140625 (exact in half) + 2^-6 = 1.509765625 -> exact too.
  EXPECT_EQ(mix_host_op(MixPrecision::Fp16, MixOp::Fma, 1.5, k), 1.509765625);
  // Whatever the input, every result is a value of the format.
  for (double x : {1.0, 1.25, 1.984375, 3.75}) {
    for (MixOp op : {MixOp::Fma, MixOp::Mul, MixOp::Add}) {
      const double r = mix_host_op(MixPrecision::Fp16, op, x, k);
      EXPECT_EQ(mix_half_to_double(mix_double_to_half(r)), r);
      const double b = mix_host_op(MixPrecision::Bf16, op, x, mix_constants(MixPrecision::Bf16));
      EXPECT_EQ(mix_bf16_to_double(mix_double_to_bf16(b)), b);
    }
  }
  const MixConstants d = mix_constants(MixPrecision::Fp64);
  EXPECT_EQ(mix_host_op(MixPrecision::Fp64, MixOp::Fma, 1.5, d), std::fma(1.5, d.m, d.c));
  EXPECT_EQ(mix_host_op(MixPrecision::Fp32, MixOp::Mul, 1.5, d), static_cast<double>(1.5f * static_cast<float>(d.m)));
}

// Every chain the probe runs reaches a fixed point of its block (so verify() stays cheap however
// long the device ran) and stays finite and in range on the way.
TEST(FmaMix, ChainsReachAFixedPoint) {
  for (MixPrecision p : {MixPrecision::Fp64, MixPrecision::Fp32, MixPrecision::Fp16, MixPrecision::Bf16}) {
    const MixConstants k = mix_constants(p);
    for (int q = 0; q <= 4; ++q) {
      for (std::uint64_t i : {0, 1, 31, 63}) {
        double x = mix_initial_value(i);
        std::int64_t b = 0;
        for (; b < 100000; ++b) {
          const double next = mix_host_block(p, q, x, k);
          ASSERT_TRUE(next >= 1.0 && next <= 4.0) << next;
          if (next == x) break;
          x = next;
        }
        EXPECT_LT(b, 40000) << "precision " << static_cast<int>(p) << " q " << q << " i " << i;
        EXPECT_EQ(mix_host_chain(p, q, mix_initial_value(i), 1000000), x);
      }
    }
  }
}

}  // namespace
}  // namespace roofprobe
