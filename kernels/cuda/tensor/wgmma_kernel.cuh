// Device side of the tensor probe's Hopper path (api=wgmma): one warpgroup per block issues
// warpgroup-level wgmma.mma_async.m64n128 (k16 f16/bf16, k8 tf32, k32 e4m3; sm_90a) on A and B tiles staged once in
// shared memory, into a 64 x 128 f32 accumulator held in registers. The shapes, the tile layout, the descriptors and
// the accumulator layout are kernels/cuda/tensor/wgmma_layout.hpp's; the loop is the mma.sync kernel's
// (kernels/cuda/tensor/kernel.cuh): per iteration kWgmmaSteps instructions alternating +B and -B (imm-scale-b = -1),
// one commit group, then wait for it, so the accumulator is back at C after every iteration (`hits`), and one more +B
// after the loop leaves C + A*B for the host.
//
// Compiled only for sm_90a (__CUDA_ARCH_FEAT_SM90_ALL: the arch-specific features wgmma needs run
// on compute capability 9.0 alone); elsewhere the kernel writes kTensorNotCompiled into `hits`.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda/tensor/model.hpp"
#include "kernels/cuda/tensor/wgmma_layout.hpp"
#include "kernels/cuda/tensor/kernel.cuh"

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define RP_TENSOR_HAS_WGMMA 1
#else
#define RP_TENSOR_HAS_WGMMA 0
#endif

namespace roofprobe::cuda {

// The input.accumulate types with a wgmma path here: f16, bf16, tf32 and e4m3 inputs, f32
// accumulate (tensor_wgmma_shape).
__host__ __device__ constexpr bool tensor_wgmma_type(TensorType t) { return tensor_wgmma_shape(t).m > 0; }

#if RP_TENSOR_HAS_WGMMA
// One m64n128 wgmma with f32 accumulate: the asm text differs only in its shape and input types
// (RP_WGMMA_KIND, e.g. "m64n128k16.f32.f16.f16") and in its immediates (RP_WGMMA_IMM: f16/bf16
// take imm-trans-a/b as well as the scales, tf32 and e4m3 the scales only), so it is written once.
#define RP_WGMMA_M64N128_F32()                                                                                       \
  asm volatile(                                                                                                      \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"                                                                   \
      "wgmma.mma_async.sync.aligned." RP_WGMMA_KIND                                                                  \
      " "                                                                                                            \
      "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%" \
      "29,%30,%31,%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,%48,%49,%50,%51,%52,%53,%54,%55,%" \
      "56,%57,%58,%59,%60,%61,%62,%63}, "                                                                            \
      "%64, %65, p, 1, %67" RP_WGMMA_IMM ";\n}\n"                                                                    \
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),  \
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),       \
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),      \
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),      \
        "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),      \
        "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),      \
        "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),      \
        "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])                    \
      : "l"(desc_a), "l"(desc_b), "r"(1), "n"(ScaleB));

// d = a * (ScaleB * b) + d over the warpgroup, one wgmma.mma_async (not yet complete on return:
// the caller commits and waits). volatile: the count of instructions the probe declares stays.
template <TensorType T, int ScaleB>
__device__ __forceinline__ void tensor_wgmma(float (&d)[kWgmmaAccRegs], std::uint64_t desc_a, std::uint64_t desc_b) {
  static_assert(kWgmmaAccRegs == 64 && kWgmmaN == 128, "the operand list of RP_WGMMA_M64N128_F32 is m64n128");
  if constexpr (T == TensorType::Fp16Fp32) {
#define RP_WGMMA_KIND "m64n128k16.f32.f16.f16"
#define RP_WGMMA_IMM ", 0, 0"
    RP_WGMMA_M64N128_F32();
#undef RP_WGMMA_KIND
#undef RP_WGMMA_IMM
  } else if constexpr (T == TensorType::Bf16Fp32) {
#define RP_WGMMA_KIND "m64n128k16.f32.bf16.bf16"
#define RP_WGMMA_IMM ", 0, 0"
    RP_WGMMA_M64N128_F32();
#undef RP_WGMMA_KIND
#undef RP_WGMMA_IMM
  } else if constexpr (T == TensorType::Tf32Fp32) {
#define RP_WGMMA_KIND "m64n128k8.f32.tf32.tf32"
#define RP_WGMMA_IMM ""
    RP_WGMMA_M64N128_F32();
#undef RP_WGMMA_KIND
#undef RP_WGMMA_IMM
  } else {
#define RP_WGMMA_KIND "m64n128k32.f32.e4m3.e4m3"
#define RP_WGMMA_IMM ""
    RP_WGMMA_M64N128_F32();
#undef RP_WGMMA_KIND
#undef RP_WGMMA_IMM
  }
}
#undef RP_WGMMA_M64N128_F32

