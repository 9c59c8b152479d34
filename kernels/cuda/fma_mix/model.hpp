// Operation mix, work accounting and host arithmetic model of the CUDA "fma_mix" probe (FMA-mix
// ceilings, docs/ARCHITECTURE.md: peak x (2a + (1 - a)) / 2 for an FMA fraction a), shared by its
// kernel (kernels/cuda/fma_mix/kernel.cuh), its launcher and the host unit tests
// (tests/probes/fma_mix/model_test.cpp). No CUDA headers: the 16-bit formats are modelled here.
//
// Each thread keeps kMixChains independent chains in registers. A "block" applies
// kMixOpsPerBlock (8) dependent operations to every chain; for a = q/4 (q = 0..4) the block holds
// 2q FMAs and (8 - 2q) / 2 multiplies and as many adds:
//   position p: FMA when p / 2 < q, otherwise MUL at even p and ADD at odd p.
//   fma: x = x * m + c    mul: x = x * m    add: x = x + c
// FLOPs per block and chain: 2 x FMA + MUL + ADD = 8 + 2q = 8 (1 + a); every block issues 8
// instructions per chain, so at a fixed instruction rate the FLOP rate is peak x (1 + a) / 2.
// For half2/bfloat162 each instruction works on two values (FLOPs x 2).
//
// With m = 1 - 2^-k and c = 2^-j every operation keeps x bounded (x -> c / (1 - m)), so the
// values stay normal and the host can predict the device bit for bit with round-to-nearest-even
// arithmetic: double/float natively, the 16-bit formats via mix_round (exact double, one rounding).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/common/hd.hpp"

