// Host tests of the system probe's accounting and data (kernels/cuda/system/model.hpp): which
// side of the link each transfer reads or writes, the bytes and sectors of a launch, the words
// the host predicts for a copy or a mapped write.
#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>

#include "kernels/cuda/backend/stream_pattern.hpp"
#include "kernels/cuda/system/model.hpp"

namespace roofprobe {
namespace {

TEST(SystemWork, ParsesTheFourTransfersAndRejectsOthers) {
  EXPECT_EQ(parse_system_transfer("h2d"), SystemTransfer::H2D);
  EXPECT_EQ(parse_system_transfer("d2h"), SystemTransfer::D2H);
  EXPECT_EQ(parse_system_transfer("mapped_read"), SystemTransfer::MappedRead);
  EXPECT_EQ(parse_system_transfer("mapped_write"), SystemTransfer::MappedWrite);
  EXPECT_THROW(parse_system_transfer("H2D"), std::invalid_argument);
  EXPECT_THROW(parse_system_transfer(""), std::invalid_argument);
  try {
    parse_system_transfer("p2p");
    FAIL() << "no exception";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("system"), std::string::npos) << "names the probe";
    EXPECT_NE(std::string(e.what()).find("p2p"), std::string::npos) << "names the value";
  }
}

TEST(SystemWork, CountsTheHostSideOfEachTransfer) {
  const std::size_t n = system_elements(256u << 20);  // 256 MiB
  EXPECT_EQ(n, (256u << 20) / 16);
  const double moved = 3.0 * (256u << 20);  // three copies or passes
  const SystemBytes h2d = system_bytes_per_launch(SystemTransfer::H2D, n, 3);
  EXPECT_DOUBLE_EQ(h2d.read, moved);
  EXPECT_DOUBLE_EQ(h2d.written, 0);
  const SystemBytes d2h = system_bytes_per_launch(SystemTransfer::D2H, n, 3);
  EXPECT_DOUBLE_EQ(d2h.read, 0);
  EXPECT_DOUBLE_EQ(d2h.written, moved);
  const SystemBytes mr = system_bytes_per_launch(SystemTransfer::MappedRead, n, 3);
  EXPECT_DOUBLE_EQ(mr.read, moved);
  EXPECT_DOUBLE_EQ(mr.written, 0);
  const SystemBytes mw = system_bytes_per_launch(SystemTransfer::MappedWrite, n, 3);
  EXPECT_DOUBLE_EQ(mw.read, 0);
  EXPECT_DOUBLE_EQ(mw.written, moved);
  // 32-byte sectors: bytes / 32 for a whole number of sectors, rounded up otherwise.
  EXPECT_DOUBLE_EQ(system_sectors_per_launch(n, 3), moved / 32);
  EXPECT_DOUBLE_EQ(system_sectors_per_launch(3, 1), 2);  // 48 bytes: two sectors
}

TEST(SystemWork, RoundsTheBufferDownToWholeElements) {
  EXPECT_EQ(system_elements(15), 0u);
  EXPECT_EQ(system_elements(16), 1u);
  EXPECT_EQ(system_elements(4095), 255u);
  EXPECT_EQ(system_device_bytes(SystemTransfer::H2D, 4095), 255u * 16);
  EXPECT_EQ(system_device_bytes(SystemTransfer::D2H, 1u << 20), 1u << 20);
  EXPECT_EQ(system_device_bytes(SystemTransfer::MappedRead, 1u << 30), 0u);
  EXPECT_EQ(system_device_bytes(SystemTransfer::MappedWrite, 1u << 30), 0u);
  EXPECT_TRUE(system_is_mapped(SystemTransfer::MappedRead));
  EXPECT_FALSE(system_is_mapped(SystemTransfer::D2H));
}

TEST(SystemWork, SourceWordsAreDistinctAndTheirSumIsClosedForm) {
  // Neighbouring words differ, so a copy shifted by one word or element is caught.
  EXPECT_NE(system_source_word(0, 1), system_source_word(0, 2));
  EXPECT_NE(system_source_word(1, 0), system_source_word(0, 0));
  EXPECT_EQ(system_source_word(5, 3), static_cast<std::uint32_t>(23u * kStreamHash));
  for (std::size_t n : {1u, 2u, 7u, 1000u, 4097u}) {
    std::uint32_t sum = 0;
    for (std::size_t e = 0; e < n; ++e)
      for (int w = 0; w < 4; ++w) sum += system_source_word(e, w);
    EXPECT_EQ(system_source_sum(n), sum) << "n=" << n;
  }
}

TEST(SystemWork, MappedWritesCarryTheirPassNumber) {
  // Pass 0 writes the source words; every later pass adds its number (mod 2^32), so the host
  // tells the last pass from an earlier one.
  EXPECT_EQ(system_written_word(9, 2, 0), system_source_word(9, 2));
  EXPECT_EQ(system_written_word(9, 2, 5), system_source_word(9, 2) + 5u);
  EXPECT_NE(system_written_word(9, 2, 5), system_written_word(9, 2, 4));
  EXPECT_EQ(system_written_word(0, 0, (std::uint64_t{1} << 32) + 3), 3u);  // wraps like the kernel
}

}  // namespace
}  // namespace roofprobe
