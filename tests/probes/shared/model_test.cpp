// Host tests of the shared-memory probe's pattern and accounting
// (kernels/cuda/shared/model.hpp): the wavefronts a warp request takes, computed from the 32 lane addresses, for
// the probe's patterns and for hand-made address sets; the row chase that keeps the pattern; the checksum.
#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <vector>

#include "kernels/cuda/shared/model.hpp"

namespace roofprobe {
namespace {

std::vector<std::uint32_t> words_to_bytes(const std::vector<std::uint32_t>& words) {
  std::vector<std::uint32_t> bytes;
  for (std::uint32_t w : words) bytes.push_back(w * 4);
  return bytes;
}

int wavefronts_of_words(const std::vector<std::uint32_t>& words) {
  const std::vector<std::uint32_t> bytes = words_to_bytes(words);
  return shared_wavefronts_per_request(bytes.data(), static_cast<int>(bytes.size()));
}

TEST(SharedPattern, DegreeDGivesExactlyDWavefronts) {
  for (int d : {1, 2, 4, 8, 16, 32}) EXPECT_EQ(shared_pattern_wavefronts(d), d) << "degree " << d;
  EXPECT_EQ(shared_pattern_wavefronts(kSharedBroadcast), 1);
}

TEST(SharedPattern, DegreeDUses32OverDBanksWithDWordsEach) {
  for (int d : {1, 2, 4, 8, 16, 32}) {
    std::set<int> banks;
    std::set<int> words;
    for (int l = 0; l < 32; ++l) {
      const int c = shared_lane_column(l, d);
      ASSERT_GE(c, 0);
      ASSERT_LT(c, kSharedRowWords) << "column outside a row, degree " << d;
      banks.insert(c % 32);
      words.insert(c);
    }
    EXPECT_EQ(banks.size(), 32u / d) << "degree " << d;
    EXPECT_EQ(words.size(), 32u) << "every lane its own word, degree " << d;
  }
  for (int l = 0; l < 32; ++l) EXPECT_EQ(shared_lane_column(l, kSharedBroadcast), 0);
}

TEST(SharedPattern, HandMadeAddressSets) {
  std::vector<std::uint32_t> w(32);
  // Consecutive words, any 32-word aligned or unaligned start: one word per bank.
  for (int l = 0; l < 32; ++l) w[l] = 7 + l;
  EXPECT_EQ(wavefronts_of_words(w), 1);
  // All lanes on one word: broadcast.
  for (int l = 0; l < 32; ++l) w[l] = 5;
  EXPECT_EQ(wavefronts_of_words(w), 1);
  // Pairs of lanes on the same word (lanes 2k, 2k+1 -> word k): 16 words, 16 banks, no conflict.
  for (int l = 0; l < 32; ++l) w[l] = l / 2;
  EXPECT_EQ(wavefronts_of_words(w), 1);
  // Conflict-free but lane 4 reads word 35 instead of 4: bank 3 now holds two distinct words
  // (3 and 35), bank 4 none.
  for (int l = 0; l < 32; ++l) w[l] = l;
  w[4] = 35;
  EXPECT_EQ(wavefronts_of_words(w), 2);
  // Three lanes on bank 0 with words 0, 32, 32 (a broadcast inside a conflict): 2 distinct.
  w = {0, 32, 32};
  EXPECT_EQ(wavefronts_of_words(w), 2);
  // Words 0, 32, 64 and 1, 33: bank 0 has 3 distinct words, bank 1 two.
  w = {0, 1, 32, 33, 64};
  EXPECT_EQ(wavefronts_of_words(w), 3);
  // The worst bank decides even when it comes last.
  w = {1, 2, 3, 4, 31, 63, 95, 127};
  EXPECT_EQ(wavefronts_of_words(w), 4);
  // Column-major 32 x 33 padded tile (word 33 l): conflict-free, the classic padding trick.
  w.resize(32);
  for (int l = 0; l < 32; ++l) w[l] = 33 * l;
  EXPECT_EQ(wavefronts_of_words(w), 1);
  // Unpadded column (word 32 l): 32-way.
  for (int l = 0; l < 32; ++l) w[l] = 32 * l;
  EXPECT_EQ(wavefronts_of_words(w), 32);
  // Fewer active lanes.
  w = {0, 64};
  EXPECT_EQ(wavefronts_of_words(w), 2);
  w = {9};
  EXPECT_EQ(wavefronts_of_words(w), 1);
  w.clear();
  EXPECT_EQ(wavefronts_of_words(w), 0);
}

TEST(SharedPattern, BytesWithinAWordShareItsBank) {
  // Byte addresses 0..3 are one word (a broadcast); 0 and 128 are bank 0, two words.
  std::vector<std::uint32_t> bytes = {0, 0, 0, 0};
  EXPECT_EQ(shared_wavefronts_per_request(bytes.data(), 4), 1);
  bytes = {0, 128, 256, 4};
  EXPECT_EQ(shared_wavefronts_per_request(bytes.data(), 4), 3);
}

TEST(SharedPattern, TheChaseKeepsTheColumnAndVisitsEveryRow) {
  const std::uint32_t step = 3;
  for (int d : {kSharedBroadcast, 1, 8, 32}) {
    for (int l : {0, 1, 17, 31}) {
      const auto column = static_cast<std::uint32_t>(shared_lane_column(l, d));
      std::set<std::uint32_t> rows;
      std::uint32_t offset = shared_byte_offset(shared_start_row(5, 2), column);
      for (int i = 0; i < kSharedRows; ++i) {
        ASSERT_LT(offset, kSharedTableBytes);
        EXPECT_EQ(offset / 4 % kSharedRowWords, column) << "the pattern drifted";
        rows.insert(offset / 4 / kSharedRowWords);
        offset = shared_table_word(offset / 4, step);  // what the kernel's load returns
      }
      EXPECT_EQ(rows.size(), static_cast<std::size_t>(kSharedRows));
    }
  }
}

TEST(SharedPattern, ExpectedChecksumFollowsTheChaseStepByStep) {
  const std::uint32_t step = 3;
  const int slots = 8;
  for (std::uint64_t steps : {0ull, 1ull, 2ull, 7ull, 8ull, 9ull, 1000ull, 4097ull}) {
    for (std::uint32_t warp : {0u, 1u, 6u, 1055u}) {
      for (int d : {kSharedBroadcast, 2, 32}) {
        const int lane = 13;
        std::uint32_t sum = 0;
        const auto column = static_cast<std::uint32_t>(shared_lane_column(lane, d));
        for (int s = 0; s < slots; ++s) {
          std::uint32_t offset = shared_byte_offset(shared_start_row(warp, s), column);
          for (std::uint64_t i = 0; i < steps % 64; ++i)
            offset = shared_table_word(offset / 4, step);  // what the kernel's load returns
          sum += shared_checksum_term(offset, s);
        }
        EXPECT_EQ(shared_expected_checksum(warp, lane, d, slots, steps % 64, step), sum);
        EXPECT_EQ(shared_expected_checksum(warp, lane, d, slots, steps, step),
                  shared_expected_checksum(warp, lane, d, slots, steps % kSharedRows, step));
      }
    }
  }
  // A chain that did not move is caught: after 1 step every slot has moved one row.
  EXPECT_NE(shared_expected_checksum(3, 5, 1, slots, 1, step), shared_expected_checksum(3, 5, 1, slots, 0, step));
}

TEST(SharedPattern, WorkCountsInstructionsWavefrontsAndBytes) {
  const SharedWork w = shared_work(1056, 8, 100, 4);
  EXPECT_DOUBLE_EQ(w.warp_instructions, 1056.0 * 8 * 100);
  EXPECT_DOUBLE_EQ(w.wavefronts, 4 * w.warp_instructions);
  EXPECT_DOUBLE_EQ(w.bytes, 128 * w.warp_instructions);
  const SharedWork b = shared_work(10, 8, 3, kSharedBroadcast);
  EXPECT_DOUBLE_EQ(b.wavefronts, b.warp_instructions);
  EXPECT_DOUBLE_EQ(b.bytes, 128 * b.warp_instructions);  // broadcast still delivers 32 words
}

TEST(SharedPattern, ValidDegrees) {
  for (int d : {0, 1, 2, 4, 8, 16, 32}) EXPECT_TRUE(shared_degree_valid(d));
  for (int d : {-1, 3, 5, 64}) EXPECT_FALSE(shared_degree_valid(d));
}

}  // namespace
}  // namespace roofprobe
