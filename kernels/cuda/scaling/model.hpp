// Work split and accounting of the CUDA "scaling" probe (ceilings vs the number of SMs used),
// shared by its kernels (kernels/cuda/scaling/kernel.cuh), its launcher (kernels/cuda/scaling/probe.cu)
// and the host unit tests (tests/probes/scaling/model_test.cpp).
//
// A launch is `reps` passes of `items_per_pass` work items. The blocks that may run (those on
// the k SMs chosen) take items from one global counter, item i of the launch being item
// i mod items_per_pass of pass i / items_per_pass, so all the work is done whichever SMs host
// the blocks and however many there are.
//   memory_read  item = 64 KiB of the working set: kScalingLoadsPerThread 16-byte loads per
//                thread, lane-consecutive (coalesced); the items of a pass tile the working set.
//   fp64_fma     item = kScalingFmaChains independent FP64 FMA chains of kScalingFmaSteps steps
//                per thread, carried from item to item in registers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/hd.hpp"
#include "kernels/cuda/backend/stream_pattern.hpp"

namespace roofprobe {

enum class ScalingKernel : int { MemoryRead = 0, Fp64Fma = 1 };

inline ScalingKernel parse_scaling_kernel(const std::string& text) {
  if (text == "memory_read") return ScalingKernel::MemoryRead;
  if (text == "fp64_fma") return ScalingKernel::Fp64Fma;
  throw std::invalid_argument("scaling: kernel '" + text + "' is not memory_read or fp64_fma");
}

inline constexpr int kScalingBlock = 256;          // threads per block
inline constexpr int kScalingLoadsPerThread = 16;  // memory_read: 16-byte loads per item
inline constexpr std::size_t kScalingElementBytes = 16;
inline constexpr std::size_t kScalingItemElements =
    static_cast<std::size_t>(kScalingBlock) * kScalingLoadsPerThread;  // 4096 elements
inline constexpr std::size_t kScalingItemBytes = kScalingItemElements * kScalingElementBytes;
inline constexpr int kScalingFmaChains = 8;   // fp64_fma: independent chains per thread
inline constexpr int kScalingFmaSteps = 128;  // fp64_fma: FMA steps per chain and item
inline constexpr std::uint32_t kScalingFmaItemsPerPass = 1024;
inline constexpr std::uint32_t kScalingMaxSmIds = 1024;  // %smid values the kernels record

// ---- memory_read ----------------------------------------------------------------------------
// Element that load `load` of thread `thread` reads in item `item_in_pass`: the item's
// kScalingItemElements elements, one block-wide row per load, lanes on consecutive elements.
RP_HD std::size_t scaling_item_element(std::size_t item_in_pass, int load, int thread) {
  return item_in_pass * kScalingItemElements + static_cast<std::size_t>(load) * kScalingBlock +
         static_cast<std::size_t>(thread);
}

// 16-byte elements the probe streams for a working set: whole items only (rounded down).
RP_HD std::size_t scaling_elements(std::uint64_t working_set_bytes) {
  return static_cast<std::size_t>(working_set_bytes / kScalingItemBytes) * kScalingItemElements;
}

// The working set of memory_read: HBM-sized, i.e. 1 GiB or 4x the L2 when that is larger (the
// DRAM rate converges by ~4x L2), but at most half the device memory; whole items.
inline std::uint64_t scaling_working_set_bytes(std::uint64_t l2_bytes, std::uint64_t memory_bytes) {
  std::uint64_t ws = std::max<std::uint64_t>(std::uint64_t{1} << 30, 4 * l2_bytes);
  if (memory_bytes > 0) ws = std::min<std::uint64_t>(ws, memory_bytes / 2);
  return ws / kScalingItemBytes * kScalingItemBytes;
}

// ---- both kernels ---------------------------------------------------------------------------
RP_HD std::uint32_t scaling_items_per_pass(ScalingKernel kernel, std::size_t elements) {
  return kernel == ScalingKernel::MemoryRead ? static_cast<std::uint32_t>(elements / kScalingItemElements)
                                             : kScalingFmaItemsPerPass;
}

// Which item of its pass launch-wide item `item` is.
RP_HD std::uint32_t scaling_item_in_pass(std::uint64_t item, std::uint32_t items_per_pass) {
  return static_cast<std::uint32_t>(item % items_per_pass);
}

// FLOPs of one fp64_fma item: every thread of the block, every chain, every step an FMA (2).
RP_HD double scaling_fma_flops_per_item() { return 2.0 * kScalingBlock * kScalingFmaChains * kScalingFmaSteps; }

struct ScalingWork {
  double bytes_read = 0;
  double flops = 0;
  double transactions = 0;  // 32-byte sectors
};

// Work of one launch of `reps` passes. memory_read: each pass reads the n elements once (items
// are 64 KiB, whole sectors); the per-block sums and item counters are not counted (a few KiB).
// fp64_fma: FLOPs only.
RP_HD ScalingWork scaling_work_per_launch(ScalingKernel kernel, std::size_t elements, std::int64_t reps) {
  ScalingWork w;
  const double passes = static_cast<double>(reps);
  if (kernel == ScalingKernel::MemoryRead) {
    w.bytes_read = static_cast<double>(elements) * kScalingElementBytes * passes;
    w.transactions = w.bytes_read / kSectorBytes;
  } else {
    w.flops = scaling_fma_flops_per_item() * kScalingFmaItemsPerPass * passes;
  }
  return w;
}

// ---- fp64_fma chains ------------------------------------------------------------------------
// Chain j of global thread g starts at a small integer and adds j + 1 per step (fma(x, one, b)
// with one = 1.0 given at run time): integers below 2^53, so every step is exact and the host
// knows the outcome: after m items, x - x0 = m x kScalingFmaSteps x (j + 1).
RP_HD double scaling_fma_start(std::uint64_t thread, int chain) {
  return static_cast<double>((thread * 2654435761u + static_cast<std::uint64_t>(chain) * 40503u) & 0xFFFFu);
}
RP_HD double scaling_fma_step(int chain) { return static_cast<double>(chain + 1); }

// Sum over all threads and chains of (x - x0) once `items` items were run in total, whichever
// blocks ran them (each item runs on all kScalingBlock threads of one block); mod 2^64 like the
// kernel's sums.
RP_HD std::uint64_t scaling_fma_checksum(std::uint64_t items) {
  std::uint64_t steps_sum = 0;  // sum over chains of the step
  for (int j = 0; j < kScalingFmaChains; ++j) steps_sum += static_cast<std::uint64_t>(j + 1);
  return items * kScalingBlock * kScalingFmaSteps * steps_sum;
}

// memory_read's checksum of a launch of `reps` passes over n elements: every word once per
// pass, modulo 2^32 (the data is kernels/cuda/backend/stream_pattern.hpp's word hash).
RP_HD std::uint32_t scaling_read_checksum(std::size_t elements, std::int64_t reps) {
  return static_cast<std::uint32_t>(reps) * stream_initial_sum(elements);
}

// ---- restricting the work to k SMs ----------------------------------------------------------
// SMs used for an sm_count axis value: 0 means all of them.
RP_HD int scaling_active_sms(int sm_count, int device_sms) {
  return sm_count <= 0 || sm_count > device_sms ? device_sms : sm_count;
}

// The kernels run blocks only where %smid < limit. %smid values need not be 0..SMs-1 (the PTX
// ISA does not promise contiguous ids), so the limit comes from the ids a census found on the
// device: one past the k-th smallest, so that exactly k SMs qualify. All of them (k = 0 or k >=
// the ids found): no limit. Throws if the census saw no SM at all.
inline std::uint32_t scaling_smid_limit(const std::vector<std::uint32_t>& present_ids, int k) {
  std::vector<std::uint32_t> ids = present_ids;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  if (ids.empty()) throw std::runtime_error("scaling: the SM census found no SM");
  if (k <= 0 || static_cast<std::size_t>(k) >= ids.size()) return 0xFFFFFFFFu;
  return ids[static_cast<std::size_t>(k) - 1] + 1;
}

}  // namespace roofprobe
