// Device side of the tensor probe's Hopper path (api=wgmma): one warpgroup per block issues
// warpgroup-level wgmma.mma_async.m64n128 (k16 f16/bf16, k8 tf32, k32 e4m3 and int8; sm_90a) on A and B tiles
// staged once in shared memory, into a 64 x 128 f32 (int8: s32; fp16.fp16: f16, two per register) accumulator
// held in registers. api=wgmma.rs (tensor_wgmma_rs_kernel) is the same loop with A in registers. The shapes, the tile
// layout, the descriptors and the accumulator layout are kernels/cuda/tensor/wgmma_layout.hpp's; the loop is the
// mma.sync kernel's (kernels/cuda/tensor/kernel.cuh): per iteration kWgmmaSteps instructions alternating +B and -B
// (imm-scale-b = -1; int8 has no scale immediates and reads -B from a tile of its own), one commit group, then wait
// for it, so the accumulator is back at C after every iteration (`hits`), and one more +B after the loop leaves
// C + A*B for the host.
//
// Compiled only for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL: the arch-specific features wgmma needs run
// on compute capability 9.0 alone); elsewhere the kernel writes kTensorNotCompiled into `hits`.
// Verified element by element and measured on an H100 SXM5 and an H200: 83-100% of
// the dense peak at the clock NVML read, at or above cuBLAS's GEMM (results/measured/h200-sxm).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/tensor/model.hpp"
#include "kernels/cuda/tensor/wgmma_layout.hpp"
#include "kernels/cuda/tensor/kernel.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define RP_TENSOR_HAS_WGMMA 1
#else
#define RP_TENSOR_HAS_WGMMA 0
#endif

