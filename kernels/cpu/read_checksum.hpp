// The checksum of the CPU bandwidth probe's read mode (kernels/cpu/bandwidth.cpp): every pass
// XORs the bits of every element into the accumulators, then rotates them left by one bit, so
// that passes do not cancel (x ^ x = 0). XOR and the rotation commute, so all lanes and
// accumulators fold into one word, and after r passes over a chunk whose elements XOR to X the
// word is  S(r) = rotl(S(r-1) ^ X) = XOR_{k=1..r} rotl^k(X).
// Blind spots, by construction: a pass count off by a multiple of 64 (rotl^64 is the identity;
// 128 when X has an odd number of set bits), and a chunk whose elements XOR to 0.
#pragma once

#include <cstdint>
#include <cstring>

namespace roofprobe::cpu {

inline std::uint64_t bits_of(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

inline std::uint64_t rotate_left_1(std::uint64_t x) { return (x << 1) | (x >> 63); }

// S(reps) for a pass XOR of `pass`, in at most 63 steps: 64 passes XOR every rotation of X once,
// which is all ones when X has an odd number of set bits and 0 otherwise.
inline std::uint64_t read_checksum_after(std::uint64_t pass, std::int64_t reps) {
  std::uint64_t all_rotations = 0;
  for (int k = 0; k < 64; ++k) all_rotations ^= (pass << k) | (k == 0 ? 0 : pass >> (64 - k));
  std::uint64_t sum = (reps / 64) % 2 == 1 ? all_rotations : 0;
  std::uint64_t rest = 0;
  for (std::int64_t rep = 0; rep < reps % 64; ++rep) rest = rotate_left_1(rest ^ pass);
  return sum ^ rest;
}

}  // namespace roofprobe::cpu
