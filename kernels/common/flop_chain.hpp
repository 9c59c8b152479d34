// The ERT-style arithmetic chain shared by the CPU and CUDA FLOP probes (and by the host code
// that predicts their results): per element, a data-dependent chain of exactly K FLOPs.
//
//   FMA form:   K/2 times  x = fma(x, a, b)          (each FMA counts 2 FLOPs)
//   noFMA form: K/2 times  x = x * a; x = x + b      (FMUL + FADD, never fused)
//   odd K:      one extra  x = x + b
//
// Each step depends on the previous one, so nothing can be hoisted or folded; a and b are run-time
// values so the compiler cannot evaluate the chain. With a = 1 - 2^-12 and small b, x converges
// towards b / (1 - a) and stays finite for any K. Ops supplies fma/mul/add for the element type
// (scalar double/float, a SIMD vector, half2 ...), so one template serves every backend.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "kernels/common/hd.hpp"

namespace roofprobe {

enum class FlopForm : int { Fma = 0, NoFma = 1 };

// FLOPs one element receives from a chain of K; exact, by construction of flop_chain.
RP_HD constexpr double chain_flops_per_element(int k) { return static_cast<double>(k); }

// Instructions the chain issues per element (per SIMD lane group on the CPU, per thread on
// the GPU): FMA form K/2 FMAs (+1 add if odd), noFMA form K/2 multiplies + K/2 adds (+1 add).
RP_HD constexpr int chain_fma_ops(int k, FlopForm form) { return form == FlopForm::Fma ? k / 2 : 0; }
RP_HD constexpr int chain_mul_ops(int k, FlopForm form) { return form == FlopForm::NoFma ? k / 2 : 0; }
RP_HD constexpr int chain_add_ops(int k, FlopForm form) { return (form == FlopForm::NoFma ? k / 2 : 0) + (k % 2); }

template <int K, FlopForm Form, class Ops, class T>
RP_HD T flop_chain(T x, T a, T b) {
  if constexpr (Form == FlopForm::Fma) {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int i = 0; i < K / 2; ++i) x = Ops::fma(x, a, b);
  } else {
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
    for (int i = 0; i < K / 2; ++i) {
      x = Ops::mul(x, a);
      x = Ops::add(x, b);
    }
  }
  if constexpr (K % 2 == 1) x = Ops::add(x, b);
  return x;
}

// The same chain applied to N independent values in lock step: step i of every value before
// step i+1 of any, so N chains are in flight at once and the FMA latency is hidden (a CPU core
// needs latency x pipes independent chains). Each value receives exactly flop_chain<K, Form>.
template <int K, FlopForm Form, class Ops, int N, class T>
RP_HD void flop_chain_interleaved(T (&x)[N], T a, T b) {
  if constexpr (Form == FlopForm::Fma) {
    for (int i = 0; i < K / 2; ++i)
      for (int j = 0; j < N; ++j) x[j] = Ops::fma(x[j], a, b);
  } else {
    for (int i = 0; i < K / 2; ++i) {
      for (int j = 0; j < N; ++j) x[j] = Ops::mul(x[j], a);
      for (int j = 0; j < N; ++j) x[j] = Ops::add(x[j], b);
    }
  }
  if constexpr (K % 2 == 1)
    for (int j = 0; j < N; ++j) x[j] = Ops::add(x[j], b);
}

// The FLOP counts the probes sweep (ERT's powers of two up to 1024).
inline constexpr int kChainLengths[] = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};

// Calls f(std::integral_constant<int, K>) for the run-time k, if k is one of kChainLengths.
// Returns false for any other k. Lets one kernel template serve every FLOP count without a
// rebuild per value (ERT recompiles per value).
template <class F>
bool dispatch_chain_length(int k, F&& f) {
  // clang-format off (a list of macro cases, which clang-format 14 re-indents on every pass)
  switch (k) {
#define RP_CHAIN_CASE(n)                 \
  case n:                                \
    f(std::integral_constant<int, n>{}); \
    return true;
    RP_CHAIN_CASE(1)
    RP_CHAIN_CASE(2)
    RP_CHAIN_CASE(4)
    RP_CHAIN_CASE(8)
    RP_CHAIN_CASE(16)
    RP_CHAIN_CASE(32)
    RP_CHAIN_CASE(64)
    RP_CHAIN_CASE(128)
    RP_CHAIN_CASE(256)
    RP_CHAIN_CASE(512)
    RP_CHAIN_CASE(1024)
#undef RP_CHAIN_CASE
    default:
      return false;
  }
  // clang-format on
}

