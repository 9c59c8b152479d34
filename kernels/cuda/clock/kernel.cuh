// Device side of the CUDA "clock" probe (the SM clock under load), shared by kernels/cuda/clock/probe.cu
// and the PTX checks in tests/ptx. The chain data are RP_HD functions so the launcher predicts
// on the host exactly what each thread ends with.
//
// Every thread spins until clock64() has advanced `cycles` SM cycles since its start. Under the
// fp32_fma load, each turn of the loop first runs kClockSteps steps of kClockIlp independent
// FFMA chains (enough warps and chains to keep the FP32 pipes as busy as the FMA ceiling run),
// then reads the clock: the overshoot past `cycles` is at most one turn (~2200 cycles at full
// occupancy), negligible against the millions of cycles of a launch.
//
// The chains are exact integer arithmetic in FP32: x = fma(x, one, b) with one = 1.0 passed at
// run time (the compiler cannot fold it, so every step is a real FFMA) and small integer x0 and b;
// after each turn x = x - kClockSteps * b brings every chain back to x0. The values stay below
// 2^24, so nothing rounds and the host knows each thread's final state whatever number of turns
// it ran: a thread whose chains were skipped, cut short or fed the wrong data ends elsewhere.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/common/hd.hpp"

namespace roofprobe::cuda {

enum class ClockLoad : int { Idle = 0, Fp32Fma = 1 };

inline constexpr int kClockBlock = 256;  // threads per block
inline constexpr int kClockIlp = 8;      // independent FFMA chains per thread
inline constexpr int kClockSteps = 16;   // FFMA steps per chain between two clock reads

// A 32-bit mix of (thread, chain), so neighbouring threads and chains get unrelated data.
RP_HD std::uint32_t clock_mix(std::uint64_t thread, int chain) {
  std::uint64_t z = thread * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(chain) * 0xBF58476D1CE4E5B9ull;
  z ^= z >> 31;
  z *= 0x94D049BB133111EBull;
  z ^= z >> 29;
  return static_cast<std::uint32_t>(z);
}

// Chain `chain` of global thread `thread`: its start value, an integer in [0, 2^22) ...
RP_HD float clock_chain_start(std::uint64_t thread, int chain) {
  return static_cast<float>(clock_mix(thread, chain) & 0x3FFFFFu);
}
// ... and its increment per step, an integer in [1, 63]: after kClockSteps steps the chain is at
// most 2^22 + 16 x 63 < 2^24, so every FP32 value on the way is exact.
RP_HD float clock_chain_step(std::uint64_t thread, int chain) {
  return static_cast<float>(1u + (clock_mix(thread, chain) >> 26) % 63u);
}

// What a thread stores: the sum (mod 2^32) of the bit patterns of its chains' final values.
RP_HD std::uint32_t clock_chain_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t bits = 0;
  static_assert(sizeof bits == sizeof x, "IEEE binary32 expected");
  __builtin_memcpy(&bits, &x, sizeof bits);
  return bits;
#endif
}

// What every fp32_fma thread must store: its chains back at their start values.
RP_HD std::uint32_t clock_expected_result(std::uint64_t thread) {
  std::uint32_t sum = 0;
  for (int j = 0; j < kClockIlp; ++j) sum += clock_chain_bits(clock_chain_start(thread, j));
  return sum;
}

// One launch. Thread 0 of each block records the block's start (its own first clock read) and,
// after every thread of the block has seen `cycles` elapse, its stop: stop - start >= cycles for a
// block that really spun that long (clock64 counts per SM, so only a block's own two readings are
// compared). Turns counts the loop turns thread 0 ran (>= 1); block_launch gets `launch`, the
// launch's serial number, so results left over from an earlier launch are told apart.
// thread_results: one word per thread (fp32_fma only).
template <ClockLoad Load>
__global__ void __launch_bounds__(kClockBlock)
    clock_kernel(long long cycles, float one, long long launch, long long* __restrict__ block_start,
                 long long* __restrict__ block_stop, long long* __restrict__ block_turns,
                 long long* __restrict__ block_launch, std::uint32_t* __restrict__ thread_results) {
  const std::uint64_t g = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  float x[kClockIlp], b[kClockIlp], drift[kClockIlp];
  if constexpr (Load == ClockLoad::Fp32Fma) {
#pragma unroll
    for (int j = 0; j < kClockIlp; ++j) {
      x[j] = clock_chain_start(g, j);
      b[j] = clock_chain_step(g, j);
      drift[j] = b[j] * static_cast<float>(kClockSteps);  // exact: a small integer
    }
  }
  const long long start = clock64();
  long long now = start;
  long long turns = 0;
  do {
    if constexpr (Load == ClockLoad::Fp32Fma) {
#pragma unroll
      for (int s = 0; s < kClockSteps; ++s) {
#pragma unroll
        for (int j = 0; j < kClockIlp; ++j) x[j] = __fmaf_rn(x[j], one, b[j]);
      }
#pragma unroll
      for (int j = 0; j < kClockIlp; ++j) x[j] = __fsub_rn(x[j], drift[j]);
    }
    ++turns;
    now = clock64();
  } while (now - start < cycles);
  if constexpr (Load == ClockLoad::Fp32Fma) {
    std::uint32_t sum = 0;
#pragma unroll
    for (int j = 0; j < kClockIlp; ++j) sum += __float_as_uint(x[j]);
    thread_results[g] = sum;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    block_start[blockIdx.x] = start;
    block_stop[blockIdx.x] = clock64();
    block_turns[blockIdx.x] = turns;
    block_launch[blockIdx.x] = launch;
  }
}

}  // namespace roofprobe::cuda
