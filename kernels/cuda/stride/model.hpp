// Address pattern and sector accounting of the CUDA global-stride probe ("stride"), shared by its
// kernel (kernels/cuda/stride/kernel.cuh) and the host unit tests
// (tests/probes/stride/model_test.cpp).
//
// A warp request reads one word per lane, lane l at element base + l x stride (stride 0: every
// lane the same word). Its requests are laid out one "span" apart, a span being the elements one
// request covers (32 x stride), at least one 32-byte sector (stride 0), so consecutive requests
// touch disjoint sectors. Request q starts at element (q x span) mod n, over an array of n
// elements (n a power of two, a multiple of kStrideUnroll spans): no request wraps, every start is
// sector aligned, so every request touches the same number of sectors, counted from its 32
// addresses by sectors_per_warp_request (kernels/cuda/backend/stream_pattern.hpp).
//
// The kernel issues its requests in groups of kStrideUnroll consecutive ones (independent loads
// in flight; in the group, request u sits u spans after the first, a constant offset the loads
// take as an immediate). Warp g of W handles groups g, g + W, g + 2W, ..., so a launch of
// `groups` iterations issues requests q = 0 .. W x kStrideUnroll x groups - 1, each exactly once.
#pragma once

#include <cstdint>

#include "kernels/common/hd.hpp"
#include "kernels/cuda/backend/stream_pattern.hpp"