// ---- packed 16-bit and integer elements (the CUDA FLOP probe) -----------------------------
// fp16 and bf16 are processed two at a time (f16x2 / bf16x2 instructions): one stored ELEMENT is
// one 32-bit word holding two 16-bit values (lanes), and each lane receives the whole chain of K.
// FLOPs are counted per 16-bit value, as bytes are: a word of two lanes receives 2 K FLOPs and
// moves 4 bytes each way, so K FLOPs per 2 bytes, the same intensity axis as a scalar fp16 value.
// A half2 FMA is therefore 2 lanes x 2 FLOPs. int32 counts a multiply-add as 2 operations and a
// multiply or an add as 1, so its chain of K holds K integer operations like the FP chains.
RP_HD constexpr double chain_flops_per_word(int k, int lanes_per_word) {
  return chain_flops_per_element(k) * lanes_per_word;
}

// The fp64/fp32 constants (1 - 2^-12, 2^-10) are not representable in 16-bit formats. These are:
// a is the largest value below 1 (1 - 2^-p for p significand bits), and b puts the chain's real
// fixed point b / (1 - a) at 4, like the fp32/fp64 chain. Rounding makes the 16-bit chains stall
// earlier, in [2, 4] (once x a + b rounds back to x), about one step per unit in the last place
// of [1, 2) after they start: ~1000 steps for fp16, ~128 for bf16 (tests/unit/
// tests/probes/flops/model_test.cpp measures it for every starting value, K and form); they stay finite.
inline constexpr double kChainFp16A = 1.0 - 1.0 / 2048;  // 1 - 2^-11, 0x3BFF
inline constexpr double kChainFp16B = 1.0 / 512;         // 2^-9
inline constexpr double kChainBf16A = 1.0 - 1.0 / 256;   // 1 - 2^-8, 0x3F7F
inline constexpr double kChainBf16B = 1.0 / 64;          // 2^-6
// int32 wraps around (arithmetic modulo 2^32); a odd makes x -> a x + b a bijection, so the chain
// never settles and every pass changes every value (a classic LCG multiplier/increment pair).
inline constexpr std::uint32_t kChainInt32A = 1664525u;
inline constexpr std::uint32_t kChainInt32B = 1013904223u;

// The 16-bit formats, and the encoding of the values 1 + m/128 (m in 0..127) that start the
// chains. Both formats hold them exactly.
enum class Half16 : int { Fp16 = 0, Bf16 = 1 };

// Lane `lane` (0: low half of the word, 1: high half) of word `word` starts at 1 + m/128,
// m = (2 word + lane) mod 128: neighbouring words and the two lanes of a word differ, so a
// misplaced store or swapped lanes show, and all are below the stall region [2, 4].
RP_HD constexpr double half16_initial_lane(std::size_t word, int lane) {
  return 1.0 + static_cast<double>((2 * word + static_cast<std::size_t>(lane)) % 128) / 128.0;
}
// Its bits: fp16 1.0 = 0x3C00 with 10 fraction bits (m/128 -> m << 3), bf16 1.0 = 0x3F80 with
// 7 fraction bits (m/128 -> m).
RP_HD constexpr std::uint16_t half16_initial_lane_bits(std::size_t word, int lane, Half16 f) {
  const auto m = static_cast<std::uint16_t>((2 * word + static_cast<std::size_t>(lane)) % 128);
  return f == Half16::Fp16 ? static_cast<std::uint16_t>(0x3C00u | (m << 3)) : static_cast<std::uint16_t>(0x3F80u | m);
}
RP_HD constexpr std::uint32_t half16_initial_word(std::size_t word, Half16 f) {
  return static_cast<std::uint32_t>(half16_initial_lane_bits(word, 0, f)) |
         (static_cast<std::uint32_t>(half16_initial_lane_bits(word, 1, f)) << 16);
}

