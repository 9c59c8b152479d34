// Work accounting, address pattern and arithmetic of the CUDA "issue" probe (peak warp-instruction
// issue rate, thread predication, instruction intensity), shared by its kernel
// (kernels/cuda/issue/kernel.cuh), its launcher and the host unit tests
// (tests/probes/issue/model_test.cpp).
//
// Payload. Every thread keeps kIssueChains independent chains in registers. One unrolled "group"
// advances every chain by kIssueStepsPerGroup steps: kIssueGroupInstructions (128) payload
// instructions per thread, i.e. 128 payload WARP instructions per warp, whatever the number of
// active lanes (a warp instruction issues once however many lanes it masks off). The streams:
//   fp32:  8 FP32 chains   x = fma(x, a, b)                    (FFMA; a = b = 1: x counts up, exact)
//   int32: 8 INT32 chains  u[k] = u[k] * a + u[k+1 mod 8]      (IMAD; a ring, see below)
//   mixed: 4 FP32 + 4 INT32 chains, interleaved (FFMA and IMAD issue to different pipes)
// The INT32 chains are coupled in a ring (each adds its neighbour's previous value) so no compiler
// can fold consecutive steps x*a+b of one chain into a single multiply-add with precomputed
// constants; the host predicts them exactly with a power of the ring's 8x8 matrix mod 2^32.
//
// Intensity. instructions_per_transaction = n: with n = 0 the payload runs on registers only (the
// issue peak). With n > 0, each warp also streams a DRAM-sized buffer with coalesced 128-byte warp
// loads (lane l reads word l of a 32-word segment: exactly kIssueSectorsPerLoad 32-byte sectors),
// n payload warp instructions per sector: per group 32/n loads (n = 1, 2, 4, 8, 16, 32), or one
// load per n/32 groups (n a multiple of 32). All lanes load (the loads do not depend on
// active_lanes); only the payload is predicated.
//
// Not counted as warp instructions: loop control, the branch around the predicated payload, the
// loads and the adds that fold loaded words into a checksum, the prologue and the epilogue. The
// engine's GIPS therefore count payload only and are a slight lower bound of the real issue rate.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/beyond_l2.hpp"
#include "kernels/common/hd.hpp"

