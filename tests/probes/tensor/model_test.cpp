// Host tests of the tensor-core probe's shared description (kernels/cuda/tensor/model.hpp):
// instruction shapes and FLOPs per instruction, fragment sizes, the mma.sync fragment layouts
// against the PTX ISA figures, the exact value encodings, the launch's MMA count, and the
// per-SM peaks against the published whitepaper figures. Where the CUDA probe is built in, also
// its reasons for refusing a device and the peaks it adds (no GPU needed for either).
#include "kernels/cuda/tensor/model.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/contract/probe.hpp"

namespace roofprobe {
namespace {

const TensorType kAllTypes[] = {TensorType::Fp16Fp32,  TensorType::Fp16Fp16, TensorType::Bf16Fp32, TensorType::Tf32Fp32,
                                TensorType::Int8Int32, TensorType::Fp64Fp64, TensorType::Fp8Fp32};

TEST(TensorShapes, NamesRoundTrip) {
  for (TensorType t : kAllTypes) {
    TensorType back{};
    ASSERT_TRUE(parse_tensor_type(tensor_type_name(t), &back)) << tensor_type_name(t);
    EXPECT_EQ(back, t);
  }
  TensorType dummy{};
  EXPECT_FALSE(parse_tensor_type("fp16", &dummy));
  EXPECT_FALSE(parse_tensor_type("FP16.FP32", &dummy));
}

TEST(TensorShapes, MmaShapesAndFlopsPerInstruction) {
  struct Want {
    TensorType t;
    int m, n, k, min_cc;
    double flops;
  };
  const Want wants[] = {{TensorType::Fp16Fp32, 16, 8, 16, 80, 4096},  {TensorType::Fp16Fp16, 16, 8, 16, 80, 4096},
                        {TensorType::Bf16Fp32, 16, 8, 16, 80, 4096},  {TensorType::Tf32Fp32, 16, 8, 8, 80, 2048},
                        {TensorType::Int8Int32, 16, 8, 32, 80, 8192}, {TensorType::Fp64Fp64, 8, 8, 4, 80, 512},
                        {TensorType::Fp8Fp32, 16, 8, 32, 89, 8192}};
  for (const Want& w : wants) {
    const TensorShape s = tensor_mma_shape(w.t);
    EXPECT_EQ(s.m, w.m) << tensor_type_name(w.t);
    EXPECT_EQ(s.n, w.n) << tensor_type_name(w.t);
    EXPECT_EQ(s.k, w.k) << tensor_type_name(w.t);
    EXPECT_EQ(s.min_cc, w.min_cc) << tensor_type_name(w.t);
    EXPECT_EQ(tensor_flops_per_instruction(s), w.flops) << tensor_type_name(w.t);
  }
  // Usable in constant expressions (the kernel sizes its register arrays with them).
  static_assert(tensor_flops_per_instruction(tensor_mma_shape(TensorType::Fp16Fp32)) == 4096);
  static_assert(tensor_a_words(TensorType::Fp16Fp32) == 4);
}

TEST(TensorShapes, WmmaShapes) {
  EXPECT_EQ(tensor_flops_per_instruction(tensor_wmma_shape(TensorType::Fp16Fp32)), 8192);
  EXPECT_EQ(tensor_wmma_shape(TensorType::Fp16Fp16).min_cc, 70);
  EXPECT_EQ(tensor_wmma_shape(TensorType::Int8Int32).min_cc, 72);
  EXPECT_EQ(tensor_wmma_shape(TensorType::Bf16Fp32).min_cc, 80);
  EXPECT_EQ(tensor_flops_per_instruction(tensor_wmma_shape(TensorType::Tf32Fp32)), 4096);
  EXPECT_EQ(tensor_flops_per_instruction(tensor_wmma_shape(TensorType::Fp64Fp64)), 512);
  EXPECT_EQ(tensor_wmma_shape(TensorType::Fp8Fp32).min_cc, 0);  // no fp8 WMMA
  EXPECT_EQ(tensor_shape(TensorType::Tf32Fp32, TensorApi::Mma).k, 8);
  EXPECT_EQ(tensor_shape(TensorType::Tf32Fp32, TensorApi::Wmma).n, 16);
}

// Registers per lane as the PTX ISA lists them for each mma.sync form.
TEST(TensorShapes, FragmentWordsPerLane) {
  struct Want {
    TensorType t;
    int a, b, c;
  };
  const Want wants[] = {{TensorType::Fp16Fp32, 4, 2, 4},  {TensorType::Fp16Fp16, 4, 2, 2},
                        {TensorType::Bf16Fp32, 4, 2, 4},  {TensorType::Tf32Fp32, 4, 2, 4},
                        {TensorType::Int8Int32, 4, 2, 4}, {TensorType::Fp64Fp64, 2, 2, 4},
                        {TensorType::Fp8Fp32, 4, 2, 4}};
  for (const Want& w : wants) {
    EXPECT_EQ(tensor_a_words(w.t), w.a) << tensor_type_name(w.t);
    EXPECT_EQ(tensor_b_words(w.t), w.b) << tensor_type_name(w.t);
    EXPECT_EQ(tensor_c_words(w.t), w.c) << tensor_type_name(w.t);
  }
}

// Every element of A, B and C is held by exactly one (lane, element) of the warp.
TEST(TensorShapes, FragmentsCoverEachMatrixElementOnce) {
  for (TensorType t : kAllTypes) {
    const TensorShape s = tensor_mma_shape(t);
    auto check = [&](const char* what, int rows, int cols, int per_lane, auto coord) {
      std::vector<int> seen(static_cast<std::size_t>(rows) * cols, 0);
      for (int lane = 0; lane < 32; ++lane) {
        for (int e = 0; e < per_lane; ++e) {
          const FragCoord x = coord(t, lane, e);
          ASSERT_GE(x.row, 0);
          ASSERT_LT(x.row, rows) << tensor_type_name(t) << " " << what;
          ASSERT_GE(x.col, 0);
          ASSERT_LT(x.col, cols) << tensor_type_name(t) << " " << what;
          ++seen[x.row * cols + x.col];
        }
      }
      for (std::size_t i = 0; i < seen.size(); ++i)
        EXPECT_EQ(seen[i], 1) << tensor_type_name(t) << " " << what << " element " << i;
    };
    check("A", s.m, s.k, tensor_a_elements(s), tensor_mma_a_coord);
    check("B", s.k, s.n, tensor_b_elements(s), tensor_mma_b_coord);
    check("C", s.m, s.n, tensor_c_elements(s), tensor_mma_c_coord);
  }
}

// Hopper's f64 shapes (api=mma.m16n8k4/k8/k16): their sizes and FLOPs, and every element of A,
// B and C held exactly once, at the place CUTLASS's CuTe atoms SM90_16x8x{4,8,16}_F64F64F64F64_TN
// put it. Those atoms are (thread, value) -> column-major index layouts, written here as their
// shapes and strides and evaluated independently of tensor_mma_*_coord_for:
//   A 16x4:  ((4,8),2)     : ((16,1),8)        A 16x8: ((4,8),(2,2)) : ((16,1),(8,64))
//   A 16x16: ((4,8),(2,4)) : ((16,1),(8,64))   B 8xK:  ((4,8),K/4)   : ((8,1),32)
//   C 16x8:  ((4,8),(2,2)) : ((32,1),(16,8))
TEST(TensorShapes, HopperF64ShapesMatchCutlassAtoms) {
  const TensorApi apis[] = {TensorApi::MmaM16n8k4, TensorApi::MmaM16n8k8, TensorApi::MmaM16n8k16};
  const TensorType t = TensorType::Fp64Fp64;
  for (TensorApi api : apis) {
    const TensorShape s = tensor_shape(t, api);
    ASSERT_EQ(s.m, 16);
    ASSERT_EQ(s.n, 8);
    ASSERT_EQ(s.min_cc, 90);
    EXPECT_EQ(tensor_flops_per_instruction(s), 2.0 * 16 * 8 * s.k);
    EXPECT_EQ(tensor_a_words(t, api), s.k / 2 * 2);  // 16 x k doubles over 32 lanes, 2 words each
    EXPECT_EQ(tensor_b_words(t, api), s.k / 4 * 2);
    EXPECT_EQ(tensor_c_words(t, api), 8);
    EXPECT_TRUE(tensor_mma_api(api));
    for (TensorType other : kAllTypes)
      if (other != t) EXPECT_EQ(tensor_shape(other, api).min_cc, 0) << tensor_type_name(other);
    const int values_a = s.k / 2;  // per thread
    for (int lane = 0; lane < 32; ++lane) {
      const int t0 = lane % 4, t1 = lane / 4;
      for (int v = 0; v < values_a; ++v) {
        const int v0 = v % 2, v1 = v / 2;
        const int index = 16 * t0 + t1 + (s.k == 4 ? 8 * v : 8 * v0 + 64 * v1);  // column-major 16 x k
        const FragCoord x = tensor_mma_a_coord_for(t, api, lane, v);
        EXPECT_EQ(x.row, index % 16) << "A k" << s.k << " lane " << lane << " v " << v;
        EXPECT_EQ(x.col, index / 16) << "A k" << s.k << " lane " << lane << " v " << v;
      }
      for (int v = 0; v < s.k / 4; ++v) {
        const int index = 8 * t0 + t1 + 32 * v;  // column-major 8 (n) x k
        const FragCoord x = tensor_mma_b_coord_for(t, api, lane, v);
        EXPECT_EQ(x.row, index / 8) << "B k" << s.k << " lane " << lane;  // k
        EXPECT_EQ(x.col, index % 8) << "B k" << s.k << " lane " << lane;  // n
      }
      for (int v = 0; v < 4; ++v) {
        const int index = 32 * t0 + t1 + 16 * (v % 2) + 8 * (v / 2);  // column-major 16 x 8
        const FragCoord x = tensor_mma_c_coord_for(t, api, lane, v);
        EXPECT_EQ(x.row, index % 16) << "C lane " << lane << " v " << v;
        EXPECT_EQ(x.col, index / 16) << "C lane " << lane << " v " << v;
      }
    }
  }
  // wgmma fills 32 bytes of K per tile row with every type it has.
  for (TensorType w : {TensorType::Fp16Fp32, TensorType::Fp16Fp16, TensorType::Bf16Fp32, TensorType::Tf32Fp32,
                       TensorType::Fp8Fp32, TensorType::Int8Int32}) {
    const TensorShape s = tensor_wgmma_shape(w);
    EXPECT_EQ(s.m, 64);
    EXPECT_EQ(s.n, 128);
    EXPECT_EQ(s.k * tensor_input_bits(tensor_input(w)), 32 * 8) << tensor_type_name(w);
  }
  EXPECT_EQ(tensor_wgmma_shape(TensorType::Fp64Fp64).m, 0);
  // api=mma keeps fp64's m8n8k4 and its own layout.
  EXPECT_EQ(tensor_shape(t, TensorApi::Mma).k, 4);
  EXPECT_EQ(tensor_shape(t, TensorApi::Mma).m, 8);
  // Native on 9.0 only: sm_100/sm_120 ptxas splits them into DMMA.8x8x4 (SASS checks).
  EXPECT_TRUE(tensor_mma_native(t, TensorApi::MmaM16n8k16, 90));
  EXPECT_FALSE(tensor_mma_native(t, TensorApi::MmaM16n8k16, 100));
  EXPECT_FALSE(tensor_mma_native(t, TensorApi::MmaM16n8k4, 120));
}

// Spot checks against the PTX ISA fragment figures (groupID g = lane / 4, t = lane % 4).
TEST(TensorShapes, FragmentLayoutsMatchThePtxIsa) {
  auto at = [](FragCoord x) { return std::make_pair(x.row, x.col); };
  using P = std::pair<int, int>;
  // m16n8k16 .f16/.bf16, lane 5 (g 1, t 1): a0 (g, 2t), a3 (g+8, 2t+1), a6 (g+8, 2t+8);
  // b3 (k 2t+9, n g); c2 (g+8, 2t).
  EXPECT_EQ(at(tensor_mma_a_coord(TensorType::Fp16Fp32, 5, 0)), P(1, 2));
  EXPECT_EQ(at(tensor_mma_a_coord(TensorType::Fp16Fp32, 5, 3)), P(9, 3));
  EXPECT_EQ(at(tensor_mma_a_coord(TensorType::Bf16Fp32, 5, 6)), P(9, 10));
  EXPECT_EQ(at(tensor_mma_b_coord(TensorType::Fp16Fp16, 5, 3)), P(11, 1));
  EXPECT_EQ(at(tensor_mma_c_coord(TensorType::Fp16Fp32, 5, 2)), P(9, 2));
  // m16n8k8 .tf32, lane 7 (g 1, t 3): a1 (g+8, t), a2 (g, t+4); b1 (k t+4, n g).
  EXPECT_EQ(at(tensor_mma_a_coord(TensorType::Tf32Fp32, 7, 1)), P(9, 3));
  EXPECT_EQ(at(tensor_mma_a_coord(TensorType::Tf32Fp32, 7, 2)), P(1, 7));
  EXPECT_EQ(at(tensor_mma_b_coord(TensorType::Tf32Fp32, 7, 1)), P(7, 1));
  // m16n8k32 .s8/.e4m3, lane 6 (g 1, t 2): a5 (g+8, 4t+1), a10 (g, 4t+18); b6 (k 4t+18, n g).
  EXPECT_EQ(at(tensor_mma_a_coord(TensorType::Int8Int32, 6, 5)), P(9, 9));
  EXPECT_EQ(at(tensor_mma_a_coord(TensorType::Fp8Fp32, 6, 10)), P(1, 26));
  EXPECT_EQ(at(tensor_mma_b_coord(TensorType::Int8Int32, 6, 6)), P(26, 1));
  EXPECT_EQ(at(tensor_mma_c_coord(TensorType::Int8Int32, 6, 3)), P(9, 5));
  // m8n8k4 .f64, lane 31 (g 7, t 3): a0 (g, t); b0 (k t, n g); c1 (g, 2t+1).
  EXPECT_EQ(at(tensor_mma_a_coord(TensorType::Fp64Fp64, 31, 0)), P(7, 3));
  EXPECT_EQ(at(tensor_mma_b_coord(TensorType::Fp64Fp64, 31, 0)), P(3, 7));
  EXPECT_EQ(at(tensor_mma_c_coord(TensorType::Fp64Fp64, 31, 1)), P(7, 7));
}

TEST(TensorShapes, MmasPerWarp) {
  // 4 steps x 4 chains per iteration, plus the final +B MMA of each chain.
  EXPECT_EQ(tensor_mmas_per_warp(0), 4);
  EXPECT_EQ(tensor_mmas_per_warp(10), 164);
  EXPECT_EQ(tensor_mmas_per_warp(1000000), 16000004LL);
  static_assert(kTensorSteps % 2 == 0, "+B/-B pairs must return the accumulators to C");
}

TEST(TensorShapes, InputEncodings) {
  std::uint64_t bits = 0;
  ASSERT_TRUE(encode_tensor_input(TensorInput::Fp16, 1.0, &bits));
  EXPECT_EQ(bits, 0x3C00u);
  ASSERT_TRUE(encode_tensor_input(TensorInput::Fp16, -0.5, &bits));
  EXPECT_EQ(bits, 0xB800u);
  ASSERT_TRUE(encode_tensor_input(TensorInput::Bf16, 1.0, &bits));
  EXPECT_EQ(bits, 0x3F80u);
  ASSERT_TRUE(encode_tensor_input(TensorInput::Bf16, -0.5, &bits));
  EXPECT_EQ(bits, 0xBF00u);
  ASSERT_TRUE(encode_tensor_input(TensorInput::Tf32, 0.5, &bits));
  EXPECT_EQ(bits, 0x3F000000u);
  ASSERT_TRUE(encode_tensor_input(TensorInput::E4m3, 1.0, &bits));
  EXPECT_EQ(bits, 0x38u);
  ASSERT_TRUE(encode_tensor_input(TensorInput::E4m3, -0.5, &bits));
  EXPECT_EQ(bits, 0xB0u);
  ASSERT_TRUE(encode_tensor_input(TensorInput::Fp64, -1.0, &bits));
  EXPECT_EQ(bits, 0xBFF0000000000000ull);
  ASSERT_TRUE(encode_tensor_input(TensorInput::Int8, -2.0, &bits));
  EXPECT_EQ(bits, 0xFEu);
  // Values a format cannot hold exactly are refused, not rounded.
  EXPECT_FALSE(encode_tensor_input(TensorInput::Fp16, 1.0 / 3, &bits));
  EXPECT_FALSE(encode_tensor_input(TensorInput::E4m3, 17.0, &bits));  // 3 mantissa bits
  EXPECT_FALSE(encode_tensor_input(TensorInput::Int8, 0.5, &bits));
}

TEST(TensorShapes, AccumulatorEncodingsRoundTrip) {
  const TensorAcc accs[] = {TensorAcc::Fp32, TensorAcc::Fp16, TensorAcc::Int32, TensorAcc::Fp64};
  for (TensorAcc acc : accs) {
    for (double v : {-64.0, -7.75, -0.25, 1.0, 40.5, 63.75}) {
      if (acc == TensorAcc::Int32 && v != std::floor(v)) continue;
      std::uint64_t bits = 0;
      ASSERT_TRUE(encode_tensor_acc(acc, v, &bits)) << v;
      EXPECT_EQ(decode_tensor_acc(acc, bits), v);
    }
  }
  std::uint64_t bits = 0;
  ASSERT_TRUE(encode_tensor_acc(TensorAcc::Fp32, 1.0, &bits));
  EXPECT_EQ(bits, 0x3F800000u);
  ASSERT_TRUE(encode_tensor_acc(TensorAcc::Fp16, -2.0, &bits));
  EXPECT_EQ(bits, 0xC000u);
  ASSERT_TRUE(encode_tensor_acc(TensorAcc::Int32, -1.0, &bits));
  EXPECT_EQ(bits, 0xFFFFFFFFu);
  EXPECT_EQ(decode_tensor_acc(TensorAcc::Fp16, 0x0001), std::ldexp(1.0, -24));  // subnormal
}

// The random values keep every result exact: the worst |C + A*B| of each type is representable in
// its accumulator with the values' 1/4 resolution.
TEST(TensorShapes, RandomValuesStayExact) {
  std::set<double> inputs, accs;
  for (std::uint64_t r = 0; r < 512; ++r) {
    inputs.insert(tensor_input_value(TensorInput::Fp16, r));
    const double c = tensor_acc_value(TensorAcc::Fp16, r);
    EXPECT_NE(c, 0);
    EXPECT_LE(std::fabs(c), 8);
    accs.insert(c);
    const double ci = tensor_acc_value(TensorAcc::Int32, r);
    EXPECT_NE(ci, 0);
    EXPECT_LE(std::fabs(ci), 64);
  }
  EXPECT_EQ(inputs, (std::set<double>{-1, -0.5, 0.5, 1}));
  EXPECT_EQ(accs.size(), 64u);  // all 64 nonzero quarters in [-8, 8]
  for (TensorType t : kAllTypes) {
    const TensorShape s = tensor_mma_shape(t);
    const double max_product = tensor_input(t) == TensorInput::Int8 ? 4 : 1;
    const double worst = (tensor_acc(t) == TensorAcc::Int32 ? 64 : 8) + s.k * max_product;
    const double resolution = tensor_acc(t) == TensorAcc::Int32 ? 1 : 0.25;
    std::uint64_t bits = 0;
    EXPECT_TRUE(encode_tensor_acc(tensor_acc(t), worst, &bits)) << tensor_type_name(t);
    EXPECT_TRUE(encode_tensor_acc(tensor_acc(t), worst - resolution, &bits)) << tensor_type_name(t);
    for (double v : {-1.0, -0.5, 0.5, 1.0}) {
      if (tensor_input(t) == TensorInput::Int8) continue;
      EXPECT_TRUE(encode_tensor_input(tensor_input(t), v, &bits)) << tensor_type_name(t);
    }
  }
}

// Per-SM figures x SMs x the quoted clock give back the published dense peaks (TFLOP/s / TOPS).
TEST(TensorShapes, PeaksReproduceThePublishedFigures) {
  struct Want {
    TensorType t;
    int cc, sms;
    double mhz, tflops;
  };
  const Want wants[] = {
      {TensorType::Fp16Fp32, 70, 80, 1530, 125.3},   // V100 SXM2
      {TensorType::Fp16Fp16, 75, 40, 1590, 65.1},    // T4
      {TensorType::Int8Int32, 75, 40, 1590, 130.2},  // T4
      {TensorType::Fp16Fp32, 80, 108, 1410, 311.9},  // A100
      {TensorType::Bf16Fp32, 80, 108, 1410, 311.9},   {TensorType::Tf32Fp32, 80, 108, 1410, 155.9},
      {TensorType::Int8Int32, 80, 108, 1410, 623.8},  {TensorType::Fp64Fp64, 80, 108, 1410, 19.5},
      {TensorType::Fp16Fp32, 86, 84, 1740, 149.7},                                                   // A40
      {TensorType::Fp16Fp16, 89, 128, 2520, 330.3},                                                  // RTX 4090
      {TensorType::Fp8Fp32, 89, 128, 2520, 660.6},    {TensorType::Tf32Fp32, 89, 142, 2520, 183.2},  // L40S
      {TensorType::Fp16Fp32, 90, 132, 1830, 989.4},                                                  // H100 SXM5
      {TensorType::Tf32Fp32, 90, 132, 1830, 494.7},   {TensorType::Fp8Fp32, 90, 132, 1830, 1978.9},
      {TensorType::Int8Int32, 90, 132, 1830, 1978.9}, {TensorType::Fp64Fp64, 90, 132, 1980, 66.9},
  };
  for (const Want& w : wants) {
    const TensorPeak p = tensor_peak_per_sm(w.t, w.cc);
    const double tflops = p.flops_per_clk_per_sm * w.sms * w.mhz * 1e-6;
    EXPECT_NEAR(tflops, w.tflops, w.tflops * 0.002) << tensor_type_name(w.t) << " cc " << w.cc;
    EXPECT_NE(std::string(p.source), "") << tensor_type_name(w.t) << " cc " << w.cc;
  }
  // Nothing where no figure is published or the type does not exist.
  EXPECT_EQ(tensor_peak_per_sm(TensorType::Fp16Fp32, 61).flops_per_clk_per_sm, 0);
  EXPECT_EQ(tensor_peak_per_sm(TensorType::Fp16Fp32, 100).flops_per_clk_per_sm, 0);  // B200: clock unpublished
  EXPECT_EQ(std::string(tensor_peak_per_sm(TensorType::Fp16Fp32, 100).source).rfind("unknown: ", 0), 0u);
  EXPECT_EQ(tensor_peak_per_sm(TensorType::Bf16Fp32, 70).flops_per_clk_per_sm, 0);
  EXPECT_EQ(tensor_peak_per_sm(TensorType::Fp8Fp32, 80).flops_per_clk_per_sm, 0);
  EXPECT_EQ(tensor_peak_per_sm(TensorType::Fp64Fp64, 86).flops_per_clk_per_sm, 0);
}

// GeForce parts: the published dense figures of the GeForce appendices, FP32 accumulate at half the
// professional rate, FP16 accumulate and INT8 at the full one.
TEST(TensorShapes, GeForcePeaksHalveFp32AccumulateOnly) {
  struct Want {
    TensorType t;
    int cc, sms;
    double mhz, tflops;
  };
  const Want wants[] = {
      {TensorType::Fp16Fp32, 89, 128, 2520, 165.2},  // RTX 4090
      {TensorType::Bf16Fp32, 89, 128, 2520, 165.2},  {TensorType::Tf32Fp32, 89, 128, 2520, 82.6},
      {TensorType::Fp8Fp32, 89, 128, 2520, 330.3},   {TensorType::Fp16Fp16, 89, 128, 2520, 330.3},
      {TensorType::Int8Int32, 89, 128, 2520, 660.6}, {TensorType::Fp16Fp32, 86, 82, 1695, 71.2},  // RTX 3090
      {TensorType::Fp16Fp16, 86, 82, 1695, 142.3},   {TensorType::Tf32Fp32, 86, 82, 1695, 35.6},
      {TensorType::Fp16Fp32, 75, 68, 1635, 56.9},  // RTX 2080 Ti (Founders Edition clock)
      {TensorType::Fp16Fp16, 75, 68, 1635, 113.8},
  };
  for (const Want& w : wants) {
    const TensorPeak p = tensor_peak_per_sm(w.t, w.cc, TensorPart::GeForce);
    EXPECT_NEAR(p.flops_per_clk_per_sm * w.sms * w.mhz * 1e-6, w.tflops, w.tflops * 0.003)
        << tensor_type_name(w.t) << " cc " << w.cc;
  }
  EXPECT_TRUE(tensor_peak_per_sm(TensorType::Fp16Fp32, 89, TensorPart::GeForce).geforce_half_rate);
  EXPECT_FALSE(tensor_peak_per_sm(TensorType::Fp16Fp16, 89, TensorPart::GeForce).geforce_half_rate);
  // Hopper has no GeForce part; a name that says GeForce changes nothing there.
  EXPECT_EQ(tensor_peak_per_sm(TensorType::Fp16Fp32, 90, TensorPart::GeForce).flops_per_clk_per_sm,
            tensor_peak_per_sm(TensorType::Fp16Fp32, 90).flops_per_clk_per_sm);
  EXPECT_EQ(tensor_part_of("NVIDIA GeForce RTX 4090"), TensorPart::GeForce);
  EXPECT_EQ(tensor_part_of("NVIDIA L40S"), TensorPart::FullRate);
  EXPECT_EQ(tensor_part_of("NVIDIA TITAN RTX"), TensorPart::FullRate);
  EXPECT_EQ(tensor_part_of("NVIDIA RTX 6000 Ada Generation"), TensorPart::FullRate);
  EXPECT_EQ(tensor_part_of(""), TensorPart::FullRate);
}

// ---- the registered CUDA probe (present only in CUDA builds) --------------------------------
const Probe* tensor_probe() { return Registry::instance().probe("cuda", "tensor"); }

DeviceInfo fake_device(const char* cc, int sms, double mhz) {
  DeviceInfo d;
  d.backend = "cuda";
  d.compute_units = sms;
  d.clock_measured_mhz = mhz;
  d.extra["compute_capability"] = cc;
  return d;
}

TEST(TensorProbe, DeclaresItsAxesAndFeed) {
  const Probe* probe = tensor_probe();
  if (probe == nullptr) GTEST_SKIP() << "built without CUDA";
  const ProbeInfo& info = probe->info();
  ASSERT_EQ(info.axes.size(), 2u);
  EXPECT_EQ(info.axes[0].name, "type");
  EXPECT_EQ(info.axes[0].choices.size(), 7u);
  EXPECT_EQ(info.axes[1].name, "api");
  ASSERT_EQ(info.feeds.size(), 1u);
  EXPECT_EQ(info.feeds[0].kind, FeedKind::ComputeCeiling);
  EXPECT_EQ(info.feeds[0].metric, "gflops");
  EXPECT_EQ(info.feeds[0].series_axes, std::vector<std::string>{"type"});
  EXPECT_EQ(info.feeds[0].name_pattern, "TENSOR.{type}");
}

// The machine file names each tensor ceiling's instruction as PTX spells it (the spellings the
// PTX checks of tests/probes/tensor/ptx.cmake count).
TEST(TensorProbe, NamesTheInstructionOfEachPoint) {
  const Probe* probe = tensor_probe();
  if (probe == nullptr) GTEST_SKIP() << "built without CUDA";
  const FeedSpec& feed = probe->info().feeds.at(0);
  EXPECT_EQ(feed.instruction_axis, "api");
  auto text = [&](const char* api, const char* type) {
    const auto it = feed.instruction_text.find(std::string("api=") + api + ";type=" + type);
    return it == feed.instruction_text.end() ? std::string("(none)") : it->second;
  };
  EXPECT_EQ(text("mma", "fp64.fp64"), "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64");
  EXPECT_EQ(text("mma.m16n8k16", "fp64.fp64"), "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64");
  EXPECT_EQ(text("mma", "int8.int32"), "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32");
  EXPECT_EQ(text("mma", "tf32.fp32"), "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
  EXPECT_EQ(text("wgmma", "tf32.fp32").rfind("wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32", 0), 0u);
  EXPECT_EQ(text("wgmma", "fp8.fp32").rfind("wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3", 0), 0u);
  EXPECT_EQ(text("mma.m16n8k16", "fp16.fp32"), "(none)");  // no such point
  EXPECT_EQ(text("wmma", "fp8.fp32"), "(none)");
}

TEST(TensorProbe, SaysWhyADeviceCannotRunAPoint) {
  const Probe* probe = tensor_probe();
  if (probe == nullptr) GTEST_SKIP() << "built without CUDA";
  auto why = [&](const char* type, const char* api, const char* cc) {
    return probe->unsupported_reason({{"type", type}, {"api", api}}, fake_device(cc, 80, 1500));
  };
  // Reasons from the compute capability alone (decided before any CUDA call).
  EXPECT_NE(why("fp16.fp32", "mma", "7.0").find("needs compute capability 8.0"), std::string::npos);
  EXPECT_NE(why("fp16.fp32", "mma", "7.5").find("api=wmma runs this type here"), std::string::npos);
  EXPECT_NE(why("fp8.fp32", "mma", "8.0").find("8.9"), std::string::npos);
  EXPECT_NE(why("fp8.fp32", "wmma", "9.0").find("WMMA has no fp8"), std::string::npos);
  // fp8 mma.sync is emulated by ptxas on Hopper and datacenter Blackwell (SASS check
  // sass.tensor_mma_fp8_fp32_sm90): refused there, run where it is a QMMA.
  for (const char* cc : {"9.0", "10.0", "10.3", "11.0"})
    EXPECT_NE(why("fp8.fp32", "mma", cc).find("emulated"), std::string::npos) << cc;
  for (const char* cc : {"8.9", "12.0", "12.1"}) EXPECT_EQ(why("fp8.fp32", "mma", cc), "") << cc;
  EXPECT_EQ(why("fp16.fp32", "mma", "9.0"), "");
  EXPECT_NE(why("bf16.fp32", "wmma", "7.5").find("needs compute capability 8.0"), std::string::npos);
  EXPECT_NE(why("int8.int32", "wmma", "7.0").find("7.2"), std::string::npos);
  EXPECT_NE(why("fp64.fp64", "mma", "").find("unknown compute capability"), std::string::npos);
  // Hopper's f64 shapes: fp64 on 9.0; elsewhere why not (absent before, split after).
  EXPECT_EQ(why("fp64.fp64", "mma.m16n8k16", "9.0"), "");
  EXPECT_EQ(why("fp64.fp64", "mma.m16n8k4", "9.0"), "");
  EXPECT_NE(why("fp64.fp64", "mma.m16n8k8", "8.0").find("lacks it"), std::string::npos);
  EXPECT_NE(why("fp64.fp64", "mma.m16n8k16", "10.0").find("DMMA.8x8x4"), std::string::npos);
  EXPECT_NE(why("fp16.fp32", "mma.m16n8k16", "9.0").find("fp64.fp64 only"), std::string::npos);
  EXPECT_THROW(why("fp4.fp32", "mma", "9.0"), std::invalid_argument);
  // wgmma: Hopper only, f16/bf16/tf32/e4m3 inputs with f32 accumulate, f16 with f16 and int8 with
  // s32; whether this binary
  // holds the sm_90a code is asked of the device (no answer without one).
  EXPECT_NE(why("fp16.fp32", "wgmma", "8.0").find("Hopper's"), std::string::npos);
  EXPECT_NE(why("bf16.fp32", "wgmma", "10.0").find("api=tcgen05"), std::string::npos);
  EXPECT_NE(why("fp64.fp64", "wgmma", "9.0").find("fp8.fp32 (e4m3) and int8.int32 only"), std::string::npos);
  for (const char* type : {"fp16.fp32", "fp16.fp16", "tf32.fp32", "fp8.fp32", "int8.int32"}) {
    EXPECT_NO_THROW(why(type, "wgmma", "9.0")) << type;
    EXPECT_NE(why(type, "wgmma", "8.9").find("Hopper's"), std::string::npos) << type;
  }
  // wgmma.rs (A from registers): Hopper only, fp16.fp32 and bf16.fp32.
  EXPECT_NO_THROW(why("bf16.fp32", "wgmma.rs", "9.0"));
  EXPECT_NE(why("fp16.fp32", "wgmma.rs", "8.9").find("Hopper's"), std::string::npos);
  EXPECT_NE(why("tf32.fp32", "wgmma.rs", "9.0").find("runs with api=wgmma"), std::string::npos);
  EXPECT_NE(why("fp64.fp64", "wgmma.rs", "9.0").find("runs with api=mma"), std::string::npos);
  // tcgen05: B200/GB200 only (sm_100a code); kinds f16, tf32, f8f6f4 (e4m3) and i8.
  EXPECT_NE(why("fp16.fp32", "tcgen05", "9.0").find("only compute capability 10.0"), std::string::npos);
  EXPECT_NE(why("fp16.fp32", "tcgen05", "10.3").find("only compute capability 10.0"), std::string::npos);
  EXPECT_NE(why("fp16.fp16", "tcgen05", "10.0").find("fp8.fp32 (e4m3) and int8.int32 only"), std::string::npos);
  for (const char* type : {"tf32.fp32", "fp8.fp32", "int8.int32"})
    EXPECT_NO_THROW(why(type, "tcgen05", "10.0")) << type;
  EXPECT_NO_THROW(why("bf16.fp32", "tcgen05", "10.0"));
  EXPECT_THROW(why("fp16.fp32", "hgmma", "9.0"), std::invalid_argument);
}

TEST(TensorProbe, AddsThePeaksOfKnownArchitectures) {
  const Probe* probe = tensor_probe();
  if (probe == nullptr) GTEST_SKIP() << "built without CUDA";
  DeviceInfo h100 = fake_device("9.0", 132, 1755);
  probe->add_theoretical_peaks(h100);
  ASSERT_EQ(h100.theoretical_gflops.count("TENSOR.FP16.FP32"), 1u);
  EXPECT_NEAR(h100.theoretical_gflops["TENSOR.FP16.FP32"], 132 * 4096 * 1.755, 1e-6);
  EXPECT_NEAR(h100.theoretical_gflops["TENSOR.FP64.FP64"], 132 * 256 * 1.755, 1e-6);
  EXPECT_NEAR(h100.theoretical_gflops["TENSOR.INT8.INT32"], 132 * 8192 * 1.755, 1e-6);
  EXPECT_EQ(h100.theoretical_gflops.size(), 7u);
  EXPECT_NE(h100.theoretical_basis["TENSOR.FP16.FP32"].find("wgmma"), std::string::npos);
  EXPECT_NE(h100.theoretical_basis["TENSOR.FP16.FP32"].find("1755.0 MHz"), std::string::npos);

  DeviceInfo v100 = fake_device("7.0", 80, 1530);
  probe->add_theoretical_peaks(v100);
  EXPECT_EQ(v100.theoretical_gflops.size(), 2u);  // fp16 with both accumulators only
  EXPECT_NEAR(v100.theoretical_gflops["TENSOR.FP16.FP16"], 80 * 1024 * 1.53, 1e-6);

  DeviceInfo unknown = fake_device("6.1", 28, 1500);
  probe->add_theoretical_peaks(unknown);
  EXPECT_TRUE(unknown.theoretical_gflops.empty());
}

// The device name decides the part class: an RTX 4090's FP32-accumulate peak is the GeForce half
// rate and its basis says so; an L40S (same AD102 die) keeps the full rate.
TEST(TensorProbe, GeForcePartsGetTheHalfFp32AccumulateRate) {
  const Probe* probe = tensor_probe();
  if (probe == nullptr) GTEST_SKIP() << "built without CUDA";
  DeviceInfo rtx4090 = fake_device("8.9", 128, 2520);
  rtx4090.name = "NVIDIA GeForce RTX 4090";
  probe->add_theoretical_peaks(rtx4090);
  EXPECT_NEAR(rtx4090.theoretical_gflops["TENSOR.FP16.FP32"], 128 * 512 * 2.52, 1e-6);
  EXPECT_NEAR(rtx4090.theoretical_gflops["TENSOR.FP16.FP16"], 128 * 1024 * 2.52, 1e-6);
  EXPECT_NE(rtx4090.theoretical_basis["TENSOR.FP16.FP32"].find("GeForce: half"), std::string::npos);
  DeviceInfo l40s = fake_device("8.9", 142, 2520);
  l40s.name = "NVIDIA L40S";
  probe->add_theoretical_peaks(l40s);
  EXPECT_NEAR(l40s.theoretical_gflops["TENSOR.FP16.FP32"], 142 * 1024 * 2.52, 1e-6);
  // Blackwell GeForce halves FP32 accumulate too: the RTX 5090's peaks at its 2407 MHz boost are
  // the whitepaper's (results/reference/rtx5090.yaml: 209.5, 419 and 104.8 TFLOP/s).
  DeviceInfo rtx5090 = fake_device("12.0", 170, 2407);
  rtx5090.name = "NVIDIA GeForce RTX 5090";
  probe->add_theoretical_peaks(rtx5090);
  EXPECT_NEAR(rtx5090.theoretical_gflops["TENSOR.FP16.FP32"], 209500, 209500 * 0.001);
  EXPECT_NEAR(rtx5090.theoretical_gflops["TENSOR.FP16.FP16"], 419000, 419000 * 0.001);
  EXPECT_NEAR(rtx5090.theoretical_gflops["TENSOR.TF32.FP32"], 104800, 104800 * 0.001);
  EXPECT_EQ(rtx5090.theoretical_gflops.count("TENSOR.INT8.INT32"), 0u);
  EXPECT_NE(rtx5090.extra["theoretical_unknown.TENSOR.INT8.INT32"].find("no RTX 5090 INT8 or FP8"), std::string::npos);
}

}  // namespace
}  // namespace roofprobe
