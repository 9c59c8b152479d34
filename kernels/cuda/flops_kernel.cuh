// Device side of the CUDA FLOP probe: the kernel template, one instantiation per (type, K, form),
// shared by kernels/cuda/flops.cu and the PTX checks in tests/ptx (which instantiate exactly one
// of them and count its instructions).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "kernels/common/flop_chain.hpp"
#include "kernels/common/flop_tiles.hpp"

namespace roofprobe::cuda {

inline constexpr int kFlopsBlock = 256;  // threads per block
inline constexpr int kFlopsIlp = 8;      // independent chains (elements in registers) per thread

// Round-to-nearest device arithmetic. The explicit _rn intrinsics are never contracted: a plain
// x * a + b may become one FMA (nvcc contracts by default, and ptxas may fuse mul/add that carry
// no rounding modifier), which would turn the noFMA ceiling into an FMA one.
template <class T>
struct ScalarOps;

template <>
struct ScalarOps<double> {
  __device__ static __forceinline__ double fma(double x, double a, double b) {
    return __fma_rn(x, a, b);
  }
  __device__ static __forceinline__ double mul(double x, double a) { return __dmul_rn(x, a); }
  __device__ static __forceinline__ double add(double x, double b) { return __dadd_rn(x, b); }
};

template <>
struct ScalarOps<float> {
  __device__ static __forceinline__ float fma(float x, float a, float b) {
    return __fmaf_rn(x, a, b);
  }
  __device__ static __forceinline__ float mul(float x, float a) { return __fmul_rn(x, a); }
  __device__ static __forceinline__ float add(float x, float b) { return __fadd_rn(x, b); }
};

// The kFlopsIlp values one thread holds. flop_chain sees the group as one element whose
// operations apply slot by slot, so every chain step is issued for all slots before the next
// step: the independent chains are interleaved in the source already, not left to the scheduler.
template <class T>
struct Slots {
  T v[kFlopsIlp];
};

template <class T>
struct SlotOps {
  __device__ static __forceinline__ Slots<T> fma(Slots<T> x, const Slots<T>& a, const Slots<T>& b) {
#pragma unroll
    for (int j = 0; j < kFlopsIlp; ++j) x.v[j] = ScalarOps<T>::fma(x.v[j], a.v[j], b.v[j]);
    return x;
  }
  __device__ static __forceinline__ Slots<T> mul(Slots<T> x, const Slots<T>& a) {
#pragma unroll
    for (int j = 0; j < kFlopsIlp; ++j) x.v[j] = ScalarOps<T>::mul(x.v[j], a.v[j]);
    return x;
  }
  __device__ static __forceinline__ Slots<T> add(Slots<T> x, const Slots<T>& b) {
#pragma unroll
    for (int j = 0; j < kFlopsIlp; ++j) x.v[j] = ScalarOps<T>::add(x.v[j], b.v[j]);
    return x;
  }
};

template <class T>
__device__ __forceinline__ Slots<T> broadcast(T value) {
  Slots<T> s;
#pragma unroll
  for (int j = 0; j < kFlopsIlp; ++j) s.v[j] = value;
  return s;
}

template <class T>
__global__ void flops_init_kernel(T* data, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    data[i] = flops_initial_value<T>(i);
  }
}

// One launch: `reps` passes over the array (ERT's read-modify-write: load, K FLOPs, store). The
// loops over passes and tiles are kept rolled (unroll 1) so the kernel body holds exactly one
// tile's work: kFlopsIlp loads, kFlopsIlp chains of K FLOPs, kFlopsIlp stores. The PTX checks
// count on that. a and b are arguments, so nothing can be folded at compile time.
template <class T, int K, FlopForm Form>
__global__ void __launch_bounds__(kFlopsBlock)
    flops_kernel(T* __restrict__ data, std::size_t tiles, int reps, T a, T b) {
  const Slots<T> av = broadcast(a);
  const Slots<T> bv = broadcast(b);
  const int x = static_cast<int>(threadIdx.x);
#pragma unroll 1
  for (int r = 0; r < reps; ++r) {
#pragma unroll 1
    for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
      Slots<T> v;
#pragma unroll
      for (int j = 0; j < kFlopsIlp; ++j)
        v.v[j] = data[tile_element(tile, j, x, kFlopsBlock, kFlopsIlp)];
      v = flop_chain<K, Form, SlotOps<T>>(v, av, bv);
#pragma unroll
      for (int j = 0; j < kFlopsIlp; ++j)
        data[tile_element(tile, j, x, kFlopsBlock, kFlopsIlp)] = v.v[j];
    }
  }
}

}  // namespace roofprobe::cuda