namespace roofprobe::cuda {

// The input.accumulate types with a wgmma path here: f16, bf16, tf32 and e4m3 inputs with f32
// accumulate, int8 with s32 (tensor_wgmma_shape).
__host__ __device__ constexpr bool tensor_wgmma_type(TensorType t) { return tensor_wgmma_shape(t).m > 0; }

// The types api=wgmma.rs runs (A from registers): f16 and bf16 with f32 accumulate.
__host__ __device__ constexpr bool tensor_wgmma_rs_type(TensorType t) { return tensor_wgmma_rs_shape(t).m > 0; }

// int8 negates B through a second tile: integer wgmma has no imm-scale-b.
__host__ __device__ constexpr bool tensor_wgmma_negated_tile(TensorType t) { return t == TensorType::Int8Int32; }

// The accumulator registers: s32 for int8, two f16 per 32-bit register for f16 accumulate (half
// as many registers), f32 otherwise.
template <TensorType T>
using WgmmaAcc =
    std::conditional_t<T == TensorType::Int8Int32, int, std::conditional_t<T == TensorType::Fp16Fp16, unsigned, float>>;
__host__ __device__ constexpr int tensor_wgmma_acc_regs(TensorType t) {
  return t == TensorType::Fp16Fp16 ? kWgmmaAccRegsF16 : kWgmmaAccRegs;
}

#if RP_TENSOR_HAS_WGMMA
// One m64n128 wgmma: the asm text differs only in its shape and types (RP_WGMMA_KIND, e.g.
// "m64n128k16.f32.f16.f16"), its immediates (RP_WGMMA_IMM: f16/bf16 take imm-scale-a/b and
// imm-trans-a/b, tf32 and e4m3 the scales only, int8 none), its accumulator registers
// (RP_WGMMA_ACC: "+f" for f32, "+r" for s32) and where A comes from (RP_WGMMA_A, RP_WGMMA_IN and
// the predicate's operand RP_WGMMA_PRED: a descriptor, or four registers for api=wgmma.rs), so it
// is written once.
#define RP_WGMMA_M64N128()                                                                                           \
  asm volatile(                                                                                                      \
      "{\n.reg .pred p;\nsetp.ne.b32 p, " RP_WGMMA_PRED                                                              \
      ", 0;\n"                                                                                                       \
      "wgmma.mma_async.sync.aligned." RP_WGMMA_KIND                                                                  \
      " "                                                                                                            \
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%" \
      "29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%" \
      "56,%57,%58,%59,%60,%61,%62,%63}, " RP_WGMMA_A ", p" RP_WGMMA_IMM ";\n}\n"                                     \
      : RP_WGMMA_ACC(d[0]), RP_WGMMA_ACC(d[1]), RP_WGMMA_ACC(d[2]), RP_WGMMA_ACC(d[3]), RP_WGMMA_ACC(d[4]),          \
        RP_WGMMA_ACC(d[5]), RP_WGMMA_ACC(d[6]), RP_WGMMA_ACC(d[7]), RP_WGMMA_ACC(d[8]), RP_WGMMA_ACC(d[9]),          \
        RP_WGMMA_ACC(d[10]), RP_WGMMA_ACC(d[11]), RP_WGMMA_ACC(d[12]), RP_WGMMA_ACC(d[13]), RP_WGMMA_ACC(d[14]),     \
        RP_WGMMA_ACC(d[15]), RP_WGMMA_ACC(d[16]), RP_WGMMA_ACC(d[17]), RP_WGMMA_ACC(d[18]), RP_WGMMA_ACC(d[19]),     \
        RP_WGMMA_ACC(d[20]), RP_WGMMA_ACC(d[21]), RP_WGMMA_ACC(d[22]), RP_WGMMA_ACC(d[23]), RP_WGMMA_ACC(d[24]),     \
        RP_WGMMA_ACC(d[25]), RP_WGMMA_ACC(d[26]), RP_WGMMA_ACC(d[27]), RP_WGMMA_ACC(d[28]), RP_WGMMA_ACC(d[29]),     \
        RP_WGMMA_ACC(d[30]), RP_WGMMA_ACC(d[31]), RP_WGMMA_ACC(d[32]), RP_WGMMA_ACC(d[33]), RP_WGMMA_ACC(d[34]),     \
        RP_WGMMA_ACC(d[35]), RP_WGMMA_ACC(d[36]), RP_WGMMA_ACC(d[37]), RP_WGMMA_ACC(d[38]), RP_WGMMA_ACC(d[39]),     \
        RP_WGMMA_ACC(d[40]), RP_WGMMA_ACC(d[41]), RP_WGMMA_ACC(d[42]), RP_WGMMA_ACC(d[43]), RP_WGMMA_ACC(d[44]),     \
        RP_WGMMA_ACC(d[45]), RP_WGMMA_ACC(d[46]), RP_WGMMA_ACC(d[47]), RP_WGMMA_ACC(d[48]), RP_WGMMA_ACC(d[49]),     \
        RP_WGMMA_ACC(d[50]), RP_WGMMA_ACC(d[51]), RP_WGMMA_ACC(d[52]), RP_WGMMA_ACC(d[53]), RP_WGMMA_ACC(d[54]),     \
        RP_WGMMA_ACC(d[55]), RP_WGMMA_ACC(d[56]), RP_WGMMA_ACC(d[57]), RP_WGMMA_ACC(d[58]), RP_WGMMA_ACC(d[59]),     \
        RP_WGMMA_ACC(d[60]), RP_WGMMA_ACC(d[61]), RP_WGMMA_ACC(d[62]), RP_WGMMA_ACC(d[63])                           \
      : RP_WGMMA_IN);

// The same with f16 accumulate: 32 registers of two f16 each ("+r").
#define RP_WGMMA_M64N128_F16ACC()                                                                                   \
  asm volatile(                                                                                                     \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"                                                                  \
      "wgmma.mma_async.sync.aligned.m64n128k16.f16.f16.f16 "                                                        \
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,"                 \
      "%25,%26,%27,%28,%29,%30,%31}, "                                                                              \
      "%32, %33, p, 1, %35, 0, 0;\n}\n"                                                                             \
      : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), "+r"(d[8]), \
        "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), "+r"(d[16]),      \
        "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), "+r"(d[24]),     \
        "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])                   \
      : "l"(desc_a), "l"(desc_b), "r"(1), "n"(ScaleB));

