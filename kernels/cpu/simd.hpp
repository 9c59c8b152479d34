// The widest SIMD vector the compiler targets (-march=...), as a GCC/Clang vector type, plus the
// element-type operations the shared chain templates need. Multiplies and adds use the vector
// operators, which stay unfused because the CPU probes compile with -ffp-contract=off; the FMA
// goes through an explicit fused intrinsic so the FMA form is fused whatever the compiler thinks.
#pragma once

#include <cmath>
#include <cstddef>

#if defined(__AVX512F__) || defined(__AVX__) || defined(__FMA__)
#include <immintrin.h>
#endif
#if defined(__ARM_NEON)
#include <arm_neon.h>
#endif

namespace roofprobe::cpu {

#if defined(__AVX512F__)
inline constexpr std::size_t kSimdBytes = 64;
inline constexpr const char* kSimdName = "AVX-512";
#elif defined(__AVX__)
inline constexpr std::size_t kSimdBytes = 32;
inline constexpr const char* kSimdName = "AVX2";
#elif defined(__ARM_NEON) || defined(__SSE2__)
inline constexpr std::size_t kSimdBytes = 16;
#if defined(__ARM_NEON)
inline constexpr const char* kSimdName = "NEON";
#else
inline constexpr const char* kSimdName = "SSE2";
#endif
#else
inline constexpr std::size_t kSimdBytes = 16;
inline constexpr const char* kSimdName = "generic";
#endif

#if defined(__AVX512F__) || defined(__FMA__) || defined(__ARM_FEATURE_FMA)
inline constexpr bool kHardwareFma = true;
#else
inline constexpr bool kHardwareFma = false;
#endif

// GCC and Clang accept vector_size only on concrete types, hence one typedef per element type.
typedef double VecF64 __attribute__((vector_size(kSimdBytes), aligned(kSimdBytes)));
typedef float VecF32 __attribute__((vector_size(kSimdBytes), aligned(kSimdBytes)));

template <class T>
struct VecOf;
template <>
struct VecOf<double> {
  using type = VecF64;
};
template <>
struct VecOf<float> {
  using type = VecF32;
};

template <class T>
using Vec = typename VecOf<T>::type;

template <class T>
inline constexpr int kLanes = static_cast<int>(kSimdBytes / sizeof(T));

template <class T>
inline Vec<T> broadcast(T v) {
  Vec<T> out;
  for (int i = 0; i < kLanes<T>; ++i) out[i] = v;
  return out;
}

// Fused multiply-add of whole vectors.
inline Vec<double> vfma(Vec<double> x, Vec<double> a, Vec<double> b) {
#if defined(__AVX512F__)
  return _mm512_fmadd_pd(x, a, b);
#elif defined(__FMA__) && defined(__AVX__)
  return _mm256_fmadd_pd(x, a, b);
#elif defined(__ARM_NEON) && defined(__aarch64__)
  return vfmaq_f64(b, x, a);
#else
  Vec<double> out;
  for (int i = 0; i < kLanes<double>; ++i) out[i] = std::fma(x[i], a[i], b[i]);
  return out;
#endif
}

inline Vec<float> vfma(Vec<float> x, Vec<float> a, Vec<float> b) {
#if defined(__AVX512F__)
  return _mm512_fmadd_ps(x, a, b);
#elif defined(__FMA__) && defined(__AVX__)
  return _mm256_fmadd_ps(x, a, b);
#elif defined(__ARM_NEON) && defined(__aarch64__)
  return vfmaq_f32(b, x, a);
#else
  Vec<float> out;
  for (int i = 0; i < kLanes<float>; ++i) out[i] = std::fma(x[i], a[i], b[i]);
  return out;
#endif
}

// Makes the compiler keep a vector in a register without an instruction: the empty asm may read
// and change it, so the value is computed (or loaded) and kept live wherever this is called.
template <class V>
inline void keep_in_register(V& v) {
#if defined(__x86_64__) || defined(__i386__)
  asm volatile("" : "+v"(v));
#elif defined(__aarch64__)
  asm volatile("" : "+w"(v));
#else
  asm volatile("" : : "r"(&v) : "memory");
#endif
}

// Ops for the shared chain templates (kernels/common/flop_chain.hpp).
struct VecOps {
  template <class V>
  static V fma(V x, V a, V b) {
    return vfma(x, a, b);
  }
  template <class V>
  static V mul(V x, V a) {
    return x * a;
  }
  template <class V>
  static V add(V x, V b) {
    return x + b;
  }
};

// Scalar reference the host uses to predict results (correctly rounded, like the SIMD units).
struct ScalarOps {
  template <class T>
  static T fma(T x, T a, T b) {
    return std::fma(x, a, b);
  }
  template <class T>
  static T mul(T x, T a) {
    return x * a;
  }
  template <class T>
  static T add(T x, T b) {
    return x + b;
  }
};

}  // namespace roofprobe::cpu
