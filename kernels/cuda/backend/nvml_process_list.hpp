// Reading a list whose length NVML decides: nvmlDeviceGetComputeRunningProcesses fills at most
// the entries the caller has room for and otherwise answers NVML_ERROR_INSUFFICIENT_SIZE with the
// count it needs. Processes start between two calls, so the buffer grows with room to spare and
// the call is repeated a few times. Plain C++, host-tested (tests/unit/cuda_patterns_test.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace roofprobe::cuda {

inline constexpr int kNvmlSuccess = 0;             // NVML_SUCCESS
inline constexpr int kNvmlInsufficientSize = 7;    // NVML_ERROR_INSUFFICIENT_SIZE
inline constexpr std::size_t kNvmlListStart = 64;  // room for the first call
inline constexpr int kNvmlListTries = 4;

template <class Entry>
struct NvmlList {
  std::vector<Entry> entries;  // the whole list when `complete`
  bool complete = false;
  bool outgrew = false;  // still longer than the buffer after every try: many entries, none read
};

// The whole list; neither complete nor outgrown when NVML refused (an error other than the size:
// the list is unknown, not empty). `query(count, entries)` has NVML's contract: *count is the room
// in, the entries written (or the entries needed, with kNvmlInsufficientSize) out.
template <class Entry, class Query>
NvmlList<Entry> read_nvml_list(Query&& query) {
  NvmlList<Entry> list;
  list.entries.resize(kNvmlListStart);
  for (int attempt = 0; attempt < kNvmlListTries; ++attempt) {
    unsigned int count = static_cast<unsigned int>(list.entries.size());
    const int r = query(&count, list.entries.data());
    if (r == kNvmlSuccess) {
      list.entries.resize(std::min<std::size_t>(count, list.entries.size()));
      list.complete = true;
      return list;
    }
    if (r != kNvmlInsufficientSize) break;
    // The count needed, with room for the processes that start before the next call.
    list.entries.resize(
        std::max<std::size_t>(static_cast<std::size_t>(count) + count / 4 + 8, 2 * list.entries.size()));
    list.outgrew = attempt + 1 == kNvmlListTries;
  }
  list.entries.clear();
  return list;
}

}  // namespace roofprobe::cuda
