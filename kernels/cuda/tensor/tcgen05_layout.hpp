// Host+device arithmetic of the Blackwell datacenter path of the tensor probe (sm_100a,
// kernels/cuda/tensor/tcgen05_kernel.cuh): the tcgen05.mma shape it issues, the shared-memory descriptor
// (a new format: a version field and 3 swizzle bits) and the 32-bit instruction descriptor that
// names the element types, the negation of B and the shape, for kinds f16, tf32, f8f6f4 and i8. The tiles use the same
// canonical no-swizzle K-major layout of 8 x 16-byte core matrices as the Hopper path
// (kernels/cuda/tensor/wgmma_layout.hpp). tests/probes/tensor/layout_test.cpp checks the fields against the PTX ISA
// ("Shared memory descriptor", "Instruction descriptor" of tcgen05.mma kinds f16, tf32, f8f6f4, i8).
#pragma once

#include <cstdint>

#include "kernels/common/hd.hpp"
#include "kernels/cuda/tensor/wgmma_layout.hpp"

namespace roofprobe {

// tcgen05.mma.cta_group::1: one thread issues a 128 x 64 x K MMA for the CTA; D lives in tensor
// memory, row i in TMEM lane i, column j in TMEM column j (M = 128: one lane per row). K fills the
// 32 bytes of a tile row as on the Hopper path: 16 for kind::f16 (kTcgen05K), 8 for kind::tf32,
// 32 for kind::f8f6f4 (e4m3) and kind::i8.
inline constexpr int kTcgen05M = 128, kTcgen05N = 64, kTcgen05K = 16;
inline constexpr int kTcgen05RowUnits = kWgmmaRowUnits;  // 16-bit units per 32-byte tile row
inline constexpr int kTcgen05Threads = 128;              // 4 warps: warp w reads and writes TMEM lanes 32w..32w+31
inline constexpr int kTcgen05Steps = 8;                  // per iteration, +B and -B alternating, one commit
inline constexpr int kTcgen05Columns = 64;               // TMEM columns allocated (a power of 2 >= 32, >= N)
inline constexpr int kTcgen05ATileBytes = kTcgen05M * kTcgen05K * 2;  // 4 KiB
inline constexpr int kTcgen05BTileBytes = kTcgen05N * kTcgen05K * 2;  // 2 KiB

RP_HD constexpr long long tcgen05_per_cta(long long reps) { return reps * kTcgen05Steps + 1; }

// Shared-memory descriptor (sm_100): bits 0-13 start address >> 4, 16-29 leading byte offset >> 4,
// 32-45 stride byte offset >> 4, 46-48 the fixed version 0b001, 49-51 base offset, 52 leading
// offset mode (0: relative), 61-63 swizzle (0 none, 1 128B with 32B atom, 2 128B, 4 64B, 6 32B).
RP_HD constexpr std::uint64_t tcgen05_smem_descriptor(std::uint32_t smem_address, std::uint32_t leading_bytes,
                                                      std::uint32_t stride_bytes) {
  return (static_cast<std::uint64_t>((smem_address & 0x3FFFF) >> 4)) |
         (static_cast<std::uint64_t>((leading_bytes & 0x3FFFF) >> 4) << 16) |
         (static_cast<std::uint64_t>((stride_bytes & 0x3FFFF) >> 4) << 32) | (std::uint64_t{1} << 46);
}

// Instruction descriptor of kind::tf32, f16, f8f6f4 and i8 (dense): bits 4-5 D type, 7-9 A type
// and 10-12 B type, 13/14 negate A/B, 15/16 A/B major (0: K-major), 17-22 N >> 3, 24-28 M >> 4
// (PTX ISA, "Instruction descriptor format for .kind::tf32, .kind::f16, .kind::f8f6f4 and
// .kind::i8"). The type codes depend on the kind: D f32 = 1 (s32 = 2 for i8); A/B f16 = 0 and
// bf16 = 1 (kind::f16), tf32 = 2 (kind::tf32), e4m3 = 0 (kind::f8f6f4), signed 8-bit = 1
// (kind::i8, which has no negation).
inline constexpr std::uint32_t kTcgen05DF32 = 1, kTcgen05DS32 = 2;
inline constexpr std::uint32_t kTcgen05F16 = 0, kTcgen05Bf16 = 1, kTcgen05Tf32 = 2, kTcgen05E4m3 = 0, kTcgen05S8 = 1;

RP_HD constexpr std::uint32_t tcgen05_instr_descriptor(std::uint32_t d_type, std::uint32_t ab_type, bool negate_b) {
  return (d_type << 4) | (ab_type << 7) | (ab_type << 10) | ((negate_b ? 1u : 0u) << 14) |
         (static_cast<std::uint32_t>(kTcgen05N >> 3) << 17) | (static_cast<std::uint32_t>(kTcgen05M >> 4) << 24);
}

// A TMEM address: lane in bits 16-31, column in bits 0-15 (added to the allocation's base).
RP_HD constexpr std::uint32_t tcgen05_tmem_address(std::uint32_t base, int lane, int column) {
  return base + (static_cast<std::uint32_t>(lane) << 16) + static_cast<std::uint32_t>(column);
}

}  // namespace roofprobe