// d = a * (ScaleB * b) + d over the warpgroup, one wgmma.mma_async (not yet complete on return:
// the caller commits and waits). volatile: the count of instructions the probe declares stays.
// int8 takes ScaleB = 1 only (its -B is a tile of its own).
template <TensorType T, int ScaleB>
__device__ __forceinline__ void tensor_wgmma(WgmmaAcc<T> (&d)[tensor_wgmma_acc_regs(T)], std::uint64_t desc_a,
                                             std::uint64_t desc_b) {
  static_assert(kWgmmaAccRegs == 64 && kWgmmaN == 128, "the operand list of RP_WGMMA_M64N128 is m64n128");
#define RP_WGMMA_A "%64, %65"
#define RP_WGMMA_PRED "%66"
#define RP_WGMMA_IN "l"(desc_a), "l"(desc_b), "r"(1), "n"(ScaleB)
#define RP_WGMMA_ACC(x) "+f"(x)  // f32 accumulators; int8 redefines it for s32
  if constexpr (T == TensorType::Fp16Fp16) {
    RP_WGMMA_M64N128_F16ACC();
  } else if constexpr (T == TensorType::Fp16Fp32) {
#define RP_WGMMA_KIND "m64n128k16.f32.f16.f16"
#define RP_WGMMA_IMM ", 1, %67, 0, 0"
    RP_WGMMA_M64N128();
#undef RP_WGMMA_KIND
#undef RP_WGMMA_IMM
  } else if constexpr (T == TensorType::Bf16Fp32) {
#define RP_WGMMA_KIND "m64n128k16.f32.bf16.bf16"
#define RP_WGMMA_IMM ", 1, %67, 0, 0"
    RP_WGMMA_M64N128();
#undef RP_WGMMA_KIND
#undef RP_WGMMA_IMM
  } else if constexpr (T == TensorType::Tf32Fp32) {
#define RP_WGMMA_KIND "m64n128k8.f32.tf32.tf32"
#define RP_WGMMA_IMM ", 1, %67"
    RP_WGMMA_M64N128();
#undef RP_WGMMA_KIND
#undef RP_WGMMA_IMM
  } else if constexpr (T == TensorType::Fp8Fp32) {
#define RP_WGMMA_KIND "m64n128k32.f32.e4m3.e4m3"
#define RP_WGMMA_IMM ", 1, %67"
    RP_WGMMA_M64N128();
#undef RP_WGMMA_KIND
#undef RP_WGMMA_IMM
  } else {
    static_assert(T == TensorType::Int8Int32 && ScaleB == 1, "int8 has no imm-scale-b: -B is a tile of its own");
#undef RP_WGMMA_ACC
#define RP_WGMMA_ACC(x) "+r"(x)
#define RP_WGMMA_KIND "m64n128k32.s32.s8.s8"
#define RP_WGMMA_IMM ""
    RP_WGMMA_M64N128();
#undef RP_WGMMA_KIND
#undef RP_WGMMA_IMM
#undef RP_WGMMA_ACC
  }
#undef RP_WGMMA_A
#undef RP_WGMMA_PRED
#undef RP_WGMMA_IN
}