namespace roofprobe {

inline constexpr int kStrideUnroll = 8;  // requests per group (loads in flight per warp)
inline constexpr int kStrideMax = 32;    // largest stride of the axis, in elements

RP_HD bool stride_valid(int stride) {
  return stride == 0 || stride == 1 || stride == 2 || stride == 4 || stride == 8 || stride == 16 || stride == 32;
}
RP_HD bool stride_word_bytes_valid(int word_bytes) { return word_bytes == 4 || word_bytes == 8; }

// Elements one request covers: 32 x stride, or one sector's worth for stride 0.
RP_HD constexpr std::uint32_t stride_span_elements(int stride, int word_bytes) {
  return stride == 0 ? static_cast<std::uint32_t>(kSectorBytes / word_bytes)
                     : static_cast<std::uint32_t>(kWarpLanes * stride);
}

// Smallest array (elements) the pattern needs: one group of requests.
RP_HD std::uint32_t stride_min_elements(int stride, int word_bytes) {
  return kStrideUnroll * stride_span_elements(stride, word_bytes);
}

// Array elements for a working set: the largest power of two of words that fits in it. 0 when
// not even one group fits.
RP_HD std::uint32_t stride_elements(std::uint64_t working_set_bytes, int stride, int word_bytes) {
  std::uint64_t words = working_set_bytes / static_cast<std::uint64_t>(word_bytes);
  if (words > (std::uint64_t{1} << 31)) words = std::uint64_t{1} << 31;  // 32-bit indices
  std::uint64_t n = 1;
  while (n * 2 <= words) n *= 2;
  return n >= stride_min_elements(stride, word_bytes) && words > 0 ? static_cast<std::uint32_t>(n) : 0u;
}

// First element of group `group`; `mask` = n - 1. The product wraps modulo 2^32, which n divides,
// so the result is exact for any group.
RP_HD std::uint32_t stride_group_first(std::uint32_t group, std::uint32_t span, std::uint32_t mask) {
  return (group * static_cast<std::uint32_t>(kStrideUnroll) * span) & mask;
}

// Element lane `lane` reads in request `u` of a group starting at `group_first`.
RP_HD constexpr std::uint32_t stride_group_element(std::uint32_t group_first, int u, int lane, int stride,
                                                   std::uint32_t span) {
  return group_first + static_cast<std::uint32_t>(u) * span +
         static_cast<std::uint32_t>(lane) * static_cast<std::uint32_t>(stride);
}

// Element lane `lane` reads in request `q` (q = group x kStrideUnroll + u) over n = mask + 1.
RP_HD std::uint32_t stride_element(std::uint32_t q, int lane, int stride, int word_bytes, std::uint32_t mask) {
  const std::uint32_t span = stride_span_elements(stride, word_bytes);
  return stride_group_element(stride_group_first(q / kStrideUnroll, span, mask), static_cast<int>(q % kStrideUnroll),
                              lane, stride, span);
}

// Byte address of lane `lane` in request `q`, for an array at byte address `base`.
RP_HD std::uint64_t stride_lane_address(std::uint64_t base, std::uint32_t q, int lane, int stride, int word_bytes,
                                        std::uint32_t mask) {
  return base + static_cast<std::uint64_t>(stride_element(q, lane, stride, word_bytes, mask)) *
                    static_cast<std::uint64_t>(word_bytes);
}

// Distinct 32-byte sectors request `q` touches, from its 32 lane addresses.
RP_HD int stride_request_sectors(std::uint64_t base, std::uint32_t q, int stride, int word_bytes, std::uint32_t mask) {
  std::uint64_t addresses[kWarpLanes];
  for (int l = 0; l < kWarpLanes; ++l) addresses[l] = stride_lane_address(base, q, l, stride, word_bytes, mask);
  return sectors_per_warp_request(addresses, kWarpLanes, word_bytes);
}

// Sectors per request of the probe (its array is 256-byte aligned, cudaMalloc: every request
// starts on a sector boundary): 1 for stride 0, then 32 x stride x word bytes / 32, at most 32.
RP_HD int stride_sectors_per_request(int stride, int word_bytes) {
  return stride_request_sectors(0, 0, stride, word_bytes, stride_min_elements(stride, word_bytes) - 1);
}

// ---- work of one launch -----------------------------------------------------------------------
struct StrideWork {
  double requests = 0;      // global load warp instructions
  double transactions = 0;  // 32-byte sectors
  double bytes = 0;         // bytes moved: sectors x 32
};

RP_HD StrideWork stride_work(double warps, double groups, int stride, int word_bytes) {
  StrideWork w;
  w.requests = warps * kStrideUnroll * groups;
  w.transactions = w.requests * stride_sectors_per_request(stride, word_bytes);
  w.bytes = w.transactions * kSectorBytes;
  return w;
}

// ---- data and checksum ------------------------------------------------------------------------
// Word at element e: e times an odd constant, modulo 2^(8 x word bytes), so the sum of the words
// read is the constant times the sum of the element indices read.
inline constexpr std::uint64_t kStrideHash = 0x9E3779B97F4A7C15ull;

RP_HD std::uint64_t stride_word(std::uint64_t e, int word_bytes) {
  const std::uint64_t v = e * kStrideHash;
  return word_bytes == 4 ? (v & 0xffffffffull) : v;
}

// 0 + 1 + ... + (k - 1) modulo 2^64, the even factor halved first so the division is exact.
RP_HD std::uint64_t stride_triangle(std::uint64_t k) {
  if (k == 0) return 0;
  return k % 2 == 0 ? (k / 2) * (k - 1) : k * ((k - 1) / 2);
}

// Sum of (q mod m) for q in [0, requests), modulo 2^64.
RP_HD std::uint64_t stride_sum_of_residues(std::uint64_t requests, std::uint64_t m) {
  return (requests / m) * stride_triangle(m) + stride_triangle(requests % m);
}

// Sum of every word `requests` requests (q = 0 .. requests-1) read over n = mask + 1 elements,
// each lane's word counted once, modulo 2^(8 x word bytes): the kernels' checksum.
RP_HD std::uint64_t stride_expected_sum(std::uint64_t requests, int stride, int word_bytes, std::uint32_t mask) {
  const std::uint64_t span = stride_span_elements(stride, word_bytes);
  const std::uint64_t m = (static_cast<std::uint64_t>(mask) + 1) / span;  // distinct request starts
  // Sum of element indices: request q starts at (q mod m) span; lanes add l x stride.
  const std::uint64_t lanes = kWarpLanes;
  const std::uint64_t index_sum = lanes * span * stride_sum_of_residues(requests, m) +
                                  requests * static_cast<std::uint64_t>(stride) * (lanes * (lanes - 1) / 2);
  const std::uint64_t sum = index_sum * kStrideHash;
  return word_bytes == 4 ? (sum & 0xffffffffull) : sum;
}

}  // namespace roofprobe
