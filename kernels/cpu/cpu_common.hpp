// Pieces the OpenMP probes share: cache-line aligned buffers and first-touch initialisation.
#pragma once

#include <omp.h>

#include <cstdlib>
#include <memory>
#include <new>

#include "kernels/common/partition.hpp"
#include "kernels/cpu/simd.hpp"

namespace roofprobe::cpu {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

template <class T>
using Buffer = std::unique_ptr<T[], FreeDeleter>;

// Uninitialised, 4 KiB aligned (page and SIMD): the pages are placed by whoever touches them
// first, which first_touch() makes the thread that later streams them.
template <class T>
Buffer<T> allocate_untouched(std::size_t n) {
  std::size_t bytes = ((n * sizeof(T) + 4095) / 4096) * 4096;
  void* p = std::aligned_alloc(4096, bytes == 0 ? 4096 : bytes);
  if (p == nullptr) throw std::bad_alloc();
  return Buffer<T>(static_cast<T*>(p));
}

// Elements per chunk alignment: one cache line, so no two threads share a line.
template <class T>
inline constexpr std::size_t kLineElements = 64 / sizeof(T);

// Each thread writes init(i) into its own chunk, so its pages land in its NUMA domain and its
// caches; the probes then stream the same chunks with the same thread count.
template <class T, class Init>
void first_touch(T* data, std::size_t n, int threads, Init init) {
#pragma omp parallel num_threads(threads)
  {
    Range r = chunk_of(n, omp_get_num_threads(), omp_get_thread_num(), kLineElements<T>);
    for (std::size_t i = r.begin; i < r.end; ++i) data[i] = init(i);
  }
}

}  // namespace roofprobe::cpu
