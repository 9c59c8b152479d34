// The 512-bit FMA unit count of an Intel Xeon core, by timing (uarch.hpp: Avx512FmaUnits).
//
// Twelve independent FMA chains (more than latency 4 x 2 units) keep every unit busy; the same
// loop with 256-bit FMAs runs two per cycle on every such core (ports 0 and 1). A core with two
// 512-bit units runs the 512-bit loop at the same instruction rate (ratio ~1; a lower AVX-512
// licence clock takes up to ~15% off), a core with one at half (~0.5). The Optimization
// Reference Manual describes timing the units for the SKUs CPUID does not tell apart; this is
// that idea in its simplest form, not a copy of its code. Thread CPU time: time spent
// preempted is not counted, but a VM's stolen time and another tenant's use of the caches and
// clock are, so the widths are timed in rounds until their best rates settle (FmaRateRounds).
// Functions carry their own target attributes so the test exists in builds for any x86-64 level
// and runs only where the CPU has AVX-512F.
#include "kernels/cpu/core_clock.hpp"  // thread_cpu_seconds
#include "kernels/cpu/uarch.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define RP_FMA_UNITS_TEST 1
#include <immintrin.h>
#endif

#include <cstdio>
#include <cstring>

namespace roofprobe::cpu {
namespace {

#if defined(RP_FMA_UNITS_TEST)
constexpr long kIterations = 1 << 21;  // x 12 FMAs: ~12 ms per width at 2 per cycle and 2 GHz

// FMA instructions per second of `Vec` with `fma`, one timed try.
template <typename Vec, typename Fma>
__attribute__((target("avx512f,fma"))) double fma_rate(Vec init, Fma fma) {
  Vec a0 = init, a1 = init, a2 = init, a3 = init, a4 = init, a5 = init;
  Vec a6 = init, a7 = init, a8 = init, a9 = init, a10 = init, a11 = init;
  const Vec m = init, c = init;
  const double start = thread_cpu_seconds();
  for (long i = 0; i < kIterations; ++i) {
    a0 = fma(a0, m, c), a1 = fma(a1, m, c), a2 = fma(a2, m, c), a3 = fma(a3, m, c);
    a4 = fma(a4, m, c), a5 = fma(a5, m, c), a6 = fma(a6, m, c), a7 = fma(a7, m, c);
    a8 = fma(a8, m, c), a9 = fma(a9, m, c), a10 = fma(a10, m, c), a11 = fma(a11, m, c);
    // The chains stay in registers and every FMA stays: the compiler sees them used.
    asm volatile("" : "+v"(a0), "+v"(a1), "+v"(a2), "+v"(a3), "+v"(a4), "+v"(a5));
    asm volatile("" : "+v"(a6), "+v"(a7), "+v"(a8), "+v"(a9), "+v"(a10), "+v"(a11));
  }
  const double seconds = thread_cpu_seconds() - start;
  return seconds > 0 ? 12.0 * static_cast<double>(kIterations) / seconds : 0;
}

__attribute__((target("avx512f,fma"))) double wide_rate() {
  return fma_rate(
      _mm512_set1_pd(0.5),
      [](__m512d a, __m512d b, __m512d c) __attribute__((target("avx512f,fma"))) { return _mm512_fmadd_pd(a, b, c); });
}

__attribute__((target("avx512f,fma"))) double narrow_rate() {
  return fma_rate(
      _mm256_set1_pd(0.5),
      [](__m256d a, __m256d b, __m256d c) __attribute__((target("avx512f,fma"))) { return _mm256_fmadd_pd(a, b, c); });
}

// Rounds until FmaRateRounds settles. The order alternates so that a clock ramping up or
// down through the rounds favours neither width.
FmaRateRounds time_rounds() {
  FmaRateRounds rounds;
  while (!rounds.done()) {
    if (rounds.rounds() % 2 == 0) {
      const double wide = wide_rate();
      rounds.add(wide, narrow_rate());
    } else {
      const double narrow = narrow_rate();
      rounds.add(wide_rate(), narrow);
    }
  }
  return rounds;
}
#endif

}  // namespace

Avx512FmaUnits time_avx512_fma_units() {
  Avx512FmaUnits out;
#if defined(RP_FMA_UNITS_TEST)
  if (!__builtin_cpu_supports("avx512f")) {
    out.method = "not timed: the CPU has no AVX-512F";
    return out;
  }
  const FmaRateRounds rounds = time_rounds();
  out.ratio = rounds.ratio();
  out.units = fma_units_from_ratio(out.ratio);
  char text[320];
  std::snprintf(text, sizeof text,
                "throughput of independent 512-bit vs 256-bit FMAs, best of %d rounds (timing the units, as "
                "the Intel Optimization Reference Manual suggests)%s",
                rounds.rounds(), out.units == 0 ? ", inconclusive: the ratio is neither ~1 nor ~0.5" : "");
  if (out.units == 0) std::snprintf(text + std::strlen(text), sizeof text - std::strlen(text), " (%.2f)", out.ratio);
  out.method = text;
#else
  out.method = "not timed: the FMA-unit test is x86-64 only";
#endif
  return out;
}

}  // namespace roofprobe::cpu
