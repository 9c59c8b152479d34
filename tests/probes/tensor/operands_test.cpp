// Host tests of the tensor probe's operand packing (kernels/cuda/tensor/operands.hpp): sub-word
// elements land in their own bits of the 32-bit words the kernels load, and read back unchanged.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/cuda/tensor/operands.hpp"

namespace roofprobe::cuda::tensor_probe {
namespace {

TEST(TensorOperands, PackedElementsRoundTripWithoutTouchingTheirNeighbours) {
  for (int bits_per : {4, 8, 16, 32, 64}) {
    const int elements = 24;
    const std::size_t base = 3;  // elements start past other data
    std::vector<std::uint32_t> words(base + (elements * bits_per + 31) / 32 + 2, 0xa5a5a5a5u);
    const std::vector<std::uint32_t> before = words;
    Random random{static_cast<std::uint64_t>(bits_per)};
    std::vector<std::uint64_t> wanted;
    const std::uint64_t mask = bits_per == 64 ? ~0ull : (1ull << bits_per) - 1;
    for (int i = 0; i < elements; ++i) {
      wanted.push_back(random.next() & mask);
      put_bits(words, base, i, bits_per, wanted.back());
    }
    for (int i = 0; i < elements; ++i)
      EXPECT_EQ(get_bits(words, base, i, bits_per), wanted[i]) << bits_per << " bits, #" << i;
    // The words before the elements and after the last one keep their contents.
    for (std::size_t w = 0; w < base; ++w) EXPECT_EQ(words[w], before[w]);
    const std::size_t end = base + (static_cast<std::size_t>(elements) * bits_per + 31) / 32;
    for (std::size_t w = end; w < words.size(); ++w) EXPECT_EQ(words[w], before[w]) << bits_per << " bits, word " << w;
  }
}

TEST(TensorOperands, ElementsAreLittleEndianInTheirWord) {
  std::vector<std::uint32_t> words(2, 0);
  put_bits(words, 0, 0, 16, 0x1234);
  put_bits(words, 0, 1, 16, 0xabcd);
  EXPECT_EQ(words[0], 0xabcd1234u);  // element 0 in the low half, as PTX packs f16x2 and bf16x2
  put_bits(words, 0, 0, 64, 0x0102030405060708ull);
  EXPECT_EQ(words[0], 0x05060708u);
  EXPECT_EQ(words[1], 0x01020304u);
}

// A wgmma tile row is 32 bytes of K staged as 16 units of 16 bits: element j must land at byte
// j x its size for tf32 (k8), f16 (k16) and e4m3 (k32) alike, as the tensor cores read the row.
TEST(TensorOperands, TileUnitsKeepEachElementAtItsByteOffset) {
  for (int bits_per : {8, 16, 32}) {
    const int k = 256 / bits_per;  // elements in 32 bytes
    std::vector<std::uint32_t> words(8, 0);
    for (int j = 0; j < k; ++j) put_bits(words, 0, j, bits_per, 0x8badf00dcafe1234ull * (j + 1) >> (64 - bits_per));
    const std::vector<std::uint16_t> units = tile_units(words);
    ASSERT_EQ(units.size(), 16u);
    std::vector<std::uint8_t> bytes;
    for (std::uint16_t u : units) {
      bytes.push_back(static_cast<std::uint8_t>(u));
      bytes.push_back(static_cast<std::uint8_t>(u >> 8));
    }
    for (int j = 0; j < k; ++j) {
      std::uint64_t got = 0;
      for (int b = bits_per / 8 - 1; b >= 0; --b) got = got << 8 | bytes[j * bits_per / 8 + b];
      EXPECT_EQ(got, 0x8badf00dcafe1234ull * (j + 1) >> (64 - bits_per)) << bits_per << "-bit element " << j;
    }
  }
}

TEST(TensorOperands, RandomIsReproducible) {
  Random a{42}, b{42}, c{43};
  const std::uint64_t first = a.next();
  EXPECT_EQ(first, b.next());
  EXPECT_NE(first, c.next());
  EXPECT_NE(first, a.next());
}

}  // namespace
}  // namespace roofprobe::cuda::tensor_probe
