// Host tests of the issue probe's accounting (kernels/cuda/issue/model.hpp): payload warp
// instructions per group and launch, loads per group for each intensity, the address pattern's
// sectors per warp request, the closed forms the verification uses (load sums, the IMAD ring's
// matrix power, FP32 counting) against brute force.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/cuda/issue/model.hpp"
#include "kernels/cuda/backend/stream_pattern.hpp"

namespace roofprobe {
namespace {

TEST(IssueWork, GroupHoldsEightChainsOfSixteenSteps) {
  EXPECT_EQ(kIssueGroupInstructions, 128);
  EXPECT_EQ(issue_group_fp_instructions(IssueStream::Fp32), 128);
  EXPECT_EQ(issue_group_int_instructions(IssueStream::Fp32), 0);
  EXPECT_EQ(issue_group_fp_instructions(IssueStream::Int32), 0);
  EXPECT_EQ(issue_group_int_instructions(IssueStream::Int32), 128);
  EXPECT_EQ(issue_group_fp_instructions(IssueStream::Mixed), 64);
  EXPECT_EQ(issue_group_int_instructions(IssueStream::Mixed), 64);
  int fp = 0;
  for (int j = 0; j < kIssueChains; ++j) fp += issue_chain_is_fp(IssueStream::Mixed, j) ? 1 : 0;
  EXPECT_EQ(fp, issue_fp_chains(IssueStream::Mixed));
  EXPECT_TRUE(issue_chain_is_fp(IssueStream::Mixed, 0));
  EXPECT_FALSE(issue_chain_is_fp(IssueStream::Mixed, 1));
}

TEST(IssueWork, ValidIntensities) {
  for (std::int64_t n : {0, 1, 2, 4, 8, 16, 32, 64, 96, 1024}) EXPECT_TRUE(issue_intensity_valid(n)) << n;
  for (std::int64_t n : {-1, 3, 5, 12, 24, 33, 48, 100}) EXPECT_FALSE(issue_intensity_valid(n)) << n;
}

// n payload warp instructions per 32-byte sector: loads x 4 sectors x n = payload of the groups.
TEST(IssueWork, LoadsPerGroupGiveNInstructionsPerSector) {
  EXPECT_EQ(issue_loads_per_group(0), 0);
  EXPECT_EQ(issue_loads_per_group(1), 32);
  EXPECT_EQ(issue_loads_per_group(4), 8);
  EXPECT_EQ(issue_loads_per_group(16), 2);
  EXPECT_EQ(issue_loads_per_group(32), 1);
  EXPECT_EQ(issue_loads_per_group(64), 1);
  EXPECT_EQ(issue_groups_per_load(16), 1);
  EXPECT_EQ(issue_groups_per_load(64), 2);
  EXPECT_EQ(issue_groups_per_load(1024), 32);
  for (std::int64_t n : {1, 2, 4, 8, 16, 32, 64, 96, 1024}) {
    const double payload = static_cast<double>(issue_groups_per_load(n)) * kIssueGroupInstructions;
    const double sectors = static_cast<double>(issue_loads_per_group(n)) * kIssueSectorsPerLoad;
    EXPECT_DOUBLE_EQ(payload / sectors, static_cast<double>(n)) << n;
    // Over a launch as well (warp count, loads per warp and passes arbitrary).
    const IssueWork w = issue_work(IssueStream::Fp32, n, 8448, 256, 7);
    EXPECT_DOUBLE_EQ(w.warp_instructions / w.load_sectors, static_cast<double>(n)) << n;
  }
}

TEST(IssueWork, WorkPerLaunch) {
  // Register only: 64 groups per pass x 128 payload instructions x warps x passes.
  const IssueWork r = issue_work(IssueStream::Mixed, 0, 1000, 0, 3);
  EXPECT_DOUBLE_EQ(r.warp_instructions, 1000.0 * 3 * 64 * 128);
  EXPECT_DOUBLE_EQ(r.fp_instructions, r.int_instructions);
  EXPECT_DOUBLE_EQ(r.load_sectors, 0);
  EXPECT_DOUBLE_EQ(r.buffer_bytes, 0);
  EXPECT_DOUBLE_EQ(r.store_sectors, 1000.0 * 4);  // one 128-byte checksum store per warp
  // n = 4, 256 loads per warp and pass: 8 loads per group -> 32 groups per pass.
  EXPECT_EQ(issue_groups_per_pass(4, 256), 32);
  const IssueWork l = issue_work(IssueStream::Int32, 4, 1000, 256, 2);
  EXPECT_DOUBLE_EQ(l.warp_instructions, 1000.0 * 2 * 32 * 128);
  EXPECT_DOUBLE_EQ(l.int_instructions, l.warp_instructions);
  EXPECT_DOUBLE_EQ(l.load_sectors, 1000.0 * 256 * 2 * 4);
  EXPECT_DOUBLE_EQ(l.buffer_bytes, 1000.0 * 256 * 128);
  // n = 64: one load per two groups.
  EXPECT_EQ(issue_groups_per_pass(64, 256), 512);
}

TEST(IssueWork, LoadsPerWarpCoverTheTargetInWholeQuanta) {
  const std::int64_t warps = 8448;  // H100: 132 SMs x 64 warps
  const std::int64_t l = issue_loads_per_warp(warps, std::uint64_t{256} << 20);
  EXPECT_EQ(l % kIssueLoadQuantum, 0);
  EXPECT_EQ(l, 256);                                                  // 268 MB / 1.08 MB per round = 248 -> 256
  EXPECT_EQ(issue_loads_per_warp(1000000, 1024), kIssueLoadQuantum);  // at least one quantum
}

// The stream is at least 4x the L2 the device reports: an RTX 4090 (72 MiB) and a B200 (126 MiB)
// stream 288 and 504 MiB; an H100 (50 MiB) and a V100 (6 MiB) keep the 256 MiB floor.
TEST(IssueWork, StreamIsFourTimesTheL2AndNeverUnder256MiB) {
  const std::uint64_t mib = std::uint64_t{1} << 20;
  EXPECT_EQ(issue_stream_bytes(72 * mib), 288 * mib);
  EXPECT_EQ(issue_stream_bytes(126 * mib), 504 * mib);
  EXPECT_EQ(issue_stream_bytes(50 * mib), 256 * mib);
  EXPECT_EQ(issue_stream_bytes(6 * mib), 256 * mib);
  EXPECT_EQ(issue_stream_bytes(0), 512 * mib);             // unknown: the largest L2 of the tables
  EXPECT_EQ(issue_stream_bytes(100 * mib + 1) % mib, 0u);  // whole MiB
  EXPECT_GE(issue_stream_bytes(100 * mib + 1), 4 * (100 * mib + 1));
}

// Each warp load touches exactly 4 whole 32-byte sectors, and a pass reads every word once.
TEST(IssueWork, WarpLoadIsFourSectorsAndPassCoversTheBuffer) {
  const std::int64_t warps = 24, loads = 64;
  std::vector<int> seen(static_cast<std::size_t>(warps * loads * kIssueWordsPerLoad), 0);
  for (std::int64_t w = 0; w < warps; ++w) {
    for (std::int64_t i = 0; i < loads; ++i) {
      std::uint64_t addresses[32];
      for (int lane = 0; lane < 32; ++lane) {
        const std::size_t e = issue_load_word(w, i, lane, warps);
        ASSERT_LT(e, seen.size());
        ++seen[e];
        addresses[lane] = 4096 + 4 * static_cast<std::uint64_t>(e);
      }
      EXPECT_EQ(sectors_per_warp_request(addresses, 32, 4), kIssueSectorsPerLoad);
    }
  }
  for (int count : seen) ASSERT_EQ(count, 1);
}

TEST(IssueWork, LoadSumClosedFormMatchesBruteForce) {
  for (std::int64_t warps : {1, 7, 8448}) {
    for (std::int64_t loads : {32, 64, 256}) {
      for (std::int64_t warp : {std::int64_t{0}, warps - 1, warps / 2}) {
        for (int lane : {0, 13, 31}) {
          std::uint32_t sum = 0;
          for (std::int64_t i = 0; i < loads; ++i) sum += issue_data_word(issue_load_word(warp, i, lane, warps));
          EXPECT_EQ(issue_thread_load_sum(warp, lane, warps, loads), sum)
              << warps << " " << loads << " " << warp << " " << lane;
        }
      }
    }
  }
}

// The INT32 ring's matrix power equals stepping the ring, for every ring size the streams use.
template <int M>
void check_ring(std::uint32_t a) {
  std::uint32_t u[M], u0[M];
  for (int k = 0; k < M; ++k) u[k] = u0[k] = issue_int_start(12345, k);
  for (std::int64_t steps = 0; steps <= 1000; ++steps) {
    if (steps == 0 || steps == 1 || steps == 7 || steps == 64 || steps == 1000) {
      const IssueRing r = issue_ring_power(M, a, steps);
      for (int i = 0; i < M; ++i) {
        std::uint32_t v = 0;
        for (int k = 0; k < M; ++k) v += r.r[i][k] * u0[k];
        ASSERT_EQ(v, u[i]) << "M=" << M << " steps=" << steps << " chain " << i;
      }
    }
    issue_int_ring_step(u, a);
  }
}

TEST(IssueWork, RingPowerMatchesSteps) {
  check_ring<8>(0x2545F491u);
  check_ring<4>(0x2545F491u);
  check_ring<8>(3u);
}

// The checksum the verification predicts equals brute force over the chains, including the FP32
// chains counting by fma(x, 1, 1) and a masked lane (0 steps).
TEST(IssueWork, ExpectedChecksumMatchesBruteForce) {
  const std::uint32_t a = 0x2545F491u;
  for (IssueStream s : {IssueStream::Fp32, IssueStream::Int32, IssueStream::Mixed}) {
    for (std::int64_t steps : {0, 1, 2048}) {
      const std::int64_t thread = 70001;
      float f[kIssueChains];
      std::uint32_t u[kIssueChains];
      int nf = 0, ni = 0;
      for (int j = 0; j < kIssueChains; ++j) {
        if (issue_chain_is_fp(s, j))
          f[nf++] = issue_fp_start(thread, j);
        else
          u[ni++] = issue_int_start(thread, j);
      }
      for (std::int64_t k = 0; k < steps; ++k) {
        for (int j = 0; j < nf; ++j) f[j] = std::fma(f[j], 1.0f, 1.0f);
        if (ni == 8) {
          issue_int_ring_step(reinterpret_cast<std::uint32_t(&)[8]>(u), a);
        } else if (ni == 4) {
          issue_int_ring_step(reinterpret_cast<std::uint32_t(&)[4]>(u), a);
        }
      }
      std::uint32_t want = 77;
      for (int j = 0; j < nf; ++j) want += issue_float_bits(f[j]);
      for (int j = 0; j < ni; ++j) want += u[j];
      const IssueRing ring = issue_ring_power(issue_int_chains(s), a, steps);
      EXPECT_EQ(issue_expected_checksum(s, thread, steps, ring, 77), want) << static_cast<int>(s) << " steps " << steps;
    }
  }
}

TEST(IssueWork, FpChainsStayExactUpToTheCap) {
  // The largest start plus the most steps a launch may take is still an exact float integer.
  const float top = issue_fp_start(1023, kIssueChains - 1) + static_cast<float>(kIssueMaxFpSteps);
  EXPECT_LE(static_cast<double>(top), 16777216.0);
  EXPECT_EQ(static_cast<double>(top), static_cast<double>(1023 * kIssueChains + kIssueChains - 1) + kIssueMaxFpSteps);
}

}  // namespace
}  // namespace roofprobe