namespace roofprobe {

enum class IssueStream : int { Fp32 = 0, Int32 = 1, Mixed = 2 };

inline constexpr int kIssueChains = 8;
inline constexpr int kIssueStepsPerGroup = 16;
inline constexpr int kIssueGroupInstructions = kIssueChains * kIssueStepsPerGroup;  // 128
inline constexpr int kIssueWordsPerLoad = 32;                                       // one 4-byte word per lane
inline constexpr int kIssueSectorsPerLoad = 4;                                      // 128 contiguous, aligned bytes
inline constexpr int kIssueSectorBytes = 32;
// Register-only points: groups per "pass" (a unit of repetition, like a pass over the buffer).
inline constexpr int kIssueRegisterGroupsPerPass = 64;
// Loads per warp and pass are a multiple of this (the largest loads-per-group), so every warp
// runs whole groups.
inline constexpr int kIssueLoadQuantum = 32;
// FP32 chains count up from at most kIssueMaxFpStart by 1 per step: exact while below 2^24.
inline constexpr std::int64_t kIssueMaxFpStart = 8192;
inline constexpr std::int64_t kIssueMaxFpSteps = (std::int64_t{1} << 24) - kIssueMaxFpStart;
// Bytes the loads stream per pass so that DRAM, not L2, serves them (beyond_l2_bytes: 4x the
// device's L2 in whole MiB), never under 256 MiB. A fixed 256 MiB was under 4x the L2 of an RTX
// 4090 (72 MiB) and of a B200 (126 MiB).
inline constexpr std::uint64_t kIssueMinStreamBytes = std::uint64_t{256} << 20;
inline constexpr std::uint64_t kIssueUnknownL2Bytes = kLargestNamedL2Bytes;
RP_HD std::uint64_t issue_stream_bytes(std::uint64_t l2_bytes) {
  return beyond_l2_bytes(l2_bytes, kIssueMinStreamBytes);
}

// ---- streams ------------------------------------------------------------------------------------
RP_HD constexpr int issue_fp_chains(IssueStream s) {
  return s == IssueStream::Fp32 ? kIssueChains : s == IssueStream::Mixed ? kIssueChains / 2 : 0;
}
RP_HD constexpr int issue_int_chains(IssueStream s) { return kIssueChains - issue_fp_chains(s); }

// Chain j is FP32 or INT32; mixed interleaves them (even j FP32, odd j INT32), so the issue
// order alternates FFMA and IMAD. The INT32 ring takes the INT32 chains in order of j.
RP_HD constexpr bool issue_chain_is_fp(IssueStream s, int j) {
  return s == IssueStream::Fp32 || (s == IssueStream::Mixed && j % 2 == 0);
}

// Payload warp instructions of one group, per class: FFMA and IMAD.
RP_HD constexpr int issue_group_fp_instructions(IssueStream s) { return issue_fp_chains(s) * kIssueStepsPerGroup; }
RP_HD constexpr int issue_group_int_instructions(IssueStream s) { return issue_int_chains(s) * kIssueStepsPerGroup; }

// ---- intensity ----------------------------------------------------------------------------------
// n = 0 (register only), 1, 2, 4, 8, 16, 32 or a multiple of 32 (up to 2^20).
RP_HD constexpr bool issue_intensity_valid(std::int64_t n) {
  return n == 0 || (n > 0 && n <= 32 && 32 % n == 0) || (n > 32 && n % 32 == 0 && n <= (std::int64_t{1} << 20));
}
// Warp loads per group (n <= 32): 128 payload / (n x 4 sectors); 1 for n > 32; 0 register-only.
RP_HD constexpr int issue_loads_per_group(std::int64_t n) {
  return n == 0 ? 0 : n <= 32 ? static_cast<int>(32 / n) : 1;
}
// Groups that follow each load group: 1, or n/32 for n > 32.
RP_HD constexpr int issue_groups_per_load(std::int64_t n) { return n <= 32 ? 1 : static_cast<int>(n / 32); }

// Warp loads each warp issues per pass so that all warps together cover about `target_bytes`:
// rounded to a multiple of kIssueLoadQuantum, at least one quantum.
RP_HD std::int64_t issue_loads_per_warp(std::int64_t warps, std::uint64_t target_bytes) {
  const std::uint64_t per_round = static_cast<std::uint64_t>(warps) * kIssueWordsPerLoad * 4;
  const std::uint64_t rounds = per_round > 0 ? target_bytes / per_round : 0;
  const std::uint64_t q = (rounds + kIssueLoadQuantum / 2) / kIssueLoadQuantum;
  return static_cast<std::int64_t>(q < 1 ? 1 : q) * kIssueLoadQuantum;
}

// Payload groups each thread runs per pass.
RP_HD std::int64_t issue_groups_per_pass(std::int64_t n, std::int64_t loads_per_warp) {
  if (n == 0) return kIssueRegisterGroupsPerPass;
  return loads_per_warp / issue_loads_per_group(n) * issue_groups_per_load(n);
}

// ---- work per launch ----------------------------------------------------------------------------
struct IssueWork {
  double warp_instructions = 0;  // payload only (see the header comment)
  double fp_instructions = 0;    // of which FFMA
  double int_instructions = 0;   // of which IMAD
  double load_sectors = 0;       // 32-byte sectors the loads read
  double store_sectors = 0;      // the epilogue: one 4-byte checksum per thread
  double buffer_bytes = 0;       // bytes the loads stream per pass (0 register-only)
};

RP_HD IssueWork issue_work(IssueStream s, std::int64_t n, std::int64_t warps, std::int64_t loads_per_warp,
                           std::int64_t passes) {
  IssueWork w;
  const double groups = static_cast<double>(warps) * static_cast<double>(passes) *
                        static_cast<double>(issue_groups_per_pass(n, loads_per_warp));
  w.fp_instructions = groups * issue_group_fp_instructions(s);
  w.int_instructions = groups * issue_group_int_instructions(s);
  w.warp_instructions = w.fp_instructions + w.int_instructions;
  if (n > 0) {
    w.load_sectors = static_cast<double>(warps) * static_cast<double>(loads_per_warp) * static_cast<double>(passes) *
                     kIssueSectorsPerLoad;
    w.buffer_bytes = static_cast<double>(warps) * static_cast<double>(loads_per_warp) * kIssueWordsPerLoad * 4;
  }
  w.store_sectors = static_cast<double>(warps) * kIssueWordsPerLoad * 4 / kIssueSectorBytes;
  return w;
}

// ---- address pattern and data -------------------------------------------------------------------
// Word that lane `lane` of warp `warp` (of `warps`) reads on its `load`-th load of a pass: warp
// loads are grid-strided over 32-word segments, so consecutive warps read consecutive 128 bytes
// and a pass reads every word of the buffer exactly once.
RP_HD std::size_t issue_load_word(std::int64_t warp, std::int64_t load, int lane, std::int64_t warps) {
  return (static_cast<std::size_t>(load) * static_cast<std::size_t>(warps) + static_cast<std::size_t>(warp)) *
             kIssueWordsPerLoad +
         static_cast<std::size_t>(lane);
}

inline constexpr std::uint32_t kIssueDataHash = 2654435761u;
RP_HD std::uint32_t issue_data_word(std::size_t e) { return static_cast<std::uint32_t>(e) * kIssueDataHash; }

// Sum mod 2^32 of the words one thread loads in one pass, in closed form:
// sum_i C * ((i W + w) 32 + l) = C * (32 W L(L-1)/2 + L (32 w + l)).
RP_HD std::uint32_t issue_thread_load_sum(std::int64_t warp, int lane, std::int64_t warps,
                                          std::int64_t loads_per_warp) {
  const std::uint64_t l = static_cast<std::uint64_t>(loads_per_warp);
  const std::uint64_t tri = l % 2 == 0 ? (l / 2) * (l - 1) : l * ((l - 1) / 2);
  const std::uint64_t words = 32 * static_cast<std::uint64_t>(warps) * tri +
                              l * (32 * static_cast<std::uint64_t>(warp) + static_cast<std::uint64_t>(lane));
  return static_cast<std::uint32_t>(words) * kIssueDataHash;
}

// ---- chains -------------------------------------------------------------------------------------
// Start values of thread `thread`'s chains. FP32: small integers (exact counting, see
// kIssueMaxFpSteps); INT32: a hash.
RP_HD float issue_fp_start(std::int64_t thread, int chain) {
  return static_cast<float>((thread % 1024) * kIssueChains + chain);
}
RP_HD std::uint32_t issue_int_start(std::int64_t thread, int chain) {
  return (static_cast<std::uint32_t>(thread) * kIssueChains + static_cast<std::uint32_t>(chain) + 1u) * 0x9E3779B9u;
}

// One step of the INT32 ring of m chains: u[k] <- u[k] * a + u[(k + 1) % m], all from the values
// before the step. The m multiply-adds are independent of each other (ILP m).
template <int M>
RP_HD void issue_int_ring_step(std::uint32_t (&u)[M], std::uint32_t a) {
  const std::uint32_t first = u[0];
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
  for (int k = 0; k + 1 < M; ++k) u[k] = u[k] * a + u[k + 1];
  u[M - 1] = u[M - 1] * a + first;
}

// The ring's matrix raised to `steps`, mod 2^32 (host: verification). u_after = R * u_before.
struct IssueRing {
  int m = 0;
  std::uint32_t r[kIssueChains][kIssueChains] = {};
};

inline IssueRing issue_ring_multiply(const IssueRing& x, const IssueRing& y) {
  IssueRing z;
  z.m = x.m;
  for (int i = 0; i < x.m; ++i)
    for (int j = 0; j < x.m; ++j) {
      std::uint32_t s = 0;
      for (int k = 0; k < x.m; ++k) s += x.r[i][k] * y.r[k][j];
      z.r[i][j] = s;
    }
  return z;
}

inline IssueRing issue_ring_power(int m, std::uint32_t a, std::int64_t steps) {
  IssueRing step, result;
  step.m = result.m = m;
  for (int i = 0; i < m; ++i) {
    result.r[i][i] = 1;
    step.r[i][i] += a;
    step.r[i][(i + 1) % m] += 1;  // m == 1: u <- u * a + u
  }
  for (std::int64_t e = steps; e > 0; e /= 2) {
    if (e % 2 == 1) result = issue_ring_multiply(result, step);
    step = issue_ring_multiply(step, step);
  }
  return result;
}

// The 32-bit checksum a thread stores: the sum of its chains' words (FP32 as bits) and of the
// words it loaded, mod 2^32.
inline std::uint32_t issue_float_bits(float f) {
  std::uint32_t u = 0;
  static_assert(sizeof u == sizeof f, "float is 32-bit");
  __builtin_memcpy(&u, &f, sizeof u);
  return u;
}

// What thread `thread` stores after a launch in which each of its chains advanced `steps` steps
// (0 for lanes at or above active_lanes): `ring` = issue_ring_power(issue_int_chains(s), int_a,
// steps), computed once per launch; `load_sum` = passes x issue_thread_load_sum(...).
inline std::uint32_t issue_expected_checksum(IssueStream s, std::int64_t thread, std::int64_t steps,
                                             const IssueRing& ring, std::uint32_t load_sum) {
  std::uint32_t sum = load_sum;
  std::uint32_t u0[kIssueChains] = {};
  int ints = 0;
  for (int j = 0; j < kIssueChains; ++j) {
    if (issue_chain_is_fp(s, j)) {
      sum += issue_float_bits(issue_fp_start(thread, j) + static_cast<float>(steps));
    } else {
      u0[ints++] = issue_int_start(thread, j);
    }
  }
  for (int i = 0; i < ints; ++i) {
    std::uint32_t v = 0;
    for (int k = 0; k < ints; ++k) v += ring.r[i][k] * u0[k];
    sum += v;
  }
  return sum;
}

}  // namespace roofprobe
