// The Hopper wgmma and Blackwell tcgen05 paths' layout arithmetic (kernels/cuda/tensor/wgmma_layout.hpp,
// kernels/cuda/tensor/tcgen05_layout.hpp) against the PTX ISA:
// descriptor bit fields, the canonical no-swizzle K-major tile of 8 x 16-byte core matrices, and
// the m64nNk16 accumulator fragment, which must be the mma.m16n8 accumulator (already verified on
// an H100 by the mma.sync path) repeated per warp and per 8 columns.
#include "kernels/cuda/tensor/wgmma_layout.hpp"
#include "kernels/cuda/tensor/tcgen05_layout.hpp"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "kernels/cuda/tensor/model.hpp"

namespace roofprobe {
namespace {

std::uint64_t field(std::uint64_t d, int lo, int bits) { return (d >> lo) & ((1ull << bits) - 1); }

TEST(WgmmaLayout, DescriptorFieldsAreThePtxIsas) {
  const std::uint64_t d = wgmma_descriptor(0x2A40, 128, 256);
  EXPECT_EQ(field(d, 0, 14), 0x2A40u >> 4);  // start address, 16-byte units
  EXPECT_EQ(field(d, 16, 14), 128u >> 4);    // leading dimension byte offset
  EXPECT_EQ(field(d, 32, 14), 256u >> 4);    // stride dimension byte offset
  EXPECT_EQ(field(d, 49, 3), 0u);            // base offset
  EXPECT_EQ(field(d, 62, 2), 0u);            // no swizzle
  // Nothing outside the fields.
  const std::uint64_t used =
      ((1ull << 14) - 1) | (((1ull << 14) - 1) << 16) | (((1ull << 14) - 1) << 32) | (7ull << 49) | (3ull << 62);
  EXPECT_EQ(wgmma_descriptor(0x3FFF0, 0x3FFF0, 0x3FFF0, WgmmaSwizzle::B32, 7) & ~used, 0u);
  EXPECT_EQ(field(wgmma_descriptor(0, 0, 0, WgmmaSwizzle::B128), 62, 2), 1u);
  EXPECT_EQ(field(wgmma_descriptor(0, 0, 0, WgmmaSwizzle::B64), 62, 2), 2u);
  EXPECT_EQ(field(wgmma_descriptor(0, 0, 0, WgmmaSwizzle::B32), 62, 2), 3u);
  // The start address field holds shared-memory addresses up to 256 KiB.
  EXPECT_EQ(field(wgmma_descriptor(228 * 1024 - 16, 128, 256), 0, 14), (228u * 1024 - 16) >> 4);
}

TEST(WgmmaLayout, TilesAreCoreMatricesOfEightSixteenByteRows) {
  for (int rows : {kWgmmaM, kWgmmaN}) {
    std::set<int> offsets;
    for (int r = 0; r < rows; ++r)
      for (int k = 0; k < kWgmmaK; ++k) {
        const int o = wgmma_tile_offset(r, k);
        EXPECT_EQ(o % 2, 0);
        offsets.insert(o);
        // Eight consecutive K elements of a row are one 16-byte row of a core matrix.
        if (k % 8 != 0) EXPECT_EQ(o, wgmma_tile_offset(r, k - 1) + 2);
        // The rows of a core matrix follow each other 16 bytes apart.
        if (r % 8 != 0) EXPECT_EQ(o, wgmma_tile_offset(r - 1, k) + 16);
      }
    // Dense: every 16-bit slot of the tile exactly once.
    EXPECT_EQ(static_cast<int>(offsets.size()), rows * kWgmmaK);
    EXPECT_EQ(*offsets.rbegin(), rows * kWgmmaK * 2 - 2);
  }
  EXPECT_EQ(kWgmmaATileBytes, 64 * 16 * 2);
  EXPECT_EQ(kWgmmaBTileBytes, 128 * 16 * 2);
  // The descriptor's offsets: the next core matrix along K (leading) and along M/N (stride).
  EXPECT_EQ(wgmma_tile_offset(0, 8) - wgmma_tile_offset(0, 0), kWgmmaLeadingBytes);
  EXPECT_EQ(wgmma_tile_offset(8, 0) - wgmma_tile_offset(0, 0), kWgmmaStrideBytes);
  EXPECT_EQ(kWgmmaLeadingBytes % 16, 0);
  EXPECT_EQ(kWgmmaStrideBytes % 16, 0);
}

TEST(WgmmaLayout, AccumulatorIsTheMmaM16n8LayoutPerWarpAndPerEightColumns) {
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < kWgmmaThreads; ++t)
    for (int r = 0; r < kWgmmaAccRegs; ++r) {
      const WgmmaCoord x = wgmma_acc_coord(t, r);
      ASSERT_GE(x.row, 0);
      ASSERT_LT(x.row, kWgmmaM);
      ASSERT_GE(x.col, 0);
      ASSERT_LT(x.col, kWgmmaN);
      seen.insert({x.row, x.col});
      // Warp w holds rows 16w .. 16w + 15.
      EXPECT_EQ(x.row / 16, t / 32);
      // mma.m16n8 (f32 accumulate): element e of lane l at tensor_mma_c_coord.
      const FragCoord c = tensor_mma_c_coord(TensorType::Fp16Fp32, t % 32, r % 4);
      EXPECT_EQ(x.row, 16 * (t / 32) + c.row) << "thread " << t << " register " << r;
      EXPECT_EQ(x.col, 8 * (r / 4) + c.col) << "thread " << t << " register " << r;
    }
  EXPECT_EQ(static_cast<int>(seen.size()), kWgmmaM * kWgmmaN);  // every element exactly once
}

TEST(WgmmaLayout, WorkCounts) {
  // One wgmma is 2 x 64 x 128 x K FLOPs, K per type (k16 f16, k8 tf32, k32 e4m3 and int8).
  EXPECT_DOUBLE_EQ(tensor_flops_per_instruction(tensor_wgmma_shape(TensorType::Fp16Fp32)), 2.0 * 64 * 128 * 16);
  EXPECT_DOUBLE_EQ(tensor_flops_per_instruction(tensor_wgmma_shape(TensorType::Tf32Fp32)), 2.0 * 64 * 128 * 8);
  EXPECT_DOUBLE_EQ(tensor_flops_per_instruction(tensor_wgmma_shape(TensorType::Int8Int32)), 2.0 * 64 * 128 * 32);
  EXPECT_EQ(wgmma_per_warpgroup(0), 1);
  EXPECT_EQ(wgmma_per_warpgroup(10), 10 * kWgmmaSteps + 1);
  EXPECT_EQ(kWgmmaSteps % 2, 0);  // +B, -B pairs: back at C after each iteration
  EXPECT_EQ(tensor_shape(TensorType::Bf16Fp32, TensorApi::Wgmma).min_cc, 90);
  EXPECT_EQ(tensor_shape(TensorType::Fp64Fp64, TensorApi::Wgmma).min_cc, 0);  // no path (yet)
  // int8: m64n128k32, 32 int8 per 32-byte tile row like e4m3.
  EXPECT_EQ(tensor_shape(TensorType::Int8Int32, TensorApi::Wgmma).k, 32);
  EXPECT_EQ(tensor_shape(TensorType::Int8Int32, TensorApi::Wgmma).k * 8, kWgmmaRowUnits * 16);
}

// A from registers (wgmma.rs): per warp the mma.m16n8k16 A fragment (verified on an H100 by the
// mma.sync path) on its 16 rows; the warpgroup's 4 x 8 elements per thread cover 64 x 16 once.
TEST(WgmmaLayout, RegisterAIsTheMmaM16n8k16FragmentPerWarp) {
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < kWgmmaThreads; ++t)
    for (int e = 0; e < 2 * kWgmmaARegs; ++e) {
      const WgmmaCoord x = wgmma_a_reg_coord(t, e);
      const FragCoord m = tensor_mma_a_coord(TensorType::Fp16Fp32, t % 32, e);
      EXPECT_EQ(x.row, 16 * (t / 32) + m.row) << t << " " << e;
      EXPECT_EQ(x.col, m.col) << t << " " << e;
      seen.insert({x.row, x.col});
    }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kWgmmaM * kWgmmaK));
  EXPECT_EQ(tensor_shape(TensorType::Fp16Fp32, TensorApi::WgmmaRs).k, kWgmmaK);
  EXPECT_EQ(tensor_shape(TensorType::Tf32Fp32, TensorApi::WgmmaRs).m, 0);  // f16/bf16 only
}