// The accumulator registers are written by the tensor cores until wgmma.wait_group: this tells the
// compiler they change here, so no read of them moves above the wait (or write below the fence).
__device__ __forceinline__ void tensor_wgmma_fence_operands(float (&d)[kWgmmaAccRegs]) {
#pragma unroll
  for (int r = 0; r < kWgmmaAccRegs; ++r) asm volatile("" : "+f"(d[r])::"memory");
}
#endif

// Buffers: a [set][m][32 bytes of k] and b [set][n][32 bytes of k] as 16-bit units (B stored
// K-major: its column n as a row; elements packed little-endian into the units), c [set][m][n]
// and out [block][m][n] as f32 row-major; hits [block][thread].
template <TensorType T>
__global__ void __launch_bounds__(kWgmmaThreads, 1)
    tensor_wgmma_kernel(const std::uint16_t* __restrict__ a, const std::uint16_t* __restrict__ b,
                        const float* __restrict__ c, float* __restrict__ out, int* __restrict__ hits_out, int reps) {
#if defined(__CUDA_ARCH__)
  const int t = static_cast<int>(threadIdx.x);
  const long long block = blockIdx.x;
#if RP_TENSOR_HAS_WGMMA
  if constexpr (tensor_wgmma_type(T)) {
    __shared__ alignas(128) unsigned char tiles[kWgmmaATileBytes + kWgmmaBTileBytes];
    const int set = static_cast<int>(block % kTensorDataSets);
    constexpr int u = kWgmmaRowUnits;  // 16-bit units per row (kWgmmaK f16, or the same 32 bytes of K)
    const std::uint16_t* a_set = a + set * kWgmmaM * u;
    const std::uint16_t* b_set = b + set * kWgmmaN * u;
    for (int i = t; i < kWgmmaM * u; i += kWgmmaThreads)
      *reinterpret_cast<std::uint16_t*>(tiles + wgmma_tile_offset(i / u, i % u)) = a_set[i];
    for (int i = t; i < kWgmmaN * u; i += kWgmmaThreads)
      *reinterpret_cast<std::uint16_t*>(tiles + kWgmmaATileBytes + wgmma_tile_offset(i / u, i % u)) = b_set[i];
    // The tiles were written through the generic proxy; wgmma reads them through the async one.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();

    float acc[kWgmmaAccRegs];
    const float* c_set = c + static_cast<long long>(set) * kWgmmaM * kWgmmaN;
#pragma unroll
    for (int r = 0; r < kWgmmaAccRegs; ++r) {
      const WgmmaCoord x = wgmma_acc_coord(t, r);
      acc[r] = c_set[x.row * kWgmmaN + x.col];
    }
    const float first = acc[0];
    const auto base = static_cast<std::uint32_t>(__cvta_generic_to_shared(tiles));
    const std::uint64_t desc_a = wgmma_descriptor(base, kWgmmaLeadingBytes, kWgmmaStrideBytes);
    const std::uint64_t desc_b = wgmma_descriptor(base + kWgmmaATileBytes, kWgmmaLeadingBytes, kWgmmaStrideBytes);

    int hits = 0;
#pragma unroll 1
    for (int it = 0; it < reps; ++it) {
      tensor_wgmma_fence_operands(acc);
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
      for (int step = 0; step < kWgmmaSteps; step += 2) {
        tensor_wgmma<T, 1>(acc, desc_a, desc_b);
        tensor_wgmma<T, -1>(acc, desc_a, desc_b);
      }
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      tensor_wgmma_fence_operands(acc);
      hits += acc[0] == first ? 1 : 0;
    }
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    tensor_wgmma<T, 1>(acc, desc_a, desc_b);
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    tensor_wgmma_fence_operands(acc);

    float* o = out + block * kWgmmaM * kWgmmaN;
#pragma unroll
    for (int r = 0; r < kWgmmaAccRegs; ++r) {
      const WgmmaCoord x = wgmma_acc_coord(t, r);
      o[x.row * kWgmmaN + x.col] = acc[r];
    }
    hits_out[block * kWgmmaThreads + t] = hits;
    return;
  }
#endif
  (void)a, (void)b, (void)c, (void)out, (void)reps;
  hits_out[block * kWgmmaThreads + t] = kTensorNotCompiled;
#endif
}

}  // namespace roofprobe::cuda
