// How a working set is split among workers (OpenMP threads on the CPU). Shared by the probes,
// which first-touch and stream exactly these ranges, and by the tests.
#pragma once

#include <cstddef>

#include "kernels/common/hd.hpp"

namespace roofprobe {

struct Range {
  std::size_t begin = 0, end = 0;
  RP_HD std::size_t size() const { return end - begin; }
};

// Contiguous chunk of worker w out of `workers` over n elements; chunk starts are rounded to a
// multiple of `align` elements (a cache line or a SIMD block) so no two workers share a line.
// Chunks are disjoint and cover [0, n) exactly.
RP_HD Range chunk_of(std::size_t n, int workers, int w, std::size_t align) {
  auto start = [&](int i) -> std::size_t {
    if (i >= workers) return n;
    std::size_t s = n * static_cast<std::size_t>(i) / static_cast<std::size_t>(workers);
    s -= s % align;
    return s;
  };
  return Range{start(w), start(w + 1)};
}

}  // namespace roofprobe
