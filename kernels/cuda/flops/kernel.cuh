// Device side of the CUDA FLOP probe: the kernel template, one instantiation per (type, K, form),
// shared by kernels/cuda/flops/probe.cu and the PTX checks in tests/ptx (which instantiate exactly one
// of them and count its instructions).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "kernels/common/flop_chain.hpp"
#include "kernels/cuda/flops/model.hpp"

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
  __device__ static __forceinline__ double fma(double x, double a, double b) { return __fma_rn(x, a, b); }
  __device__ static __forceinline__ double mul(double x, double a) { return __dmul_rn(x, a); }
  __device__ static __forceinline__ double add(double x, double b) { return __dadd_rn(x, b); }
};

template <>
struct ScalarOps<float> {
  __device__ static __forceinline__ float fma(float x, float a, float b) { return __fmaf_rn(x, a, b); }
  __device__ static __forceinline__ float mul(float x, float a) { return __fmul_rn(x, a); }
  __device__ static __forceinline__ float add(float x, float b) { return __fadd_rn(x, b); }
};

// fp16 / bf16 elements: one 32-bit word holding two 16-bit values (f16x2 / bf16x2), the unit the
// packed instructions work on (flop_chain.hpp: FLOPs are counted per 16-bit value). Plain words
// rather than __half2 / __nv_bfloat162 keep the kernel free of the headers' per-arch guards and
// emulation paths, and make the loads and stores ordinary 32-bit ones.
struct F16x2 {
  std::uint32_t bits;
};
struct Bf16x2 {
  std::uint32_t bits;
};

// bf16 arithmetic (fma.rn.bf16x2) exists from sm_80 on: compiled for an older architecture, the
// bf16 kernels hold a trap instead of the chain. The probe never launches them there: it declares
// such devices unsupported (compute capability < 8.0) and, before a launch, asks the loaded code
// itself (flops_bf16_compiled_kernel) in case the binary lacks an sm_80+ image for the device.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
#define RP_FLOPS_BF16_ARITH 0
#else
#define RP_FLOPS_BF16_ARITH 1
#endif

template <>
struct ScalarOps<F16x2> {
  // Inline PTX with .rn on every operation: never contracted (mul.rn + add.rn stay two
  // instructions), and the same on CUDA 11.8 (which lacks __hmul2_rn/__hadd2_rn) as on CUDA 13.
  __device__ static __forceinline__ F16x2 fma(F16x2 x, F16x2 a, F16x2 b) {
    F16x2 r;
    asm("fma.rn.f16x2 %0, %1, %2, %3;" : "=r"(r.bits) : "r"(x.bits), "r"(a.bits), "r"(b.bits));
    return r;
  }
  __device__ static __forceinline__ F16x2 mul(F16x2 x, F16x2 a) {
    F16x2 r;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r.bits) : "r"(x.bits), "r"(a.bits));
    return r;
  }
  __device__ static __forceinline__ F16x2 add(F16x2 x, F16x2 b) {
    F16x2 r;
    asm("add.rn.f16x2 %0, %1, %2;" : "=r"(r.bits) : "r"(x.bits), "r"(b.bits));
    return r;
  }
};

template <>
struct ScalarOps<Bf16x2> {
  __device__ static __forceinline__ Bf16x2 fma(Bf16x2 x, Bf16x2 a, Bf16x2 b) {
    Bf16x2 r = x;
#if RP_FLOPS_BF16_ARITH
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r.bits) : "r"(x.bits), "r"(a.bits), "r"(b.bits));
#endif
    return r;
  }
  // sm_90 has bf16x2 mul/add (PTX 7.8). sm_80..89 have only the FMA; there a multiply is
  // x * a + (-0) and an add x * 1 + b, each one correctly rounded operation like mul.rn/add.rn
  // (what cuda_bf16.h does too). Either way one instruction per multiply and per add.
  __device__ static __forceinline__ Bf16x2 mul(Bf16x2 x, Bf16x2 a) {
    Bf16x2 r = x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(r.bits) : "r"(x.bits), "r"(a.bits));
