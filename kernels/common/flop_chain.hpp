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
RP_HD constexpr int chain_add_ops(int k, FlopForm form) {
  return (form == FlopForm::NoFma ? k / 2 : 0) + (k % 2);
}

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
  switch (k) {
#define RP_CHAIN_CASE(n) \
  case n:                \
    f(std::integral_constant<int, n>{}); \
    return true;
    RP_CHAIN_CASE(1) RP_CHAIN_CASE(2) RP_CHAIN_CASE(4) RP_CHAIN_CASE(8) RP_CHAIN_CASE(16)
    RP_CHAIN_CASE(32) RP_CHAIN_CASE(64) RP_CHAIN_CASE(128) RP_CHAIN_CASE(256) RP_CHAIN_CASE(512)
    RP_CHAIN_CASE(1024)
#undef RP_CHAIN_CASE
    default:
      return false;
  }
}

}  // namespace roofprobe
