// Device side of the CUDA "fma_mix" probe: one kernel template per (precision, FMA quarters),
// shared by kernels/cuda/fma_mix/probe.cu and the PTX checks in tests/ptx (which instantiate exactly
// one of them and count its instructions). The mix is declared in kernels/cuda/fma_mix/model.hpp.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/cuda/fma_mix/model.hpp"

namespace roofprobe::cuda {

inline constexpr int kMixBlock = 256;  // threads per block

// Round-to-nearest operations that the compiler can neither contract nor split: the explicit _rn
// intrinsics for double/float, and the .rn PTX instructions for the packed 16-bit types (a plain
// mul.f16x2 followed by add.f16x2 may be fused into an FMA by ptxas; .rn forbids it). The packed
// types travel as 32-bit words (two 16-bit values), as the PTX instructions take them.
struct MixFp64 {
  using Word = double;
  __device__ static __forceinline__ Word fma(Word x, Word m, Word c) { return __fma_rn(x, m, c); }
  __device__ static __forceinline__ Word mul(Word x, Word m) { return __dmul_rn(x, m); }
  __device__ static __forceinline__ Word add(Word x, Word c) { return __dadd_rn(x, c); }
};

struct MixFp32 {
  using Word = float;
  __device__ static __forceinline__ Word fma(Word x, Word m, Word c) { return __fmaf_rn(x, m, c); }
  __device__ static __forceinline__ Word mul(Word x, Word m) { return __fmul_rn(x, m); }
  __device__ static __forceinline__ Word add(Word x, Word c) { return __fadd_rn(x, c); }
};

// half2: HFMA2 / HMUL2 / HADD2 (what __hfma2, __hmul2_rn and __hadd2_rn emit), sm_53+.
struct MixFp16x2 {
  using Word = std::uint32_t;
  __device__ static __forceinline__ Word fma(Word x, Word m, Word c) {
    Word r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(m), "r"(c));
    return r;
  }
  __device__ static __forceinline__ Word mul(Word x, Word m) {
    Word r;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(m));
    return r;
  }
  __device__ static __forceinline__ Word add(Word x, Word c) {
    Word r;
    asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(c));
    return r;
  }
};

// bfloat162: fma.rn.bf16x2 is native from sm_80; mul/add.rn.bf16x2 only from sm_90. On sm_80..89
// a multiply is fma(x, m, -0) and an add fma(x, 1, c), as cuda_bf16.h does it: the same rounding
// (one), the same instruction rate, so the FLOP accounting (mul = add = 1 FLOP) is unchanged.
// Below sm_80 there is no BF16 arithmetic: the probe reports the point unsupported and never
// launches this kernel there (it traps if it ever did).
struct MixBf16x2 {
  using Word = std::uint32_t;
  __device__ static __forceinline__ Word fma(Word x, Word m, Word c) {
    Word r = x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(m), "r"(c));
#elif defined(__CUDA_ARCH__)
    (void)m;
    (void)c;
    __trap();
#endif
    return r;
  }
  __device__ static __forceinline__ Word mul(Word x, Word m) {
    Word r = x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(m));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(m), "r"(0x80008000u));
#elif defined(__CUDA_ARCH__)
    (void)m;
    __trap();
#endif
    return r;
  }
  __device__ static __forceinline__ Word add(Word x, Word c) {
    Word r = x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("add.rn.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(c));
#elif defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(0x3F803F80u), "r"(c));
#elif defined(__CUDA_ARCH__)
    (void)c;
    __trap();
#endif
    return r;
  }
};

template <class Ops, int kQuarters>
__device__ __forceinline__ void mix_block(typename Ops::Word (&x)[kMixChains], typename Ops::Word m,
                                          typename Ops::Word c) {
#pragma unroll
  for (int pos = 0; pos < kMixOpsPerBlock; ++pos) {
    const MixOp op = mix_op(kQuarters, pos);  // folded: pos is a constant once unrolled
#pragma unroll
    for (int j = 0; j < kMixChains; ++j) {
      if (op == MixOp::Fma) {
        x[j] = Ops::fma(x[j], m, c);
      } else if (op == MixOp::Mul) {
        x[j] = Ops::mul(x[j], m);
      } else {
        x[j] = Ops::add(x[j], c);
      }
    }
  }
}

// One launch: each thread loads its kMixChains values (data[j * threads + t], coalesced), runs
// `reps` loop trips of kMixBlocksPerIteration blocks on them in registers, and stores them back.
// The repetition loop stays rolled (unroll 1), so the entry holds exactly
// kMixBlocksPerIteration x kMixChains x 8 operations; the PTX checks count on that. m and c are
// kernel arguments: nothing folds.
template <class Ops, int kQuarters>
__global__ void __launch_bounds__(kMixBlock)
    fma_mix_kernel(typename Ops::Word* __restrict__ data, int reps, typename Ops::Word m, typename Ops::Word c) {
  using Word = typename Ops::Word;
  const std::size_t threads = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t t = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  Word x[kMixChains];
#pragma unroll
  for (int j = 0; j < kMixChains; ++j) x[j] = data[j * threads + t];
#pragma unroll 1
  for (int r = 0; r < reps; ++r) {
#pragma unroll
    for (int b = 0; b < kMixBlocksPerIteration; ++b) mix_block<Ops, kQuarters>(x, m, c);
  }
#pragma unroll
  for (int j = 0; j < kMixChains; ++j) data[j * threads + t] = x[j];
}

}  // namespace roofprobe::cuda
