// Address pattern and wavefront accounting of the CUDA shared-memory probe ("shared"), shared by
// its kernel (kernels/cuda/shared/kernel.cuh) and the host unit tests
// (tests/probes/shared/model_test.cpp).
//
// Shared memory has 32 banks of 4-byte words: word w lives in bank w mod 32. One warp request is
// served in wavefronts of up to 128 bytes (one word per bank); it needs as many wavefronts as the
// largest number of DISTINCT words any one bank must deliver. Lanes reading the same word share it
// (a broadcast), so they cost nothing extra.
//
// The probe reads from a table of kSharedRows rows of kSharedRowWords 4-byte words. Lane l always
// reads the same column of a row, shared_lane_column(l, degree); which row comes from the word the
// lane read last (a chase through the rows, so no load can be hoisted out of the loop). Every word
// of a row holds the byte offset of the SAME column in the next row, so a warp keeps its column
// pattern, and therefore its bank-conflict degree, on every step.
#pragma once

#include <cstdint>

#include "kernels/common/hd.hpp"

namespace roofprobe {

inline constexpr int kSharedBanks = 32;
inline constexpr int kSharedBankBytes = 4;
inline constexpr int kSharedWavefrontBytes = kSharedBanks * kSharedBankBytes;  // 128
inline constexpr int kSharedWarpLanes = 32;

// The table: kSharedRows rows of 32 x 32 words (4 KiB), enough for the widest pattern (degree 32:
// lane l reads word 32 l, up to 992). 8 rows = 32 KiB, static shared memory every sm_70+ block
// may use.
inline constexpr int kSharedRowWords = kSharedBanks * kSharedWarpLanes;  // 1024
inline constexpr int kSharedRows = 8;
inline constexpr int kSharedTableWords = kSharedRows * kSharedRowWords;
inline constexpr std::uint32_t kSharedTableBytes = kSharedTableWords * kSharedBankBytes;

// The conflict_degree axis: "broadcast" (every lane reads one word) or a power of two 1..32.
inline constexpr int kSharedBroadcast = 0;

RP_HD bool shared_degree_valid(int degree) {
  return degree == kSharedBroadcast || degree == 1 || degree == 2 || degree == 4 || degree == 8 || degree == 16 ||
         degree == 32;
}

// Column (word index inside a row) lane `lane` reads for `degree`. Word stride d: lanes l and
// l + 32/d fall in the same bank on distinct words, so each used bank holds exactly d distinct
// words (d-way conflict) and 32/d banks are used; broadcast: all lanes read column 0.
RP_HD int shared_lane_column(int lane, int degree) { return degree == kSharedBroadcast ? 0 : lane * degree; }

// Wavefronts one warp request of 4-byte loads needs, computed from the lanes' BYTE addresses
// (relative to any 128-byte aligned base; only the bank and the word matter): the largest number
// of distinct words in one bank. `lanes` active lanes, 1..32. Addresses are 4-byte aligned.
RP_HD int shared_wavefronts_per_request(const std::uint32_t* byte_addresses, int lanes) {
  int worst = lanes > 0 ? 1 : 0;
  for (int l = 0; l < lanes; ++l) {
    const std::uint32_t word = byte_addresses[l] / kSharedBankBytes;
    // Count the distinct words of this lane's bank, once per bank: only at the first lane that
    // reads this bank.
    bool bank_seen_before = false;
    for (int k = 0; k < l && !bank_seen_before; ++k)
      bank_seen_before = (byte_addresses[k] / kSharedBankBytes) % kSharedBanks == word % kSharedBanks;
    if (bank_seen_before) continue;
    int distinct = 0;
    for (int k = l; k < lanes; ++k) {
      const std::uint32_t wk = byte_addresses[k] / kSharedBankBytes;
      if (wk % kSharedBanks != word % kSharedBanks) continue;
      bool repeat = false;  // the same word as an earlier lane of this bank: broadcast
      for (int j = l; j < k && !repeat; ++j) repeat = byte_addresses[j] / kSharedBankBytes == wk;
      if (!repeat) ++distinct;
    }
    if (distinct > worst) worst = distinct;
  }
  return worst;
}

// Wavefronts per request of the probe's pattern for `degree`, from its 32 lane addresses.
RP_HD int shared_pattern_wavefronts(int degree) {
  std::uint32_t addresses[kSharedWarpLanes];
  for (int l = 0; l < kSharedWarpLanes; ++l)
    addresses[l] = static_cast<std::uint32_t>(shared_lane_column(l, degree)) * kSharedBankBytes;
  return shared_wavefronts_per_request(addresses, kSharedWarpLanes);
}

// ---- the row chase ----------------------------------------------------------------------------
// Row after `row`: rows advance by an odd step (a kernel parameter, so nothing folds), which visits
// all kSharedRows rows (a power of two) before repeating.
RP_HD std::uint32_t shared_next_row(std::uint32_t row, std::uint32_t row_step) {
  return (row + row_step) % kSharedRows;
}

// Byte offset in the table of (row, column).
RP_HD std::uint32_t shared_byte_offset(std::uint32_t row, std::uint32_t column) {
  return (row * kSharedRowWords + column) * kSharedBankBytes;
}

// Content of table word `word`: the byte offset of the same column in the next row.
RP_HD std::uint32_t shared_table_word(std::uint32_t word, std::uint32_t row_step) {
  const std::uint32_t row = word / kSharedRowWords, column = word % kSharedRowWords;
  return shared_byte_offset(shared_next_row(row, row_step), column);
}

// Row slot `slot` (one of the independent chains of a thread) of warp `warp` starts in; warps and
// slots start spread over the rows so that a mis-assigned chain changes the checksum.
RP_HD std::uint32_t shared_start_row(std::uint32_t warp, int slot) {
  return (warp + static_cast<std::uint32_t>(slot)) % kSharedRows;
}

// Row reached after `steps` loads from `start`.
RP_HD std::uint32_t shared_row_after(std::uint32_t start, std::uint64_t steps, std::uint32_t row_step) {
  return static_cast<std::uint32_t>((start + (steps % kSharedRows) * row_step) % kSharedRows);
}

// What a thread stores at the end: its chains' last offsets, weighted by slot (2 slot + 1, odd)
// so that swapped or duplicated chains change it too. Modulo 2^32.
RP_HD std::uint32_t shared_checksum_term(std::uint32_t offset, int slot) {
  return offset * (2u * static_cast<std::uint32_t>(slot) + 1u);
}

// Thread checksum the host predicts: `slots` chains of lane `lane` of warp `warp`, `steps` loads
// each.
RP_HD std::uint32_t shared_expected_checksum(std::uint32_t warp, int lane, int degree, int slots, std::uint64_t steps,
                                             std::uint32_t row_step) {
  std::uint32_t sum = 0;
  const auto column = static_cast<std::uint32_t>(shared_lane_column(lane, degree));
  for (int s = 0; s < slots; ++s) {
    const std::uint32_t row = shared_row_after(shared_start_row(warp, s), steps, row_step);
    sum += shared_checksum_term(shared_byte_offset(row, column), s);
  }
  return sum;
}

// ---- work of one launch -----------------------------------------------------------------------
struct SharedWork {
  double warp_instructions = 0;  // shared load warp instructions (the payload)
  double wavefronts = 0;         // 128-byte wavefronts those requests take
  double bytes = 0;              // bytes delivered to the lanes: 32 x 4 per instruction
};

// `warps` warps, each running `slots` chains of `steps` 4-byte loads.
RP_HD SharedWork shared_work(double warps, int slots, double steps, int degree) {
  SharedWork w;
  w.warp_instructions = warps * slots * steps;
  w.wavefronts = w.warp_instructions * shared_pattern_wavefronts(degree);
  w.bytes = w.warp_instructions * kSharedWarpLanes * kSharedBankBytes;
  return w;
}

}  // namespace roofprobe