// d = a * (ScaleB * b) + d with A from registers (wgmma's RS form, f16/bf16 with f32
// accumulate): four registers of two 16-bit elements per thread (wgmma_a_reg_coord), B from
// shared memory. imm-trans-a does not exist in this form.
template <TensorType T, int ScaleB>
__device__ __forceinline__ void tensor_wgmma_rs(float (&d)[kWgmmaAccRegs], const std::uint32_t (&a)[kWgmmaARegs],
                                                std::uint64_t desc_b) {
  static_assert(T == TensorType::Fp16Fp32 || T == TensorType::Bf16Fp32, "wgmma.rs: f16/bf16 with f32 accumulate");
#define RP_WGMMA_ACC(x) "+f"(x)
#define RP_WGMMA_A "{%64, %65, %66, %67}, %68"
#define RP_WGMMA_PRED "%69"
#define RP_WGMMA_IN "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1), "n"(ScaleB)
#define RP_WGMMA_IMM ", 1, %70, 0"
  if constexpr (T == TensorType::Fp16Fp32) {
#define RP_WGMMA_KIND "m64n128k16.f32.f16.f16"
    RP_WGMMA_M64N128();
#undef RP_WGMMA_KIND
  } else {
#define RP_WGMMA_KIND "m64n128k16.f32.bf16.bf16"
    RP_WGMMA_M64N128();
#undef RP_WGMMA_KIND
  }
#undef RP_WGMMA_ACC
#undef RP_WGMMA_A
#undef RP_WGMMA_PRED
#undef RP_WGMMA_IN
#undef RP_WGMMA_IMM
}
#undef RP_WGMMA_M64N128
#undef RP_WGMMA_M64N128_F16ACC

// The accumulator registers are written by the tensor cores until wgmma.wait_group: this tells the
// compiler they change here, so no read of them moves above the wait (or write below the fence).
template <class Acc, int N>
__device__ __forceinline__ void tensor_wgmma_fence_operands(Acc (&d)[N]) {
#pragma unroll
  for (int r = 0; r < N; ++r) {
    if constexpr (!std::is_same_v<Acc, float>)
      asm volatile("" : "+r"(d[r])::"memory");
    else
      asm volatile("" : "+f"(d[r])::"memory");
  }
}

// The probe's loop, the same for every wgmma form: per iteration kWgmmaSteps wgmma alternating
// plus() (+B) and minus() (-B) as one commit group, then wait for it, so the accumulator is back
// at C after every iteration (counted in the returned hits); one more plus() after the loop
// leaves C + A*B.
template <class Acc, int N, class Plus, class Minus>
__device__ __forceinline__ int tensor_wgmma_rounds(Acc (&acc)[N], int reps, Plus plus, Minus minus) {
  const Acc first = acc[0];
  int hits = 0;
#pragma unroll 1
  for (int it = 0; it < reps; ++it) {
    tensor_wgmma_fence_operands(acc);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int step = 0; step < kWgmmaSteps; step += 2) {
      plus();
      minus();
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    tensor_wgmma_fence_operands(acc);
    hits += acc[0] == first ? 1 : 0;
  }
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  plus();
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  tensor_wgmma_fence_operands(acc);
  return hits;
}

// C into the accumulator registers where the layout puts each element, and the result out of
// them (f16 accumulate: two per register, low half first; the probe's values are exact in f16,
// and int8's small integers in f32).
template <TensorType T>
__device__ __forceinline__ void tensor_wgmma_load_acc(WgmmaAcc<T> (&acc)[tensor_wgmma_acc_regs(T)], const float* c,
                                                      int t) {
#pragma unroll
  for (int r = 0; r < tensor_wgmma_acc_regs(T); ++r) {
    if constexpr (T == TensorType::Fp16Fp16) {
      const WgmmaCoord lo = wgmma_acc_f16_coord(t, r, 0), hi = wgmma_acc_f16_coord(t, r, 1);
      acc[r] = static_cast<unsigned>(__half_as_ushort(__float2half_rn(c[lo.row * kWgmmaN + lo.col]))) |
               static_cast<unsigned>(__half_as_ushort(__float2half_rn(c[hi.row * kWgmmaN + hi.col]))) << 16;
    } else {
      const WgmmaCoord x = wgmma_acc_coord(t, r);
      acc[r] = static_cast<WgmmaAcc<T>>(c[x.row * kWgmmaN + x.col]);
    }
  }
}

