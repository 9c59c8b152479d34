// Pieces the OpenMP probes share: cache-line aligned buffers and first-touch initialisation.
#pragma once

#include <omp.h>
#include <sys/mman.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <new>

#include "kernels/cpu/partition.hpp"
#include "kernels/cpu/simd.hpp"

namespace roofprobe::cpu {

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

template <class T>
using Buffer = std::unique_ptr<T[], FreeDeleter>;

inline constexpr std::size_t kHugePage = std::size_t{2} << 20;

// Uninitialised, page aligned: the pages are placed by whoever touches them first, which
// first_touch() makes the thread that later streams them. Buffers of 2 MiB or more are 2 MiB
// aligned and asked for transparent huge pages (Linux, THP in `madvise` or `always` mode), so
// L3- and DRAM-sized streams are not slowed by TLB misses (a 16 MiB set is 4096 small pages,
// more than Zen 4's 3072-entry L2 DTLB); where the kernel refuses, small pages are used.
template <class T>
Buffer<T> allocate_untouched(std::size_t n) {
  const std::size_t align = n * sizeof(T) >= kHugePage ? kHugePage : 4096;
  std::size_t bytes = ((n * sizeof(T) + align - 1) / align) * align;
  void* p = std::aligned_alloc(align, bytes == 0 ? align : bytes);
  if (p == nullptr) throw std::bad_alloc();
#if defined(MADV_HUGEPAGE)
  if (align == kHugePage) madvise(p, bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
  return Buffer<T>(static_cast<T*>(p));
}

// Elements per chunk alignment: one cache line, so no two threads share a line.
template <class T>
inline constexpr std::size_t kLineElements = 64 / sizeof(T);

inline double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Runs body(thread, threads) on `threads` OpenMP threads and returns the seconds from the moment
// all of them are running (a barrier releases them together) until the last one is done.
template <class Body>
double timed_parallel(int threads, Body body) {
  double start = 0;
#pragma omp parallel num_threads(threads)
  {
#pragma omp barrier
#pragma omp master
    start = steady_seconds();
    body(omp_get_thread_num(), omp_get_num_threads());
  }
  return steady_seconds() - start;  // the region's end joins every thread
}

// Thread chunks of one stream can be stored `guard` elements apart (chunk t's element i at
// data[i + t * guard]): the hardware prefetchers run a few lines past the end of a stream, and
// with the neighbour's chunk right there they take its lines away while it writes them. Two
// threads copying 8 KiB chunks of one array ran at half their rate (Sapphire Rapids: 460 GB/s;
// 256 bytes apart or more, 970 GB/s). A stream allocates n + threads * guard.
template <class T>
inline constexpr std::size_t kChunkGuardElements = 4096 / sizeof(T);

// Each thread writes init(i) into its own chunk, so its pages land in its NUMA domain and its
// caches; the probes then stream the same chunks with the same thread count.
template <class T, class Init>
void first_touch(T* data, std::size_t n, int threads, Init init, std::size_t guard = 0) {
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    Range r = chunk_of(n, omp_get_num_threads(), t, kLineElements<T>);
    T* chunk = data + static_cast<std::size_t>(t) * guard;
    for (std::size_t i = r.begin; i < r.end; ++i) chunk[i] = init(i);
  }
}

}  // namespace roofprobe::cpu
