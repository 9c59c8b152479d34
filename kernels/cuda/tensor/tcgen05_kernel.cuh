// Device side of the tensor probe's Blackwell datacenter path (sm_100a; B200, GB200): one thread
// of the CTA issues tcgen05.mma.cta_group::1 (128 x 64 x K: kind::f16 for f16/bf16, kind::tf32,
// kind::f8f6f4 for e4m3, kind::i8 for int8) on A and B tiles staged once in shared memory, into a
// 128 x 64 f32 (int8: s32) accumulator in tensor memory (TMEM). The loop is the other paths': per
// iteration kTcgen05Steps MMAs alternating +B and -B (the instruction descriptor's negate-B bit;
// kind::i8 has none and reads -B from a second tile), one tcgen05.commit to an mbarrier that every thread waits on, so
// the accumulator is back at C after each iteration; the completed phases are counted (`hits`), and one more +B after
// the loop leaves C + A*B, read back with tcgen05.ld for the host to check. The instructions come from CCCL's cuda::ptx
// wrappers (the toolkit's own spelling of the PTX).
//
// Compiled only for sm_100a (__CUDA_ARCH_FEAT_SM100_ALL); elsewhere the kernel writes
// kTensorNotCompiled into `hits`. Not measured: it needs a Blackwell GPU.
#pragma once

#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/tensor/tcgen05_layout.hpp"
#include "kernels/cuda/tensor/model.hpp"
#include "kernels/cuda/tensor/kernel.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM100_ALL)
#define RP_TENSOR_HAS_TCGEN05 1
#else
#define RP_TENSOR_HAS_TCGEN05 0
#endif