// f16 accumulate: 32 registers of two halves cover the 64 x 128 tile once, each half where the
// f32 layout has it (pairs of adjacent columns in one register, as mma.m16n8's d0,d1).
TEST(WgmmaLayout, F16AccumulatorPacksTheF32LayoutInPairs) {
  std::set<std::pair<int, int>> seen;
  for (int t = 0; t < kWgmmaThreads; ++t)
    for (int j = 0; j < kWgmmaAccRegsF16; ++j) {
      const WgmmaCoord lo = wgmma_acc_f16_coord(t, j, 0), hi = wgmma_acc_f16_coord(t, j, 1);
      EXPECT_EQ(lo.row, hi.row);
      EXPECT_EQ(hi.col, lo.col + 1);
      EXPECT_EQ(lo.col % 2, 0);
      seen.insert({lo.row, lo.col});
      seen.insert({hi.row, hi.col});
    }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(kWgmmaM * kWgmmaN));
  EXPECT_EQ(kWgmmaAccRegsF16, 32);
}

// The int8 path's -B tile: each byte of a unit negated on its own, as the encoder writes -v.
TEST(WgmmaLayout, NegatedInt8UnitsHoldEachElementNegated) {
  for (int lo = -127; lo <= 127; ++lo) {
    for (int hi : {-127, -2, -1, 0, 1, 2, 127}) {
      const auto unit = static_cast<std::uint16_t>(static_cast<std::uint8_t>(lo) | static_cast<std::uint8_t>(hi) << 8);
      const std::uint16_t neg = wgmma_negate_s8_pair(unit);
      EXPECT_EQ(static_cast<std::int8_t>(neg & 0xFF), -lo) << lo << " " << hi;
      EXPECT_EQ(static_cast<std::int8_t>(neg >> 8), -hi) << lo << " " << hi;
      EXPECT_EQ(wgmma_negate_s8_pair(neg), unit);
    }
  }
  // The encoder's bytes for the probe's int8 values and their negations agree with it.
  for (double v : {-2.0, -1.0, 1.0, 2.0}) {
    std::uint64_t plus = 0, minus = 0;
    ASSERT_TRUE(encode_tensor_input(TensorInput::Int8, v, &plus));
    ASSERT_TRUE(encode_tensor_input(TensorInput::Int8, -v, &minus));
    EXPECT_EQ(wgmma_negate_s8_pair(static_cast<std::uint16_t>(plus)) & 0xFF, minus);
  }
}

