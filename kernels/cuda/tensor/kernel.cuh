// Device side of the tensor-core probe: one kernel template per api (mma.sync through inline PTX,
// and WMMA), instantiated per input.accumulate type by kernels/cuda/tensor/probe.cu and, one at a time,
// by the PTX checks in tests/ptx.
//
// Every warp loads its A, B, -B and kTensorChains accumulators C from one of kTensorDataSets
// random sets (kernels/cuda/tensor/model.hpp), then issues, per loop iteration, kTensorSteps
// MMAs on each chain (all chains before the next step, so the chains' MMAs overlap), alternating
// +B and -B: every iteration brings each accumulator back to C exactly (the values are small
// dyadic numbers), so launches of any length stay verifiable. After each iteration the warp
// counts whether chain 0 is back at C (`hits`: proves the loop ran `reps` times with correct
// products), and after the loop one more +B MMA per chain leaves C + A*B for the host to check.
//
// An instruction is compiled only where the architecture has it (__CUDA_ARCH__ against the shape
// table's min_cc; fp8 also needs CUDA 12.4's PTX ISA 8.4). A kernel compiled without it writes
// kTensorNotCompiled into `hits`, so a launch the host should not have made cannot pass verify().
#pragma once

#include <cuda_runtime.h>
#include <mma.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/tensor/model.hpp"
#include "kernels/cuda/tensor/wgmma_layout.hpp"

// e4m3 mma.sync needs PTX ISA 8.4 (CUDA 12.4).
#if defined(__CUDACC_VER_MAJOR__) && \
    (__CUDACC_VER_MAJOR__ > 12 || (__CUDACC_VER_MAJOR__ == 12 && __CUDACC_VER_MINOR__ >= 4))
#define RP_TENSOR_COMPILER_HAS_FP8_MMA 1
#else
#define RP_TENSOR_COMPILER_HAS_FP8_MMA 0
#endif