namespace roofprobe::cuda {

// The types with a tcgen05 path, and their kind's descriptor codes (tcgen05_layout.hpp).
__host__ __device__ constexpr bool tensor_tcgen05_type(TensorType t) { return tensor_tcgen05_shape(t).m > 0; }
__host__ __device__ constexpr std::uint32_t tcgen05_ab_type(TensorType t) {
  return t == TensorType::Bf16Fp32    ? kTcgen05Bf16
         : t == TensorType::Tf32Fp32  ? kTcgen05Tf32
         : t == TensorType::Fp8Fp32   ? kTcgen05E4m3
         : t == TensorType::Int8Int32 ? kTcgen05S8
                                      : kTcgen05F16;
}
__host__ __device__ constexpr std::uint32_t tcgen05_d_type(TensorType t) {
  return t == TensorType::Int8Int32 ? kTcgen05DS32 : kTcgen05DF32;
}
// kind::i8 has no negate-B bit: its -B is a tile of its own.
__host__ __device__ constexpr bool tcgen05_negated_tile(TensorType t) { return t == TensorType::Int8Int32; }

#if RP_TENSOR_HAS_TCGEN05
// One tcgen05.mma of the type's kind into the accumulator (the CTA's one issuing thread).
template <TensorType T>
__device__ __forceinline__ void tcgen05_issue(std::uint32_t acc, std::uint64_t desc_a, std::uint64_t desc_b,
                                              std::uint32_t idesc) {
  namespace ptx = ::cuda::ptx;
  if constexpr (T == TensorType::Tf32Fp32)
    ptx::tcgen05_mma(ptx::kind_tf32, ptx::cta_group_1, acc, desc_a, desc_b, idesc, true);
  else if constexpr (T == TensorType::Fp8Fp32)
    ptx::tcgen05_mma(ptx::kind_f8f6f4, ptx::cta_group_1, acc, desc_a, desc_b, idesc, true);
  else if constexpr (T == TensorType::Int8Int32)
    ptx::tcgen05_mma(ptx::kind_i8, ptx::cta_group_1, acc, desc_a, desc_b, idesc, true);
  else
    ptx::tcgen05_mma(ptx::kind_f16, ptx::cta_group_1, acc, desc_a, desc_b, idesc, true);
}

// A and B into their tiles (wgmma_tile_offset), and for kind::i8, which cannot negate B, -B into a
// third tile after them.
template <TensorType T>
__device__ __forceinline__ void tcgen05_stage_tiles(unsigned char* tiles, const std::uint16_t* a_set,
                                                    const std::uint16_t* b_set, int t) {
  const auto same = [](std::uint16_t x) { return x; };
  tensor_stage_tile<kTcgen05Threads>(tiles, a_set, kTcgen05M, t, same);
  tensor_stage_tile<kTcgen05Threads>(tiles + kTcgen05ATileBytes, b_set, kTcgen05N, t, same);
  if constexpr (tcgen05_negated_tile(T))
    tensor_stage_tile<kTcgen05Threads>(tiles + kTcgen05ATileBytes + kTcgen05BTileBytes, b_set, kTcgen05N, t,
                                       [](std::uint16_t x) { return wgmma_negate_s8_pair(x); });
}

// A TMEM accumulator word from the f32 C buffer, and back: s32 for kind::i8 (the probe's small
// integers, exact in f32), the f32 bits otherwise.
template <TensorType T>
__device__ __forceinline__ std::uint32_t tcgen05_acc_bits(float c) {
  if constexpr (T == TensorType::Int8Int32) return static_cast<std::uint32_t>(static_cast<int>(c));
  return __float_as_uint(c);
}
template <TensorType T>
__device__ __forceinline__ float tcgen05_acc_value(std::uint32_t word) {
  if constexpr (T == TensorType::Int8Int32) return static_cast<float>(static_cast<int>(word));
  return __uint_as_float(word);
}
#endif

// Buffers as the wgmma path's (kernels/cuda/tensor/wgmma_kernel.cuh), with its M and N: a [set][m][k], b [set][n][k]
// 16-bit; c [set][m][n] and out [block][m][n] f32; hits [block][thread].
// One function of ~95 lines on purpose: TMEM allocation, the MMA loop, the read-back and the
// deallocation must stay in one kernel body in this order (tcgen05.alloc and dealloc by the
// same warp, the TMEM address kept in shared memory between them), and the PTX/SASS checks
// count the UTC*MMA of this one body; split into device functions it reads no simpler.
template <TensorType T>
__global__ void __launch_bounds__(kTcgen05Threads, 1)
    tensor_tcgen05_kernel(const std::uint16_t* __restrict__ a, const std::uint16_t* __restrict__ b,
                          const float* __restrict__ c, float* __restrict__ out, int* __restrict__ hits_out, int reps) {
#if defined(__CUDA_ARCH__)
  const int t = static_cast<int>(threadIdx.x), warp = t / 32;
  const long long block = blockIdx.x;
#if RP_TENSOR_HAS_TCGEN05
  if constexpr (tensor_tcgen05_type(T)) {
    namespace ptx = ::cuda::ptx;
    constexpr bool negated_tile = tcgen05_negated_tile(T);
    __shared__ alignas(128) unsigned char tiles[kTcgen05ATileBytes + (negated_tile ? 2 : 1) * kTcgen05BTileBytes];
    __shared__ alignas(8) std::uint64_t done;  // mbarrier: the committed MMAs completed
    __shared__ std::uint32_t tmem_base;
    const int set = static_cast<int>(block % kTensorDataSets);
    tcgen05_stage_tiles<T>(tiles, a + set * kTcgen05M * kTcgen05RowUnits, b + set * kTcgen05N * kTcgen05RowUnits, t);
    if (warp == 0) {
      ptx::tcgen05_alloc(ptx::cta_group_1, &tmem_base, kTcgen05Columns);
      ptx::tcgen05_relinquish_alloc_permit(ptx::cta_group_1);
    }
    if (t == 0) ptx::mbarrier_init(&done, 1);
    // The tiles were written through the generic proxy; the tensor cores read them through the
    // async one.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    ptx::tcgen05_fence_before_thread_sync();
    __syncthreads();
    ptx::tcgen05_fence_after_thread_sync();
    const std::uint32_t acc = tmem_base;
    const std::uint32_t my_lanes = tcgen05_tmem_address(acc, 32 * warp, 0);

    // C into TMEM: thread t holds row t.
    std::uint32_t row[kTcgen05N];
    const float* c_row = c + (static_cast<long long>(set) * kTcgen05M + t) * kTcgen05N;
#pragma unroll
    for (int j = 0; j < kTcgen05N; ++j) row[j] = tcgen05_acc_bits<T>(c_row[j]);
    ptx::tcgen05_st_32x32b(my_lanes, row);
    ptx::tcgen05_wait_st();
    ptx::tcgen05_fence_before_thread_sync();
    __syncthreads();
    ptx::tcgen05_fence_after_thread_sync();

    const auto base = static_cast<std::uint32_t>(__cvta_generic_to_shared(tiles));
    const std::uint64_t desc_a = tcgen05_smem_descriptor(base, kWgmmaLeadingBytes, kWgmmaStrideBytes);
    const std::uint64_t desc_b =
        tcgen05_smem_descriptor(base + kTcgen05ATileBytes, kWgmmaLeadingBytes, kWgmmaStrideBytes);
    const std::uint32_t plus_b = tcgen05_instr_descriptor(tcgen05_d_type(T), tcgen05_ab_type(T), false);
    // -B: the descriptor's negation, or (int8) +B on the negated tile.
    const std::uint32_t minus_b = tcgen05_instr_descriptor(tcgen05_d_type(T), tcgen05_ab_type(T), !negated_tile);
    const std::uint64_t desc_minus_b = negated_tile
                                           ? tcgen05_smem_descriptor(base + kTcgen05ATileBytes + kTcgen05BTileBytes,
                                                                     kWgmmaLeadingBytes, kWgmmaStrideBytes)
                                           : desc_b;

    int hits = 0;
    std::uint32_t phase = 0;
#pragma unroll 1
    for (int it = 0; it <= reps; ++it) {
      const bool last = it == reps;  // the last round: one +B, leaving C + A*B
      if (t == 0) {
        if (last) {
          tcgen05_issue<T>(acc, desc_a, desc_b, plus_b);
        } else {
#pragma unroll
          for (int step = 0; step < kTcgen05Steps; step += 2) {
            tcgen05_issue<T>(acc, desc_a, desc_b, plus_b);
            tcgen05_issue<T>(acc, desc_a, desc_minus_b, minus_b);
          }
        }
        ptx::tcgen05_commit(ptx::cta_group_1, &done);
      }
      while (!ptx::mbarrier_try_wait_parity(&done, phase)) {
      }
      phase ^= 1;
      hits += last ? 0 : 1;
    }
    ptx::tcgen05_fence_after_thread_sync();

    ptx::tcgen05_ld_32x32b(row, my_lanes);
    ptx::tcgen05_wait_ld();
    float* o = out + (block * kTcgen05M + t) * kTcgen05N;
#pragma unroll
    for (int j = 0; j < kTcgen05N; ++j) o[j] = tcgen05_acc_value<T>(row[j]);
    hits_out[block * kTcgen05Threads + t] = hits;
    ptx::tcgen05_fence_before_thread_sync();
    __syncthreads();
    if (warp == 0) {
      ptx::tcgen05_fence_after_thread_sync();
      ptx::tcgen05_dealloc(ptx::cta_group_1, acc, kTcgen05Columns);
    }
    return;
  }
#endif
  (void)a, (void)b, (void)c, (void)out, (void)reps, (void)warp;
  hits_out[block * kTcgen05Threads + t] = kTensorNotCompiled;
#endif
}

}  // namespace roofprobe::cuda