#elif RP_FLOPS_BF16_ARITH
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r.bits) : "r"(x.bits), "r"(a.bits), "r"(0x80008000u));
#endif
    return r;
  }
  __device__ static __forceinline__ Bf16x2 add(Bf16x2 x, Bf16x2 b) {
    Bf16x2 r = x;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm("add.rn.bf16x2 %0, %1, %2;" : "=r"(r.bits) : "r"(x.bits), "r"(b.bits));
#elif RP_FLOPS_BF16_ARITH
    asm("fma.rn.bf16x2 %0, %1, %2, %3;" : "=r"(r.bits) : "r"(x.bits), "r"(0x3F803F80u), "r"(b.bits));
#endif
    return r;
  }
};

// int32: unsigned words, so that wrap-around is defined (the low 32 bits are those of signed
// arithmetic). The multiply-add is one mad.lo (IMAD); the noFMA multiply and add are inline PTX
// because NVVM would otherwise fuse x * a + b into mad.lo itself.
//
// ptxas fuses too: a mul.lo.u32 whose only use is an add.u32 becomes one IMAD x, a, b (integers
// do not round, so the fusion is exact), and the "noFMA" chain then ran 256 IMADs instead of 256
// multiplies + 256 adds (seen in SASS, sm_75..sm_120, CUDA 13.0; tests/probes/flops/ptx.cmake).
// add() is therefore predicated on a guard that is true at run time but unknown to ptxas
// (b != kInt32AddGuardNever, set once per thread, outside the loop): a predicated add keeps the
// product's old value when the guard is false, which one IMAD cannot express, so the add stays an
// IADD3 (@P0 IADD3). Predication costs no issue slot, so the chain still issues exactly one IMAD
// (the multiply, addend RZ) and one IADD3 per step.
inline constexpr std::uint32_t kInt32AddGuardNever = 0xFFFFFFFFu;
static_assert(kChainInt32B != kInt32AddGuardNever, "the int32 noFMA adds would be skipped");

template <>
struct ScalarOps<std::uint32_t> {
  // Inline PTX too: NVVM for compute_100 and compute_120 (CUDA 13.0) took over 200 s on one
  // kernel whose chain of 128 plain `x * a + b` it could see through (1.7 s for compute_90), and
  // never finished kernels/cuda/flops/probe.cu in the bundle's build; as one opaque mad.lo each it takes seconds.
  __device__ static __forceinline__ std::uint32_t fma(std::uint32_t x, std::uint32_t a, std::uint32_t b) {
    std::uint32_t r;
    asm("mad.lo.u32 %0, %1, %2, %3;" : "=r"(r) : "r"(x), "r"(a), "r"(b));
    return r;
  }
  __device__ static __forceinline__ std::uint32_t mul(std::uint32_t x, std::uint32_t a) {
    std::uint32_t r;
    asm("mul.lo.u32 %0, %1, %2;" : "=r"(r) : "r"(x), "r"(a));
    return r;
  }
  __device__ static __forceinline__ std::uint32_t add(std::uint32_t x, std::uint32_t b) {
    std::uint32_t r = x;
    asm("{\n\t.reg .pred g;\n\tsetp.ne.u32 g, %1, %2;\n\t@g add.u32 %0, %0, %1;\n\t}"
        : "+r"(r)
        : "r"(b), "r"(kInt32AddGuardNever));
    return r;
  }
};

