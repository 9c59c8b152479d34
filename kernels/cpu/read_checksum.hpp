// The checksum of the CPU bandwidth probe's read mode (kernels/cpu/bandwidth.cpp). A pass XORs
// the bits of some of the chunk's elements into the accumulators, then rotates them left by one
// bit, so that passes do not cancel (x ^ x = 0). Which elements a pass folds cycles with the pass
// (phase = pass mod kReadPhases: a quarter of the vectors each, every element once per cycle), so
// the loop spends one logic instruction (a three-input XOR) on every 8 vectors it loads: folding
// every vector read a Sapphire Rapids core's L1 at 0.87 of likwid-bench's loads-only kernel
// (one thread, 24 KiB), a quarter at its rate.
// XOR and the rotation commute, so all lanes and accumulators fold into one word, and after r
// passes over a chunk whose phase-q elements XOR to X_q the word is
//   S(r) = rotl(S(r-1) ^ X_{(r-1) mod kReadPhases}) = XOR_{j=0..r-1} rotl^(r-j)(X_{j mod kReadPhases}).
// Blind spots, by construction: a pass count off by a multiple of 64 (rotl^64 is the identity),
// and phases whose elements XOR to 0.
#pragma once

#include <cstdint>
#include <cstring>

namespace roofprobe::cpu {

inline constexpr int kReadPhases = 4;  // divides 64, the rotation's period

inline std::uint64_t bits_of(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

inline std::uint64_t rotate_left_1(std::uint64_t x) { return (x << 1) | (x >> 63); }
inline std::uint64_t rotate_left(std::uint64_t x, int k) {
  k &= 63;
  return k == 0 ? x : (x << k) | (x >> (64 - k));
}

// S(reps) for the phases' XORs, in 64 steps: the terms j and j + 64 have the same rotation and
// the same phase (kReadPhases divides 64), so they cancel, and only the residues j mod 64 that
// occur an odd number of times in 0..reps-1 remain.
inline std::uint64_t read_checksum_after(const std::uint64_t (&phase_xor)[kReadPhases], std::int64_t reps) {
  std::uint64_t sum = 0;
  for (std::int64_t c = 0; c < 64 && c < reps; ++c) {
    const std::int64_t occurrences = (reps - 1 - c) / 64 + 1;
    if (occurrences % 2 == 1) sum ^= rotate_left(phase_xor[c % kReadPhases], static_cast<int>((reps - c) % 64));
  }
  return sum;
}

}  // namespace roofprobe::cpu