template <TensorType T>
__device__ __forceinline__ void tensor_wgmma_store_acc(const WgmmaAcc<T> (&acc)[tensor_wgmma_acc_regs(T)], float* o,
                                                       int t) {
#pragma unroll
  for (int r = 0; r < tensor_wgmma_acc_regs(T); ++r) {
    if constexpr (T == TensorType::Fp16Fp16) {
      const WgmmaCoord lo = wgmma_acc_f16_coord(t, r, 0), hi = wgmma_acc_f16_coord(t, r, 1);
      o[lo.row * kWgmmaN + lo.col] = __half2float(__ushort_as_half(static_cast<unsigned short>(acc[r] & 0xFFFFu)));
      o[hi.row * kWgmmaN + hi.col] = __half2float(__ushort_as_half(static_cast<unsigned short>(acc[r] >> 16)));
    } else {
      const WgmmaCoord x = wgmma_acc_coord(t, r);
      o[x.row * kWgmmaN + x.col] = static_cast<float>(acc[r]);
    }
  }
}
#endif

// Buffers: a [set][m][32 bytes of k] and b [set][n][32 bytes of k] as 16-bit units (B stored
// K-major: its column n as a row; elements packed little-endian into the units), c [set][m][n]
// and out [block][m][n] as f32 row-major (int8: small integers, exact in f32); hits [block][thread].
// int8 stages -B beside B (wgmma_negate_s8_pair).
template <TensorType T>
__global__ void __launch_bounds__(kWgmmaThreads, 1)
    tensor_wgmma_kernel(const std::uint16_t* __restrict__ a, const std::uint16_t* __restrict__ b,
                        const float* __restrict__ c, float* __restrict__ out, int* __restrict__ hits_out, int reps) {
#if defined(__CUDA_ARCH__)
  const int t = static_cast<int>(threadIdx.x);
  const long long block = blockIdx.x;
#if RP_TENSOR_HAS_WGMMA
  if constexpr (tensor_wgmma_type(T)) {
    constexpr bool negated_tile = tensor_wgmma_negated_tile(T);
    __shared__ alignas(128) unsigned char tiles[kWgmmaATileBytes + (negated_tile ? 2 : 1) * kWgmmaBTileBytes];
    const int set = static_cast<int>(block % kTensorDataSets);
    constexpr int u = kWgmmaRowUnits;  // 16-bit units per row (kWgmmaK f16, or the same 32 bytes of K)
    const std::uint16_t* a_set = a + set * kWgmmaM * u;
    const std::uint16_t* b_set = b + set * kWgmmaN * u;
    const auto same = [](std::uint16_t x) { return x; };
    tensor_stage_tile<kWgmmaThreads>(tiles, a_set, kWgmmaM, t, same);
    tensor_stage_tile<kWgmmaThreads>(tiles + kWgmmaATileBytes, b_set, kWgmmaN, t, same);
    if constexpr (negated_tile)
      tensor_stage_tile<kWgmmaThreads>(tiles + kWgmmaATileBytes + kWgmmaBTileBytes, b_set, kWgmmaN, t,
                                       [](std::uint16_t x) { return wgmma_negate_s8_pair(x); });
    // The tiles were written through the generic proxy; wgmma reads them through the async one.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();

    WgmmaAcc<T> acc[tensor_wgmma_acc_regs(T)];
    tensor_wgmma_load_acc<T>(acc, c + static_cast<long long>(set) * kWgmmaM * kWgmmaN, t);
    const auto base = static_cast<std::uint32_t>(__cvta_generic_to_shared(tiles));
    const std::uint64_t desc_a = wgmma_descriptor(base, kWgmmaLeadingBytes, kWgmmaStrideBytes);
    const std::uint64_t desc_b = wgmma_descriptor(base + kWgmmaATileBytes, kWgmmaLeadingBytes, kWgmmaStrideBytes);
    [[maybe_unused]] const std::uint64_t desc_b_negated =
        wgmma_descriptor(base + kWgmmaATileBytes + kWgmmaBTileBytes, kWgmmaLeadingBytes, kWgmmaStrideBytes);

    const int hits = tensor_wgmma_rounds(
        acc, reps, [&] { tensor_wgmma<T, 1>(acc, desc_a, desc_b); },
        [&] {
          if constexpr (negated_tile)
            tensor_wgmma<T, 1>(acc, desc_a, desc_b_negated);
          else
            tensor_wgmma<T, -1>(acc, desc_a, desc_b);
        });
    tensor_wgmma_store_acc<T>(acc, out + block * kWgmmaM * kWgmmaN, t);
    hits_out[block * kWgmmaThreads + t] = hits;
    return;
  }
#endif
  (void)a, (void)b, (void)c, (void)out, (void)reps;
  hits_out[block * kWgmmaThreads + t] = kTensorNotCompiled;
#endif
}

