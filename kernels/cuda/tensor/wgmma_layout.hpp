// Host+device arithmetic of the Hopper warpgroup MMA path of the tensor probe (api=wgmma,
// kernels/cuda/tensor/wgmma_kernel.cuh): the shape it issues, the shared-memory layout of its A and B
// tiles and the 64-bit matrix descriptors that point the tensor cores at them, and which
// accumulator element each thread of the warpgroup holds. The kernel and the host (which packs
// the tiles and predicts the results) both use these functions; tests/probes/tensor/layout_test.cpp
// checks them against the PTX ISA ("Asynchronous Warpgroup Level Matrix Shared Memory Layout",
// "Matrix Descriptor Format", "Register Fragments ... accumulator D").
#pragma once

#include <cstdint>

#include "kernels/common/hd.hpp"

namespace roofprobe {

// wgmma.mma_async.m64nNkK: one warpgroup (4 warps, 128 threads) computes a 64 x N tile; K fills
// 32 bytes of a tile row (kWgmmaK = 16 for f16/bf16; tensor_wgmma_shape has every type's). N =
// 128: 64 f32 (or s32) accumulator registers per thread (32 with f16 accumulate), so several
// warpgroups fit on an SM and hide each other's commit/wait bubbles.
inline constexpr int kWgmmaM = 64, kWgmmaN = 128, kWgmmaK = 16;
inline constexpr int kWgmmaThreads = 128;  // one warpgroup per block
// Per loop iteration each warpgroup issues kWgmmaSteps wgmma into its accumulator, alternating
// +B and -B (imm-scale-b = -1; int8, which has no scale immediates: a second tile holding -B), as
// one commit group; the accumulator is back at C after each.
inline constexpr int kWgmmaSteps = 8;
inline constexpr int kWgmmaAccRegs = kWgmmaM * kWgmmaN / kWgmmaThreads;  // 64 f32 per thread
// A tile row holds 32 bytes of K whatever the element type (16 f16/bf16, 8 tf32, 32 e4m3): the
// kernel stages it as 16 units of 16 bits, so one layout (wgmma_tile_offset, in units) serves
// every type; the host packs elements into the units little-endian (element j at byte j x size).
inline constexpr int kWgmmaRowUnits = 16;

// Warpgroup-level wgmma one warpgroup issues in a launch of `reps` iterations (plus the last +B).
RP_HD constexpr long long wgmma_per_warpgroup(long long reps) { return reps * kWgmmaSteps + 1; }

// ---- shared memory: the canonical K-major layout without swizzle ----------------------------
// Operands are tiles of "core matrices" of 8 rows x 16 bytes (8 f16/bf16 along K), each stored
// as 128 contiguous bytes, row after row. Core matrices follow each other along K first (the
// leading dimension, kWgmmaLeadingBytes apart), then along M or N (the stride dimension,
// kWgmmaStrideBytes apart). A is M x K (row m, column k), B is N x K (B's column n stored as a
// row: "K-major", the layout wgmma reads with imm-trans-b = 0).
inline constexpr int kWgmmaCoreRows = 8, kWgmmaCoreBytes = 128;
inline constexpr int kWgmmaLeadingBytes = kWgmmaCoreBytes;                      // next core matrix in K
inline constexpr int kWgmmaStrideBytes = kWgmmaCoreBytes * (kWgmmaK * 2 / 16);  // next 8 rows
inline constexpr int kWgmmaATileBytes = kWgmmaM * kWgmmaK * 2;                  // 2 KiB
inline constexpr int kWgmmaBTileBytes = kWgmmaN * kWgmmaK * 2;                  // 4 KiB

// Byte offset, in a tile, of the 16-bit element at (row, k): row is m for A, n for B.
RP_HD constexpr int wgmma_tile_offset(int row, int k) {
  return (row / kWgmmaCoreRows) * kWgmmaStrideBytes + (k / 8) * kWgmmaLeadingBytes + (row % kWgmmaCoreRows) * 16 +
         (k % 8) * 2;
}

// The 16-bit unit of two int8 elements with both negated (each byte on its own: -x of an int8 in
// two's complement, no carry into its neighbour). Integer wgmma has no imm-scale-b, so the int8
// path stages -B as a tile of its own from B's units; the probe's int8 values ({-2, -1, 1, 2})
// never hold -128, whose negation would not fit.
RP_HD constexpr std::uint16_t wgmma_negate_s8_pair(std::uint16_t unit) {
  const unsigned lo = (0x100u - (unit & 0xFFu)) & 0xFFu;
  const unsigned hi = (0x100u - ((unit >> 8) & 0xFFu)) & 0xFFu;
  return static_cast<std::uint16_t>(lo | (hi << 8));
}

// ---- matrix descriptor (PTX ISA 9.7.15.5.1, sm_90) ------------------------------------------
//   bits  0-13  start address >> 4 (shared-memory byte address)
//   bits 16-29  leading dimension byte offset >> 4
//   bits 32-45  stride dimension byte offset >> 4
//   bits 49-51  matrix base offset (0: the tile does not start inside a swizzle pattern)
//   bits 62-63  swizzle mode: 0 none, 1 128B, 2 64B, 3 32B
enum class WgmmaSwizzle : int { None = 0, B128 = 1, B64 = 2, B32 = 3 };

RP_HD constexpr std::uint64_t wgmma_descriptor(std::uint32_t smem_address, std::uint32_t leading_bytes,
                                               std::uint32_t stride_bytes, WgmmaSwizzle swizzle = WgmmaSwizzle::None,
                                               std::uint32_t base_offset = 0) {
  return (static_cast<std::uint64_t>((smem_address & 0x3FFFF) >> 4)) |
         (static_cast<std::uint64_t>((leading_bytes & 0x3FFFF) >> 4) << 16) |
         (static_cast<std::uint64_t>((stride_bytes & 0x3FFFF) >> 4) << 32) |
         (static_cast<std::uint64_t>(base_offset & 0x7) << 49) |
         (static_cast<std::uint64_t>(static_cast<int>(swizzle) & 0x3) << 62);
}

// ---- accumulator D (m64nNk16, f32): which element thread t's register r holds ----------------
// Warp w = t / 32 of the warpgroup owns rows 16w .. 16w + 15; within it the layout of the
// mma.m16n8 accumulator repeats over N in blocks of 8 columns: register r is in column block
// r / 4, at row (lane / 4) + 8 * ((r / 2) % 2) and column 2 * (lane % 4) + r % 2.
struct WgmmaCoord {
  int row = 0, col = 0;
};

RP_HD constexpr WgmmaCoord wgmma_acc_coord(int thread, int r) {
  const int warp = thread / 32, lane = thread % 32;
  return {16 * warp + lane / 4 + 8 * ((r / 2) % 2), 8 * (r / 4) + 2 * (lane % 4) + r % 2};
}

// ---- A from registers (wgmma's RS form, m64nNk16 with 16-bit A) ----------------------------
// Warp w of the warpgroup holds rows 16w .. 16w + 15 of A (64 x 16) as mma.m16n8k16 holds its
// A (PTX ISA, "Register Fragments": matrix A of wgmma .m64nNk16): 4 registers of two elements;
// element e (register e / 2, low half first) of lane l sits at row g + 8 ((e / 2) % 2) and column
// 2q + e % 2 + 8 (e / 4) of the warp's rows, g = l / 4, q = l % 4.
inline constexpr int kWgmmaARegs = 4;

RP_HD constexpr WgmmaCoord wgmma_a_reg_coord(int thread, int e) {
  const int warp = thread / 32, lane = thread % 32, g = lane / 4, q = lane % 4;
  return {16 * warp + g + 8 * ((e / 2) % 2), 2 * q + e % 2 + 8 * (e / 4)};
}

// ---- accumulator D with f16 accumulate: the same elements, two per 32-bit register ----------
// Register j holds the elements of f32 registers 2j (low half) and 2j + 1 (high half), as the
// mma.m16n8 f16 accumulator packs d0,d1 and d2,d3 (PTX ISA; CUTLASS gives the f16 and f32 GMMA
// accumulators one layout, CLayout_64xN): 32 registers per thread for m64n128.
inline constexpr int kWgmmaAccRegsF16 = kWgmmaAccRegs / 2;

RP_HD constexpr WgmmaCoord wgmma_acc_f16_coord(int thread, int reg, int half) {
  return wgmma_acc_coord(thread, 2 * reg + half);
}

}  // namespace roofprobe
