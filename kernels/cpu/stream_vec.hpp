// Vectors of doubles of a fixed width for the bandwidth probe's streams, with aligned loads,
// stores and non-temporal stores, for every width the build's ISA has. The probe sweeps the
// width (axis `vector_bits`) because the widest is not always the fastest: Zen 4 runs 512-bit
// operations on 256-bit datapaths and its 512-bit stores reach ~80% of the 256-bit store
// rate at L1 (likwid-bench's copy_avx beats copy_avx512 there as well).
#pragma once

#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <immintrin.h>
#endif

namespace roofprobe::cpu {

typedef double F64x2 __attribute__((vector_size(16), aligned(16)));
typedef double F64x4 __attribute__((vector_size(32), aligned(32)));
typedef double F64x8 __attribute__((vector_size(64), aligned(64)));

// Widths this build can stream with, widest first.
inline std::vector<int> stream_vector_bits() {
  std::vector<int> bits;
#if defined(__AVX512F__)
  bits.push_back(512);
#endif
#if defined(__AVX__)
  bits.push_back(256);
#endif
  bits.push_back(128);
  return bits;
}

// Non-temporal stores exist on every x86-64 (SSE2 and up); elsewhere write_nt is not offered.
#if defined(__SSE2__)
inline constexpr bool kHasStreamingStore = true;
#else
inline constexpr bool kHasStreamingStore = false;
#endif

template <class V>
inline V vbroadcast(double x) {
  V v;
  for (std::size_t i = 0; i < sizeof(V) / sizeof(double); ++i) v[i] = x;
  return v;
}

// Generic forms: the compiler emits the widest move the type allows (aligned, since the
// callers pass addresses aligned to the vector size). The x86 overloads below pin the
// instruction, in particular the non-temporal one, which no generic code produces.
template <class V>
inline V vload(const double* p) {
  V v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <class V>
inline void vstore(double* p, V v) {
  std::memcpy(p, &v, sizeof v);
}
template <class V>
inline void vstream(double* p, V v) {
  vstore(p, v);
}

#if defined(__SSE2__)
template <>
inline F64x2 vload<F64x2>(const double* p) {
  return _mm_load_pd(p);
}
template <>
inline void vstore<F64x2>(double* p, F64x2 v) {
  _mm_store_pd(p, v);
}
template <>
inline void vstream<F64x2>(double* p, F64x2 v) {
  _mm_stream_pd(p, v);
}
#endif
#if defined(__AVX__)
template <>
inline F64x4 vload<F64x4>(const double* p) {
  return _mm256_load_pd(p);
}
template <>
inline void vstore<F64x4>(double* p, F64x4 v) {
  _mm256_store_pd(p, v);
}
template <>
inline void vstream<F64x4>(double* p, F64x4 v) {
  _mm256_stream_pd(p, v);
}
#endif
#if defined(__AVX512F__)
template <>
inline F64x8 vload<F64x8>(const double* p) {
  return _mm512_load_pd(p);
}
template <>
inline void vstore<F64x8>(double* p, F64x8 v) {
  _mm512_store_pd(p, v);
}
template <>
inline void vstream<F64x8>(double* p, F64x8 v) {
  _mm512_stream_pd(p, v);
}
#endif

// Orders the streaming stores before what follows (the end of the timed launch, verification).
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

// Calls f(F64xN{}) for the vector type of `bits`; false when this build has no such width.
template <class F>
bool with_stream_vector(int bits, F&& f) {
  switch (bits) {
#if defined(__AVX512F__)
    case 512:
      f(F64x8{});
      return true;
#endif
#if defined(__AVX__)
    case 256:
      f(F64x4{});
      return true;
#endif
    case 128:
      f(F64x2{});
      return true;
    default:
      return false;
  }
}

}  // namespace roofprobe::cpu
