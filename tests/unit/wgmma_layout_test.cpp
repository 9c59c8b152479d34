// The Hopper wgmma path's layout arithmetic (kernels/common/wgmma_layout.hpp) against the PTX ISA:
// descriptor bit fields, the canonical no-swizzle K-major tile of 8 x 16-byte core matrices, and
// the m64nNk16 accumulator fragment, which must be the mma.m16n8 accumulator (already verified on
// an H100 by the mma.sync path) repeated per warp and per 8 columns.
#include "kernels/common/wgmma_layout.hpp"

#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "kernels/common/tensor_shapes.hpp"

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
  const std::uint64_t used = ((1ull << 14) - 1) | (((1ull << 14) - 1) << 16) | (((1ull << 14) - 1) << 32) |
                             (7ull << 49) | (3ull << 62);
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
  EXPECT_DOUBLE_EQ(wgmma_flops_per_instruction(), 2.0 * 64 * 128 * 16);
  EXPECT_DOUBLE_EQ(wgmma_flops_per_instruction(), tensor_flops_per_instruction(tensor_wgmma_shape(TensorType::Fp16Fp32)));
  EXPECT_EQ(wgmma_per_warpgroup(0), 1);
  EXPECT_EQ(wgmma_per_warpgroup(10), 10 * kWgmmaSteps + 1);
  EXPECT_EQ(kWgmmaSteps % 2, 0);  // +B, -B pairs: back at C after each iteration
  EXPECT_EQ(tensor_shape(TensorType::Bf16Fp32, TensorApi::Wgmma).min_cc, 90);
  EXPECT_EQ(tensor_shape(TensorType::Fp64Fp64, TensorApi::Wgmma).min_cc, 0);  // no path (yet)
}

}  // namespace
}  // namespace roofprobe