TEST(Tcgen05Layout, SharedMemoryDescriptorHasItsVersionField) {
  const std::uint64_t d = tcgen05_smem_descriptor(0x2A40, 128, 256);
  EXPECT_EQ(field(d, 0, 14), 0x2A40u >> 4);
  EXPECT_EQ(field(d, 16, 14), 128u >> 4);
  EXPECT_EQ(field(d, 32, 14), 256u >> 4);
  EXPECT_EQ(field(d, 46, 3), 1u);  // the fixed version 0b001 of sm_100 descriptors
  EXPECT_EQ(field(d, 49, 3), 0u);  // base offset
  EXPECT_EQ(field(d, 52, 1), 0u);  // leading offset relative
  EXPECT_EQ(field(d, 61, 3), 0u);  // no swizzle
}

TEST(Tcgen05Layout, InstructionDescriptorOfKindF16) {
  const std::uint32_t f16 = tcgen05_instr_descriptor(kTcgen05DF32, kTcgen05F16, false);
  EXPECT_EQ(field(f16, 0, 4), 0u);   // dense, no saturation
  EXPECT_EQ(field(f16, 4, 2), 1u);   // D is f32
  EXPECT_EQ(field(f16, 7, 3), 0u);   // A f16
  EXPECT_EQ(field(f16, 10, 3), 0u);  // B f16
  EXPECT_EQ(field(f16, 13, 2), 0u);  // no negation
  EXPECT_EQ(field(f16, 15, 2), 0u);  // A and B K-major
  EXPECT_EQ(field(f16, 17, 6), static_cast<std::uint64_t>(kTcgen05N >> 3));
  EXPECT_EQ(field(f16, 24, 5), static_cast<std::uint64_t>(kTcgen05M >> 4));
  EXPECT_EQ(field(f16, 23, 1) + field(f16, 29, 3), 0u);  // reserved and max-shift bits clear
  const std::uint32_t bf16_neg = tcgen05_instr_descriptor(kTcgen05DF32, kTcgen05Bf16, true);
  EXPECT_EQ(field(bf16_neg, 7, 3), 1u);
  EXPECT_EQ(field(bf16_neg, 10, 3), 1u);
  EXPECT_EQ(field(bf16_neg, 14, 1), 1u);  // -B
  EXPECT_EQ(field(bf16_neg, 13, 1), 0u);
  EXPECT_EQ(bf16_neg ^ tcgen05_instr_descriptor(kTcgen05DF32, kTcgen05Bf16, false), 1u << 14);  // only -B differs
}