// What differs per element type outside the arithmetic: the starting values, and whether this
// compilation holds the arithmetic at all.
template <class T>
struct FlopsElement {
  static constexpr bool kArithCompiled = true;
  __device__ static __forceinline__ T initial(std::size_t i) { return flops_initial_value<T>(i); }
};
template <>
struct FlopsElement<F16x2> {
  static constexpr bool kArithCompiled = true;
  __device__ static __forceinline__ F16x2 initial(std::size_t i) { return {half16_initial_word(i, Half16::Fp16)}; }
};
template <>
struct FlopsElement<Bf16x2> {
  static constexpr bool kArithCompiled = RP_FLOPS_BF16_ARITH != 0;
  __device__ static __forceinline__ Bf16x2 initial(std::size_t i) { return {half16_initial_word(i, Half16::Bf16)}; }
};
template <>
struct FlopsElement<std::uint32_t> {
  static constexpr bool kArithCompiled = true;
  __device__ static __forceinline__ std::uint32_t initial(std::size_t i) { return int32_initial_value(i); }
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

// Low 32 bits of an element, and the element with `mask` XORed into them: used to make every
// chain of a tile depend on all the tile's loads (join_loads).
__device__ __forceinline__ std::uint32_t low_bits(double x) { return static_cast<std::uint32_t>(__double2loint(x)); }
__device__ __forceinline__ double xor_low_bits(double x, std::uint32_t mask) {
  return __hiloint2double(__double2hiint(x), static_cast<int>(static_cast<std::uint32_t>(__double2loint(x)) ^ mask));
}
__device__ __forceinline__ std::uint32_t low_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ float xor_low_bits(float x, std::uint32_t mask) {
  return __uint_as_float(__float_as_uint(x) ^ mask);
}
__device__ __forceinline__ std::uint32_t low_bits(F16x2 x) { return x.bits; }
__device__ __forceinline__ F16x2 xor_low_bits(F16x2 x, std::uint32_t mask) { return {x.bits ^ mask}; }
__device__ __forceinline__ std::uint32_t low_bits(Bf16x2 x) { return x.bits; }
__device__ __forceinline__ Bf16x2 xor_low_bits(Bf16x2 x, std::uint32_t mask) { return {x.bits ^ mask}; }
__device__ __forceinline__ std::uint32_t low_bits(std::uint32_t x) { return x; }
__device__ __forceinline__ std::uint32_t xor_low_bits(std::uint32_t x, std::uint32_t mask) { return x ^ mask; }

// The tile's values, unchanged (`zero` is 0 at run time), but each now depends on all of them:
// no chain starts before every load of the tile has arrived. Without it ptxas starts the
// chains as their loads arrive and puts runs of HFMA2.MMA back to back; on an H100 such f16x2
// chains ran at 68% of peak where the register-resident chains of fma_mix, alternating HFMA2
// and HFMA2.MMA, ran at 98%.
template <class T>
__device__ __forceinline__ Slots<T> join_loads(Slots<T> v, std::uint32_t zero) {
  std::uint32_t all = 0;
#pragma unroll
  for (int j = 0; j < kFlopsIlp; ++j) all ^= low_bits(v.v[j]);
  all &= zero;
#pragma unroll
  for (int j = 0; j < kFlopsIlp; ++j) v.v[j] = xor_low_bits(v.v[j], all);
  return v;
}

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
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n; i += stride) {
    data[i] = FlopsElement<T>::initial(i);
  }
}

// One launch: `reps` passes over the array (ERT's read-modify-write: load, K FLOPs, store). The
// loops over passes and tiles are kept rolled (unroll 1) so the kernel body holds exactly one
// tile's work: kFlopsIlp loads, kFlopsIlp chains of K FLOPs, kFlopsIlp stores. The PTX checks
// count on that. a and b are arguments, so nothing can be folded at compile time.
template <class T, int K, FlopForm Form>
__global__ void __launch_bounds__(kFlopsBlock)
    flops_kernel(T* __restrict__ data, std::size_t tiles, int reps, T a, T b) {
  if constexpr (!FlopsElement<T>::kArithCompiled) {
    __trap();  // never launched: see RP_FLOPS_BF16_ARITH
  } else {
    const Slots<T> av = broadcast(a);
    const Slots<T> bv = broadcast(b);
    const int x = static_cast<int>(threadIdx.x);
#pragma unroll 1
    for (int r = 0; r < reps; ++r) {
#pragma unroll 1
      for (std::size_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
        Slots<T> v;
#pragma unroll
        for (int j = 0; j < kFlopsIlp; ++j) v.v[j] = data[tile_element(tile, j, x, kFlopsBlock, kFlopsIlp)];
        // reps >> 31 is 0 (reps > 0), which the compiler cannot know.
        v = join_loads(v, static_cast<std::uint32_t>(reps >> 31));
        v = flop_chain<K, Form, SlotOps<T>>(v, av, bv);
#pragma unroll
        for (int j = 0; j < kFlopsIlp; ++j) data[tile_element(tile, j, x, kFlopsBlock, kFlopsIlp)] = v.v[j];
      }
    }
  }
}

}  // namespace roofprobe::cuda
