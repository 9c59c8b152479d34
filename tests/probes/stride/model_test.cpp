// Host tests of the global-stride probe's pattern and accounting
// (kernels/cuda/stride/model.hpp): sectors per warp request from the 32 lane addresses for
// every stride and word size, hand cases (misaligned bases), the request layout (no request
// wraps, every request start covered evenly), and the closed-form checksum against brute force.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

#include "kernels/cuda/stride/model.hpp"

namespace roofprobe {
namespace {

const int kStrides[] = {0, 1, 2, 4, 8, 16, 32};

TEST(StridePattern, SectorsPerRequestForEveryStrideAndWordSize) {
  // stride:                 0  1  2   4   8  16  32
  const int four_byte[] = {1, 4, 8, 16, 32, 32, 32};
  const int eight_byte[] = {1, 8, 16, 32, 32, 32, 32};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(stride_sectors_per_request(kStrides[i], 4), four_byte[i]) << "stride " << kStrides[i];
    EXPECT_EQ(stride_sectors_per_request(kStrides[i], 8), eight_byte[i]) << "stride " << kStrides[i];
  }
}

TEST(StridePattern, EveryRequestOfALaunchTouchesTheSameSectors) {
  for (int wb : {4, 8}) {
    for (int s : kStrides) {
      const std::uint32_t n = 1u << 14;
      ASSERT_GE(n, stride_min_elements(s, wb));
      const int want = stride_sectors_per_request(s, wb);
      for (std::uint32_t q = 0; q < 3000; q += 7) {
        // cudaMalloc bases are 256-byte aligned
        EXPECT_EQ(stride_request_sectors(0x7f0000000100ull, q, s, wb, n - 1), want)
            << "stride " << s << " word " << wb << " request " << q;
      }
    }
  }
}

TEST(StridePattern, HandCasesIncludingMisalignedBases) {
  std::vector<std::uint64_t> a(32);
  // Unit stride, 4-byte words, base 4 bytes past a sector: 128 bytes over 5 sectors.
  for (int l = 0; l < 32; ++l) a[l] = 4 + 4 * l;
  EXPECT_EQ(sectors_per_warp_request(a.data(), 32, 4), 5);
  // 8-byte words starting 16 bytes into a sector: 256 bytes over 9 sectors.
  for (int l = 0; l < 32; ++l) a[l] = 16 + 8 * l;
  EXPECT_EQ(sectors_per_warp_request(a.data(), 32, 8), 9);
  // An 8-byte word straddling a sector boundary (base 28) touches two sectors per lane at stride
  // 32 words (256-byte lane spacing): 64 sectors.
  for (int l = 0; l < 32; ++l) a[l] = 28 + 256 * l;
  EXPECT_EQ(sectors_per_warp_request(a.data(), 32, 8), 64);
  // Stride 0 anywhere: one sector; unless the word straddles two.
  for (int l = 0; l < 32; ++l) a[l] = 1000;
  EXPECT_EQ(sectors_per_warp_request(a.data(), 32, 4), 1);
  for (int l = 0; l < 32; ++l) a[l] = 30;
  EXPECT_EQ(sectors_per_warp_request(a.data(), 32, 4), 2);
  // Stride 2 of 4-byte words misaligned by one word: the lanes read bytes [4, 256) (the last lane
  // bytes 252..255), still 8 sectors.
  for (int l = 0; l < 32; ++l) a[l] = 4 + 8 * l;
  EXPECT_EQ(sectors_per_warp_request(a.data(), 32, 4), 8);
  // ... and by 28 bytes: [28, 280) -> sectors 0..8, 9 sectors.
  for (int l = 0; l < 32; ++l) a[l] = 28 + 8 * l;
  EXPECT_EQ(sectors_per_warp_request(a.data(), 32, 4), 9);
  // The probe's own helper with a misaligned base: unit stride of 4-byte words, 5 sectors.
  EXPECT_EQ(stride_request_sectors(4, 0, 1, 4, 1023), 5);
  EXPECT_EQ(stride_request_sectors(4, 0, 0, 4, 1023), 1);
  EXPECT_EQ(stride_request_sectors(4, 0, 8, 4, 1023), 32);
}

TEST(StridePattern, LaneAddresses) {
  // n = 8192 words: one group of 8 requests at the largest span (stride 32: 1024 elements).
  const std::uint32_t mask = (1u << 13) - 1;
  // Request q of stride s starts q spans in (mod n); lanes s apart.
  EXPECT_EQ(stride_element(0, 0, 1, 4, mask), 0u);
  EXPECT_EQ(stride_element(0, 31, 1, 4, mask), 31u);
  EXPECT_EQ(stride_element(3, 5, 2, 4, mask), 3u * 64 + 10);
  EXPECT_EQ(stride_element(5, 31, 0, 4, mask), 5u * 8);  // stride 0: one sector per request
  EXPECT_EQ(stride_element(5, 31, 0, 8, mask), 5u * 4);
  EXPECT_EQ(stride_element(2, 1, 32, 8, mask), 2u * 1024 + 32);
  EXPECT_EQ(stride_element(8, 0, 32, 8, mask), 0u);  // 8 spans of 1024 = n: back to 0
  EXPECT_EQ(stride_element(9, 2, 32, 8, mask), 1024u + 64);
  EXPECT_EQ(stride_lane_address(0x1000, 3, 5, 2, 8, mask), 0x1000u + (3u * 64 + 10) * 8);
}

TEST(StridePattern, RequestsNeverWrapAndCoverTheStartsEvenly) {
  for (int wb : {4, 8}) {
    for (int s : kStrides) {
      const std::uint32_t n = 4 * stride_min_elements(s, wb);
      const std::uint32_t span = stride_span_elements(s, wb);
      const std::uint32_t m = n / span;
      std::map<std::uint32_t, int> starts;
      for (std::uint32_t q = 0; q < 5 * m; ++q) {
        const std::uint32_t first = stride_element(q, 0, s, wb, n - 1);
        const std::uint32_t last = stride_element(q, 31, s, wb, n - 1);
        ASSERT_LT(last, n) << "request " << q << " leaves the array";
        EXPECT_EQ(last - first, static_cast<std::uint32_t>(31 * s)) << "request " << q << " wraps";
        EXPECT_EQ(first % span, 0u);
        ++starts[first];
      }
      EXPECT_EQ(starts.size(), m);
      for (const auto& [start, count] : starts) EXPECT_EQ(count, 5) << "start " << start;
    }
  }
}

TEST(StridePattern, GroupAdvanceMatchesTheRequestNumbering) {
  // What the kernel does: warp g of W runs groups g, g+W, ...; it starts at
  // stride_group_first(g) and adds stride_group_first(W) (unmasked) each time.
  const std::uint32_t warps = 8448;  // H100: 132 SMs x 64 warps
  for (int s : {0, 1, 32}) {
    const std::uint32_t span = stride_span_elements(s, 8);
    const std::uint32_t mask = (1u << 19) - 1;
    const std::uint32_t advance = stride_group_first(warps, span, 0xffffffffu);
    for (std::uint32_t g : {0u, 1u, 77u, warps - 1}) {
      std::uint32_t first = stride_group_first(g, span, mask);
      for (std::uint32_t k = 0; k < 600; ++k) {
        const std::uint32_t q = (k * warps + g) * kStrideUnroll;
        for (int u = 0; u < kStrideUnroll; ++u)
          ASSERT_EQ(stride_group_element(first, u, 3, s, span), stride_element(q + u, 3, s, 8, mask))
              << "stride " << s << " warp " << g << " group " << k;
        first = (first + advance) & mask;
      }
    }
  }
}

TEST(StridePattern, ExpectedSumMatchesBruteForce) {
  for (int wb : {4, 8}) {
    for (int s : kStrides) {
      const std::uint32_t n = 2 * stride_min_elements(s, wb);
      for (std::uint64_t requests : {0ull, 1ull, 7ull, 8ull, 33ull, 1000ull}) {
        std::uint64_t sum = 0;
        for (std::uint64_t q = 0; q < requests; ++q)
          for (int l = 0; l < 32; ++l)
            sum += stride_word(stride_element(static_cast<std::uint32_t>(q), l, s, wb, n - 1), wb);
        if (wb == 4) sum &= 0xffffffffull;
        EXPECT_EQ(stride_expected_sum(requests, s, wb, n - 1), sum)
            << "stride " << s << " word " << wb << " requests " << requests;
      }
    }
  }
}

TEST(StridePattern, ExpectedSumOfLargeLaunchesStaysExact) {
  // Residue sums beyond 2^64 wrap consistently: compare against an incremental sum over full
  // cycles of request starts.
  const int s = 1, wb = 4;
  const std::uint32_t n = 1u << 20;
  const std::uint64_t m = n / stride_span_elements(s, wb);
  const std::uint64_t one_cycle = stride_expected_sum(m, s, wb, n - 1);
  EXPECT_EQ(stride_expected_sum(1000 * m, s, wb, n - 1), (1000 * one_cycle) & 0xffffffffull);
  EXPECT_NE(stride_expected_sum(1000 * m + 1, s, wb, n - 1), stride_expected_sum(1000 * m, s, wb, n - 1));
}

TEST(StridePattern, WorkingSetRoundsDownToAPowerOfTwo) {
  EXPECT_EQ(stride_elements(4u << 20, 1, 4), 1u << 20);
  EXPECT_EQ(stride_elements((4u << 20) + 12345, 1, 8), 1u << 19);
  EXPECT_EQ(stride_elements(3u << 20, 1, 4), 1u << 19);
  EXPECT_EQ(stride_elements(65536, 32, 8), 8192u);  // exactly one group at the largest span
  EXPECT_EQ(stride_elements(65535, 32, 8), 0u);
  EXPECT_EQ(stride_elements(0, 0, 4), 0u);
  EXPECT_EQ(stride_elements(std::uint64_t{64} << 30, 1, 4), 1u << 31);
}

TEST(StridePattern, WorkCountsRequestsSectorsAndBytes) {
  const StrideWork w = stride_work(100, 10, 2, 4);
  EXPECT_DOUBLE_EQ(w.requests, 100.0 * kStrideUnroll * 10);
  EXPECT_DOUBLE_EQ(w.transactions, 8 * w.requests);
  EXPECT_DOUBLE_EQ(w.bytes, 32 * w.transactions);
  EXPECT_DOUBLE_EQ(stride_work(1, 1, 0, 8).transactions, kStrideUnroll);
  // Walls: intensity = instructions per transaction.
  EXPECT_DOUBLE_EQ(w.requests / w.transactions, 1.0 / 8);
  EXPECT_DOUBLE_EQ(stride_work(5, 5, 1, 4).requests / stride_work(5, 5, 1, 4).transactions, 0.25);
  EXPECT_DOUBLE_EQ(stride_work(5, 5, 8, 4).requests / stride_work(5, 5, 8, 4).transactions, 1.0 / 32);
}

}  // namespace
}  // namespace roofprobe