// int32 starting values: distinct for neighbouring elements (Knuth's multiplicative hash).
RP_HD constexpr std::uint32_t int32_initial_value(std::size_t i) {
  return static_cast<std::uint32_t>(i) * 2654435761u + 1u;
}

// ---- host models of the 16-bit chains -----------------------------------------------------
// Each lane is held as a double. Every operation is computed exactly in double (a product of two
// 11-bit or 8-bit significands has at most 22 bits; the sums below are checked) and then rounded
// ONCE to the 16-bit format by Round::to_format(double) -> double, which is what the device's
// fma.rn / mul.rn / add.rn do. The probe supplies Round from cuda_fp16.h / cuda_bf16.h, the unit
// tests an independent one. Where an intermediate is not exact the model throws instead of
// predicting something the device need not produce.
struct HalfLanes {
  double lo = 0, hi = 0;
  friend bool operator==(const HalfLanes& x, const HalfLanes& y) { return x.lo == y.lo && x.hi == y.hi; }
  friend bool operator!=(const HalfLanes& x, const HalfLanes& y) { return !(x == y); }
};

namespace detail {
// x * a, or a throw when the double product is not exact (std::fma gives its rounding error).
inline double exact_product(double x, double a) {
  volatile double p = x * a;  // volatile: never contracted with the sum that follows
  if (!std::isfinite(p) || std::fma(x, a, -p) != 0)
    throw std::logic_error("16-bit chain model: a product is not exact in double");
  return p;
}
// x + y, or a throw when the double sum is not exact (TwoSum error term non-zero).
inline double exact_sum(double x, double y) {
  volatile double s = x + y;
  volatile double yv = s - x;
  volatile double xv = s - yv;
  volatile double err = (x - xv) + (y - yv);
  if (err != 0) throw std::logic_error("16-bit chain model: a sum is not exact in double");
  return s;
}
}  // namespace detail

template <class Round>
struct HalfLaneOps {
  static double fma1(double x, double a, double b) {
    return Round::to_format(detail::exact_sum(detail::exact_product(x, a), b));
  }
  static HalfLanes fma(HalfLanes x, HalfLanes a, HalfLanes b) {
    return {fma1(x.lo, a.lo, b.lo), fma1(x.hi, a.hi, b.hi)};
  }
  static HalfLanes mul(HalfLanes x, HalfLanes a) {
    return {Round::to_format(detail::exact_product(x.lo, a.lo)), Round::to_format(detail::exact_product(x.hi, a.hi))};
  }
  static HalfLanes add(HalfLanes x, HalfLanes b) {
    return {Round::to_format(detail::exact_sum(x.lo, b.lo)), Round::to_format(detail::exact_sum(x.hi, b.hi))};
  }
};

// ---- host model of the int32 chain --------------------------------------------------------
// Every chain step is the affine map x -> m x + c modulo 2^32 (x*a+b in one mad or in a mul and an
// add: the same value, integers do not round), so a pass is one affine map and `passes` passes are
// its power, computed by squaring: the host predicts any number of passes exactly in O(log passes)
// and needs no fixed point to stop at.
struct Affine32 {
  std::uint32_t m = 1, c = 0;
  std::uint32_t operator()(std::uint32_t x) const { return m * x + c; }
};

// f after g.
inline Affine32 affine_compose(const Affine32& f, const Affine32& g) { return {f.m * g.m, f.m * g.c + f.c}; }

// One pass of the chain of K with constants a, b (both forms give the same map).
inline Affine32 int32_chain_map(int k, std::uint32_t a, std::uint32_t b) {
  Affine32 pass;
  for (int i = 0; i < k / 2; ++i) pass = affine_compose({a, b}, pass);
  if (k % 2 == 1) pass = affine_compose({1u, b}, pass);
  return pass;
}

inline Affine32 affine_power(Affine32 f, unsigned long long n) {
  Affine32 result;  // identity
  while (n != 0) {
    if (n & 1u) result = affine_compose(f, result);
    f = affine_compose(f, f);
    n >>= 1;
  }
  return result;
}

}  // namespace roofprobe
