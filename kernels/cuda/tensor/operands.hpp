// The tensor probe's operands on the host: reproducible random values, their exact encodings in
// each input and accumulator type, and the packing of sub-word elements into the 32-bit words
// the kernels load (host-tested in tests/probes/tensor/operands_test.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/tensor/model.hpp"

namespace roofprobe::cuda::tensor_probe {

// splitmix64: reproducible random operands per (type, api).
struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

// The values of one data set, as numbers (row-major), and what the host predicts per chain.
struct DataSet {
  std::vector<double> a;                  // m x k
  std::vector<double> b;                  // k x n
  std::vector<std::vector<double>> c;     // per chain, m x n
  std::vector<std::vector<double>> want;  // per chain, C + A*B
};

inline std::uint64_t encode_input_or_throw(TensorInput in, double v) {
  std::uint64_t bits = 0;
  if (!encode_tensor_input(in, v, &bits))
    throw std::logic_error("tensor: input value " + std::to_string(v) + " is not exact");
  return bits;
}

inline std::uint64_t encode_acc_or_throw(TensorAcc acc, double v) {
  std::uint64_t bits = 0;
  if (!encode_tensor_acc(acc, v, &bits))
    throw std::logic_error("tensor: accumulator value " + std::to_string(v) + " is not exact");
  return bits;
}

// Writes `bits` (width `bits_per` <= 64) at element `index` of a little-endian word array.
inline void put_bits(std::vector<std::uint32_t>& words, std::size_t base_word, int index, int bits_per,
                     std::uint64_t bits) {
  if (bits_per == 64) {
    words[base_word + 2 * index] = static_cast<std::uint32_t>(bits);
    words[base_word + 2 * index + 1] = static_cast<std::uint32_t>(bits >> 32);
    return;
  }
  const int per_word = 32 / bits_per;
  const int shift = (index % per_word) * bits_per;
  const std::uint32_t mask = bits_per == 32 ? 0xffffffffu : ((1u << bits_per) - 1) << shift;
  std::uint32_t& w = words[base_word + index / per_word];
  w = (w & ~mask) | ((static_cast<std::uint32_t>(bits) << shift) & mask);
}

inline std::uint64_t get_bits(const std::vector<std::uint32_t>& words, std::size_t base_word, int index, int bits_per) {
  if (bits_per == 64)
    return words[base_word + 2 * index] | (static_cast<std::uint64_t>(words[base_word + 2 * index + 1]) << 32);
  const int per_word = 32 / bits_per;
  const int shift = (index % per_word) * bits_per;
  const std::uint64_t w = words[base_word + index / per_word] >> shift;
  return bits_per == 32 ? w : w & ((1u << bits_per) - 1);
}

// 32-bit words as the 16-bit units the tile kernels (wgmma, tcgen05) stage, low half first: the
// byte order of the words in memory, so element j of a row packed by put_bits sits at byte
// j x its size whatever the type (2 units per tf32, 2 e4m3 per unit).
inline std::vector<std::uint16_t> tile_units(const std::vector<std::uint32_t>& words) {
  std::vector<std::uint16_t> units(words.size() * 2);
  for (std::size_t w = 0; w < words.size(); ++w) {
    units[2 * w] = static_cast<std::uint16_t>(words[w]);
    units[2 * w + 1] = static_cast<std::uint16_t>(words[w] >> 16);
  }
  return units;
}

}  // namespace roofprobe::cuda::tensor_probe