namespace roofprobe::cuda {

inline constexpr int kTensorNotCompiled = -1;  // `hits` of a kernel built without its instruction

// The tile paths (wgmma, tcgen05): copies `rows` rows of a data set's 16-bit units (kWgmmaRowUnits,
// 32 bytes, each) into a shared-memory tile in the layout of wgmma_tile_offset, each unit through
// `unit` (the identity, or the int8 negation), the block's Threads threads striding over them.
template <int Threads, class Unit>
__device__ __forceinline__ void tensor_stage_tile(unsigned char* tile, const std::uint16_t* units, int rows, int t,
                                                  Unit unit) {
  constexpr int u = kWgmmaRowUnits;
  for (int i = t; i < rows * u; i += Threads)
    *reinterpret_cast<std::uint16_t*>(tile + wgmma_tile_offset(i / u, i % u)) = unit(units[i]);
}

// Both kernels declare __launch_bounds__(kTensorBlock, 1): with the block size alone, ptxas
// (CUDA 13, sm_90) held the fp64 kernels to 40 registers and spilled 8 bytes (mma) and 24 bytes
// (WMMA) to local memory, the value the loop compares with among them; with the minimum of one
// block `nvcc -Xptxas -v` reports no spill for any instantiation (the PTX checks cannot see
// spills).

// Whether device code for compute capability `arch` (major * 10 + minor) holds the mma.sync of T
// (of the api's shape).
__host__ __device__ constexpr bool tensor_mma_compiled(TensorType t, int arch, TensorApi api = TensorApi::Mma) {
  const int need = tensor_mma_shape(t, api).min_cc;
  if (t == TensorType::Fp8Fp32 && !RP_TENSOR_COMPILER_HAS_FP8_MMA) return false;
  return need > 0 && arch >= need && tensor_mma_native(t, api, arch);
}

// ---- mma.sync -------------------------------------------------------------------------------
// Register types of the fragments: 32-bit words holding packed elements, except fp64 (one double
// per element) and the accumulators, typed so the PTX operands have the instruction's types.
template <TensorType T, TensorApi Api = TensorApi::Mma>
struct MmaRegs {
  using A = std::conditional_t<T == TensorType::Fp64Fp64, double, std::uint32_t>;
  using C = std::conditional_t<T == TensorType::Fp64Fp64, double,
                               std::conditional_t<T == TensorType::Int8Int32, int,
                                                  std::conditional_t<T == TensorType::Fp16Fp16, std::uint32_t, float>>>;
  static constexpr int a = tensor_a_words(T, Api) * 4 / static_cast<int>(sizeof(A));
  static constexpr int b = tensor_b_words(T, Api) * 4 / static_cast<int>(sizeof(A));
  static constexpr int c = tensor_c_words(T, Api) * 4 / static_cast<int>(sizeof(C));
};

// d = a * b + d, one warp-level mma.sync of the api's shape for T (tensor_mma_shape). volatile:
// the count of MMAs the probe declares must survive, whatever the compiler could prove about the
// operands.
template <TensorType T, TensorApi Api = TensorApi::Mma, class C, class A, int NC, int NA, int NB>
__device__ __forceinline__ void tensor_mma_sync(C (&d)[NC], const A (&a)[NA], const A (&b)[NB]) {
  if constexpr (Api == TensorApi::MmaM16n8k4) {
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(b[0]));
  } else if constexpr (Api == TensorApi::MmaM16n8k8) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
  } else if constexpr (Api == TensorApi::MmaM16n8k16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
        "{%12,%13,%14,%15}, {%0,%1,%2,%3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(b[0]), "d"(b[1]),
          "d"(b[2]), "d"(b[3]));
  } else if constexpr (T == TensorType::Fp16Fp32) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (T == TensorType::Fp16Fp16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
        "{%0,%1};"
        : "+r"(d[0]), "+r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (T == TensorType::Bf16Fp32) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (T == TensorType::Tf32Fp32) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (T == TensorType::Int8Int32) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else if constexpr (T == TensorType::Fp64Fp64) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a[0]), "d"(b[0]));
  } else if constexpr (T == TensorType::Fp8Fp32) {
    asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

// Buffers, in 32-bit words (fragments as tensor_mma_*_coord lay them out, see kernels/cuda/tensor/probe.cu):
//   a, b, b_neg [set][lane][word]; c [set][chain][lane][word]; out [warp][chain][lane][word];
//   hits [warp][lane].
template <TensorType T, TensorApi Api = TensorApi::Mma>
__global__ void __launch_bounds__(kTensorBlock, 1)
    tensor_mma_kernel(const std::uint32_t* __restrict__ a, const std::uint32_t* __restrict__ b,
                      const std::uint32_t* __restrict__ b_neg, const std::uint32_t* __restrict__ c,
                      std::uint32_t* __restrict__ out, int* __restrict__ hits_out, int reps) {
#if defined(__CUDA_ARCH__)
  const int lane = static_cast<int>(threadIdx.x % 32);
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if constexpr (tensor_mma_compiled(T, __CUDA_ARCH__ / 10, Api)) {
    using R = MmaRegs<T, Api>;
    using A = typename R::A;
    using C = typename R::C;
    constexpr int aw = tensor_a_words(T, Api), bw = tensor_b_words(T, Api), cw = tensor_c_words(T, Api);
    const int set = static_cast<int>(warp % kTensorDataSets);

    A fa[R::a], fb[R::b], fb_neg[R::b];
    C acc[kTensorChains][R::c];
    const A* a_lane = reinterpret_cast<const A*>(a + (set * 32 + lane) * aw);
    const A* b_lane = reinterpret_cast<const A*>(b + (set * 32 + lane) * bw);
    const A* bn_lane = reinterpret_cast<const A*>(b_neg + (set * 32 + lane) * bw);
#pragma unroll
    for (int r = 0; r < R::a; ++r) fa[r] = a_lane[r];
#pragma unroll
    for (int r = 0; r < R::b; ++r) {
      fb[r] = b_lane[r];
      fb_neg[r] = bn_lane[r];
    }
#pragma unroll
    for (int ch = 0; ch < kTensorChains; ++ch) {
      const C* c_lane = reinterpret_cast<const C*>(c + ((set * kTensorChains + ch) * 32 + lane) * cw);
#pragma unroll
      for (int r = 0; r < R::c; ++r) acc[ch][r] = c_lane[r];
    }
    const C first = acc[0][0];

    int hits = 0;
#pragma unroll 1
    for (int it = 0; it < reps; ++it) {
#pragma unroll
      for (int step = 0; step < kTensorSteps; ++step) {
#pragma unroll
        for (int ch = 0; ch < kTensorChains; ++ch) {
          if (step % 2 == 0) {
            tensor_mma_sync<T, Api>(acc[ch], fa, fb);
          } else {
            tensor_mma_sync<T, Api>(acc[ch], fa, fb_neg);
          }
        }
      }
      hits += acc[0][0] == first ? 1 : 0;
    }
#pragma unroll
    for (int ch = 0; ch < kTensorChains; ++ch) tensor_mma_sync<T, Api>(acc[ch], fa, fb);

#pragma unroll
    for (int ch = 0; ch < kTensorChains; ++ch) {
      C* o = reinterpret_cast<C*>(out + ((warp * kTensorChains + ch) * 32 + lane) * cw);
#pragma unroll
      for (int r = 0; r < R::c; ++r) o[r] = acc[ch][r];
    }
    hits_out[warp * 32 + lane] = hits;
  } else {
    (void)a, (void)b, (void)b_neg, (void)c, (void)out, (void)reps;
    hits_out[warp * 32 + lane] = kTensorNotCompiled;
  }
#endif
}

// ---- WMMA -----------------------------------------------------------------------------------
// Fragment element types per T. Only the specialisations the architecture has are declared (the
// bf16/tf32/fp64 and int8 fragment types do not even exist in <mma.h> below sm_80 / sm_72), so
// `available` is false elsewhere and the kernel writes kTensorNotCompiled.
template <TensorType T, class Enable = void>
struct WmmaTypes {
  static constexpr bool available = false;
};

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 700
template <>
struct WmmaTypes<TensorType::Fp16Fp32> {
  static constexpr bool available = true;
  using In = __half;   // fragment element type
  using Mem = __half;  // element type in memory
  using Acc = float;
};
template <>
struct WmmaTypes<TensorType::Fp16Fp16> {
  static constexpr bool available = true;
  using In = __half;
  using Mem = __half;
  using Acc = __half;
};
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 720
template <>
struct WmmaTypes<TensorType::Int8Int32> {
  static constexpr bool available = true;
  using In = signed char;
  using Mem = signed char;
  using Acc = int;
};
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
template <>
struct WmmaTypes<TensorType::Bf16Fp32> {
  static constexpr bool available = true;
  using In = __nv_bfloat16;
  using Mem = __nv_bfloat16;
  using Acc = float;
};
template <>
struct WmmaTypes<TensorType::Tf32Fp32> {
  static constexpr bool available = true;
  using In = nvcuda::wmma::precision::tf32;
  using Mem = float;
  using Acc = float;
};
template <>
struct WmmaTypes<TensorType::Fp64Fp64> {
  static constexpr bool available = true;
  using In = double;
  using Mem = double;
  using Acc = double;
};
#endif

// The bits of an accumulator element, for the exact "back at C" comparison.
__device__ __forceinline__ unsigned long long tensor_bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned long long tensor_bits(double v) {
  return static_cast<unsigned long long>(__double_as_longlong(v));
}
__device__ __forceinline__ unsigned long long tensor_bits(int v) { return static_cast<unsigned int>(v); }
__device__ __forceinline__ unsigned long long tensor_bits(__half v) { return __half_as_ushort(v); }

// Buffers, as element arrays of the types above: a [set][m][k] and b, b_neg [set][k][n], both
// row-major; c [set][chain][m][n] and out [warp][chain][m][n] row-major; hits [warp][lane].
template <TensorType T>
__global__ void __launch_bounds__(kTensorBlock, 1)
    tensor_wmma_kernel(const void* __restrict__ a, const void* __restrict__ b, const void* __restrict__ b_neg,
                       const void* __restrict__ c, void* __restrict__ out, int* __restrict__ hits_out, int reps) {
#if defined(__CUDA_ARCH__)
  const int lane = static_cast<int>(threadIdx.x % 32);
  const long long warp = (static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  if constexpr (WmmaTypes<T>::available) {
    namespace wmma = nvcuda::wmma;
    using W = WmmaTypes<T>;
    using Mem = typename W::Mem;
    using Acc = typename W::Acc;
    constexpr TensorShape s = tensor_wmma_shape(T);
    const int set = static_cast<int>(warp % kTensorDataSets);

    wmma::fragment<wmma::matrix_a, s.m, s.n, s.k, typename W::In, wmma::row_major> fa;
    wmma::fragment<wmma::matrix_b, s.m, s.n, s.k, typename W::In, wmma::row_major> fb, fb_neg;
    wmma::fragment<wmma::accumulator, s.m, s.n, s.k, Acc> acc[kTensorChains];
    wmma::load_matrix_sync(fa, static_cast<const Mem*>(a) + set * s.m * s.k, s.k);
    wmma::load_matrix_sync(fb, static_cast<const Mem*>(b) + set * s.k * s.n, s.n);
    wmma::load_matrix_sync(fb_neg, static_cast<const Mem*>(b_neg) + set * s.k * s.n, s.n);
#pragma unroll
    for (int ch = 0; ch < kTensorChains; ++ch) {
      wmma::load_matrix_sync(acc[ch], static_cast<const Acc*>(c) + (set * kTensorChains + ch) * s.m * s.n, s.n,
                             wmma::mem_row_major);
    }
    const unsigned long long first = tensor_bits(acc[0].x[0]);

    int hits = 0;
#pragma unroll 1
    for (int it = 0; it < reps; ++it) {
#pragma unroll
      for (int step = 0; step < kTensorSteps; ++step) {
#pragma unroll
        for (int ch = 0; ch < kTensorChains; ++ch) {
          if (step % 2 == 0) {
            wmma::mma_sync(acc[ch], fa, fb, acc[ch]);
          } else {
            wmma::mma_sync(acc[ch], fa, fb_neg, acc[ch]);
          }
        }
      }
      hits += tensor_bits(acc[0].x[0]) == first ? 1 : 0;
    }
#pragma unroll
    for (int ch = 0; ch < kTensorChains; ++ch) wmma::mma_sync(acc[ch], fa, fb, acc[ch]);

#pragma unroll
    for (int ch = 0; ch < kTensorChains; ++ch) {
      wmma::store_matrix_sync(static_cast<Acc*>(out) + (warp * kTensorChains + ch) * s.m * s.n, acc[ch], s.n,
                              wmma::mem_row_major);
    }
    hits_out[warp * 32 + lane] = hits;
  } else {
    (void)a, (void)b, (void)b_neg, (void)c, (void)out, (void)reps;
    hits_out[warp * 32 + lane] = kTensorNotCompiled;
  }
#endif
}

}  // namespace roofprobe::cuda