namespace roofprobe {

enum class MixPrecision : int { Fp64 = 0, Fp32 = 1, Fp16 = 2, Bf16 = 3 };
enum class MixOp : int { Fma = 0, Mul = 1, Add = 2 };

inline constexpr int kMixOpsPerBlock = 8;
inline constexpr int kMixChains = 8;              // independent chains (registers) per thread
inline constexpr int kMixBlocksPerIteration = 4;  // blocks the kernel unrolls per loop trip
inline constexpr int kMixMaxQuarters = 4;

// ---- the mix ------------------------------------------------------------------------------------
RP_HD constexpr MixOp mix_op(int quarters, int position) {
  return position / 2 < quarters ? MixOp::Fma : position % 2 == 0 ? MixOp::Mul : MixOp::Add;
}
RP_HD constexpr int mix_fma_ops(int quarters) { return 2 * quarters; }
RP_HD constexpr int mix_mul_ops(int quarters) { return (kMixOpsPerBlock - 2 * quarters) / 2; }
RP_HD constexpr int mix_add_ops(int quarters) { return (kMixOpsPerBlock - 2 * quarters) / 2; }
// FLOPs one block applies to one value (FMA = 2, MUL/ADD = 1).
RP_HD constexpr double mix_flops_per_block(int quarters) {
  return 2.0 * mix_fma_ops(quarters) + mix_mul_ops(quarters) + mix_add_ops(quarters);
}
// Values one instruction computes: 2 for the packed 16-bit types (half2, bfloat162).
RP_HD constexpr int mix_values_per_instruction(MixPrecision p) {
  return p == MixPrecision::Fp16 || p == MixPrecision::Bf16 ? 2 : 1;
}
// The theoretical ceiling as a fraction of the FMA peak: (2a + (1 - a)) / 2 = (1 + a) / 2.
RP_HD constexpr double mix_peak_fraction(int quarters) { return (4.0 + quarters) / 8.0; }

// FLOPs one launch does: every thread, chain, repetition and unrolled block.
RP_HD double mix_flops_per_launch(MixPrecision p, int quarters, std::int64_t threads, std::int64_t reps) {
  return static_cast<double>(threads) * kMixChains * static_cast<double>(reps) * kMixBlocksPerIteration *
         mix_flops_per_block(quarters) * mix_values_per_instruction(p);
}
// Warp instructions of one launch (each thread's instruction counted once per warp).
RP_HD double mix_warp_instructions_per_launch(std::int64_t threads, std::int64_t reps) {
  return static_cast<double>(threads) / 32 * kMixChains * static_cast<double>(reps) * kMixBlocksPerIteration *
         kMixOpsPerBlock;
}

// "0", "0.25", "0.5", "0.75", "1" -> 0..4; -1 for anything else.
inline int mix_quarters(const std::string& fraction) {
  static const char* const kTexts[] = {"0", "0.25", "0.5", "0.75", "1"};
  for (int q = 0; q <= kMixMaxQuarters; ++q)
    if (fraction == kTexts[q]) return q;
  return -1;
}

// ---- host arithmetic model ----------------------------------------------------------------------
// v rounded to nearest-even with `precision` significant bits (11: binary16, 8: bfloat16,
// 24: binary32) and a smallest normal exponent of `min_exponent` (-14, -126, -126): the quantum
// of the result's binade, subnormals included. No overflow handling (the chains stay small).
inline double mix_round(double v, int precision, int min_exponent) {
  if (v == 0 || !std::isfinite(v)) return v;
  int e = 0;
  std::frexp(v, &e);  // |v| in [2^(e-1), 2^e)
  const int binade = std::max(e - 1, min_exponent);
  const int quantum = binade - (precision - 1);
  // Scaling by a power of two is exact; nearbyint rounds half to even in the default mode.
  return std::ldexp(std::nearbyint(std::ldexp(v, -quantum)), quantum);
}

inline double mix_round(double v, MixPrecision p) {
  switch (p) {
    case MixPrecision::Fp16:
      return mix_round(v, 11, -14);
    case MixPrecision::Bf16:
      return mix_round(v, 8, -126);
    case MixPrecision::Fp32:
      return mix_round(v, 24, -126);
    case MixPrecision::Fp64:
      return v;
  }
  return v;
}

// Bits of the 16-bit formats <-> double (values already representable; normal or zero).
inline double mix_half_to_double(std::uint16_t h) {
  const int sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v = exponent == 0 ? std::ldexp(mantissa, -24) : std::ldexp(1024 + mantissa, exponent - 25);
  if (exponent == 0x1f) v = mantissa ? NAN : INFINITY;
  return sign ? -v : v;
}
inline std::uint16_t mix_double_to_half(double v) {  // v must be a normal binary16 value or 0
  std::uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  v = std::fabs(v);
  if (v == 0) return sign;
  int e = 0;
  const double f = std::frexp(v, &e);  // v = f 2^e, f in [0.5, 1)
  const auto mantissa = static_cast<std::uint16_t>(std::ldexp(f, 11) - 1024);
  return static_cast<std::uint16_t>(sign | ((e - 1 + 15) << 10) | mantissa);
}
inline double mix_bf16_to_double(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}
inline std::uint16_t mix_double_to_bf16(double v) {  // v must be representable in bfloat16
  const float f = static_cast<float>(v);
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return static_cast<std::uint16_t>(bits >> 16);
}

// The chain constants per precision: m = 1 - 2^-k, c = 2^-j (x converges towards c / (1 - m)).
// 16-bit types: k = 8, j = 6 (fixed point 4; 1 - 2^-8 has 8 significant bits, exact in bfloat16).
struct MixConstants {
  double m = 0;
  double c = 0;
};
inline MixConstants mix_constants(MixPrecision p) {
  if (p == MixPrecision::Fp16 || p == MixPrecision::Bf16) return {1.0 - 1.0 / 256, 1.0 / 64};
  return {1.0 - 1.0 / 4096, 1.0 / 1024};
}

// Start value of value `index` (thread x chain x lane): 1 + (index mod 64) / 64, exact in every
// format (7 significant bits).
RP_HD double mix_initial_value(std::uint64_t index) { return 1.0 + static_cast<double>(index % 64) / 64.0; }

// One operation on the host, as the device rounds it: fma rounds once; mul and add round their
// own result. Values as doubles holding numbers of precision p. The chains' values stay in
// [2^-7, 4] (start in [1, 2), fixed point 4), where x * m + c is exact in double for the 16-bit
// formats, so rounding the exact double once is the device's single rounding.
inline double mix_host_op(MixPrecision p, MixOp op, double x, const MixConstants& k) {
  switch (p) {
    case MixPrecision::Fp64: {
      if (op == MixOp::Fma) return std::fma(x, k.m, k.c);
      volatile double r = op == MixOp::Mul ? x * k.m : x + k.c;  // never contracted
      return r;
    }
    case MixPrecision::Fp32: {
      const float xf = static_cast<float>(x), mf = static_cast<float>(k.m), cf = static_cast<float>(k.c);
      if (op == MixOp::Fma) return std::fma(xf, mf, cf);
      volatile float r = op == MixOp::Mul ? xf * mf : xf + cf;
      return r;
    }
    case MixPrecision::Fp16:
    case MixPrecision::Bf16: {
      const double exact = op == MixOp::Fma ? x * k.m + k.c : op == MixOp::Mul ? x * k.m : x + k.c;
      return mix_round(exact, p);
    }
  }
  return x;
}

// One block of the mix with `quarters`, on one value.
inline double mix_host_block(MixPrecision p, int quarters, double x, const MixConstants& k) {
  for (int pos = 0; pos < kMixOpsPerBlock; ++pos) x = mix_host_op(p, mix_op(quarters, pos), x, k);
  return x;
}

// The value after `blocks` blocks. Stops early once the block maps x to itself (a fixed point:
// every later block leaves it there), which the bounded chains reach after some thousands of
// blocks (tests/probes/fma_mix/model_test.cpp checks it), so the host cost stays bounded however
// long the device ran.
inline double mix_host_chain(MixPrecision p, int quarters, double x, std::int64_t blocks) {
  const MixConstants k = mix_constants(p);
  for (std::int64_t b = 0; b < blocks; ++b) {
    const double next = mix_host_block(p, quarters, x, k);
    if (next == x) break;
    x = next;
  }
  return x;
}

}  // namespace roofprobe