// api=wgmma.rs: the same loop with A in registers (wgmma's RS form; f16/bf16 with f32 accumulate).
// Each thread loads its A fragment (wgmma_a_reg_coord) from the data set's A units once; only B
// is staged in shared memory. Buffers as tensor_wgmma_kernel's.
template <TensorType T>
__global__ void __launch_bounds__(kWgmmaThreads, 1)
    tensor_wgmma_rs_kernel(const std::uint16_t* __restrict__ a, const std::uint16_t* __restrict__ b,
                           const float* __restrict__ c, float* __restrict__ out, int* __restrict__ hits_out, int reps) {
#if defined(__CUDA_ARCH__)
  const int t = static_cast<int>(threadIdx.x);
  const long long block = blockIdx.x;
#if RP_TENSOR_HAS_WGMMA
  if constexpr (tensor_wgmma_rs_type(T)) {
    __shared__ alignas(128) unsigned char b_tile[kWgmmaBTileBytes];
    const int set = static_cast<int>(block % kTensorDataSets);
    constexpr int u = kWgmmaRowUnits;
    const std::uint16_t* b_set = b + set * kWgmmaN * u;
    tensor_stage_tile<kWgmmaThreads>(b_tile, b_set, kWgmmaN, t, [](std::uint16_t x) { return x; });
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();

    const std::uint16_t* a_set = a + set * kWgmmaM * u;
    std::uint32_t a_regs[kWgmmaARegs] = {};
#pragma unroll
    for (int e = 0; e < 2 * kWgmmaARegs; ++e) {
      const WgmmaCoord x = wgmma_a_reg_coord(t, e);
      a_regs[e / 2] |= static_cast<std::uint32_t>(a_set[x.row * u + x.col]) << (16 * (e % 2));
    }
    float acc[kWgmmaAccRegs];
    tensor_wgmma_load_acc<T>(acc, c + static_cast<long long>(set) * kWgmmaM * kWgmmaN, t);
    const std::uint64_t desc_b = wgmma_descriptor(static_cast<std::uint32_t>(__cvta_generic_to_shared(b_tile)),
                                                  kWgmmaLeadingBytes, kWgmmaStrideBytes);
    const int hits = tensor_wgmma_rounds(
        acc, reps, [&] { tensor_wgmma_rs<T, 1>(acc, a_regs, desc_b); },
        [&] { tensor_wgmma_rs<T, -1>(acc, a_regs, desc_b); });
    tensor_wgmma_store_acc<T>(acc, out + block * kWgmmaM * kWgmmaN, t);
    hits_out[block * kWgmmaThreads + t] = hits;
    return;
  }
#endif
  (void)a, (void)b, (void)c, (void)out, (void)reps;
  hits_out[block * kWgmmaThreads + t] = kTensorNotCompiled;
#endif
}

}  // namespace roofprobe::cuda