// The other kinds' type codes (PTX ISA, instruction descriptor table): kind::tf32 A/B = 2 with an
// f32 D; kind::f8f6f4 e4m3 = 0; kind::i8 signed = 1 with an s32 D (2), never negated.
TEST(Tcgen05Layout, InstructionDescriptorOfKindsTf32F8f6f4AndI8) {
  const std::uint32_t tf32 = tcgen05_instr_descriptor(kTcgen05DF32, kTcgen05Tf32, true);
  EXPECT_EQ(field(tf32, 4, 2), 1u);
  EXPECT_EQ(field(tf32, 7, 3), 2u);
  EXPECT_EQ(field(tf32, 10, 3), 2u);
  EXPECT_EQ(field(tf32, 14, 1), 1u);
  const std::uint32_t e4m3 = tcgen05_instr_descriptor(kTcgen05DF32, kTcgen05E4m3, false);
  EXPECT_EQ(field(e4m3, 7, 6), 0u);
  const std::uint32_t s8 = tcgen05_instr_descriptor(kTcgen05DS32, kTcgen05S8, false);
  EXPECT_EQ(field(s8, 4, 2), 2u);
  EXPECT_EQ(field(s8, 7, 3), 1u);
  EXPECT_EQ(field(s8, 10, 3), 1u);
  EXPECT_EQ(field(s8, 0, 4) + field(s8, 13, 4), 0u);  // dense, no saturation, no negation, K-major
  // K fills the same 32-byte tile rows for every kind.
  for (TensorType t :
       {TensorType::Fp16Fp32, TensorType::Bf16Fp32, TensorType::Tf32Fp32, TensorType::Fp8Fp32, TensorType::Int8Int32})
    EXPECT_EQ(tensor_tcgen05_shape(t).k * tensor_input_bits(tensor_input(t)), kTcgen05RowUnits * 16)
        << tensor_type_name(t);
  EXPECT_EQ(tensor_tcgen05_shape(TensorType::Fp64Fp64).m, 0);
}

TEST(Tcgen05Layout, ShapeTilesAndTensorMemory) {
  // kind::f16 with cta_group::1: M 64 or 128, N a multiple of 16 (M = 128) up to 256, K 16.
  EXPECT_EQ(kTcgen05M, 128);
  EXPECT_EQ(kTcgen05N % 16, 0);
  EXPECT_LE(kTcgen05N, 256);
  EXPECT_EQ(kTcgen05K, kWgmmaK);
  // TMEM allocations are powers of two from 32 columns, and hold N f32 columns.
  EXPECT_GE(kTcgen05Columns, 32);
  EXPECT_EQ(kTcgen05Columns & (kTcgen05Columns - 1), 0);
  EXPECT_GE(kTcgen05Columns, kTcgen05N);
  // One TMEM lane per row of D: a warp's 32 lanes are its 32 rows.
  EXPECT_EQ(kTcgen05Threads, kTcgen05M);
  EXPECT_EQ(tcgen05_tmem_address(0x10, 32, 5), (32u << 16) + 0x15u);
  // The tiles use the Hopper path's core-matrix layout: dense over M x K and N x K.
  EXPECT_EQ(wgmma_tile_offset(kTcgen05M - 1, kTcgen05K - 1), kTcgen05ATileBytes - 2);
  EXPECT_EQ(wgmma_tile_offset(kTcgen05N - 1, kTcgen05K - 1), kTcgen05BTileBytes - 2);
  EXPECT_DOUBLE_EQ(tensor_flops_per_instruction(tensor_tcgen05_shape(TensorType::Fp16Fp32)), 2.0 * 128 * 64 * 16);
  EXPECT_DOUBLE_EQ(tensor_flops_per_instruction(tensor_tcgen05_shape(TensorType::Fp8Fp32)), 2.0 * 128 * 64 * 32);
  EXPECT_EQ(tcgen05_per_cta(3), 3 * kTcgen05Steps + 1);
}

}  // namespace
}  // namespace roofprobe
