// Per-SM figures of NVIDIA GPU architectures that the CUDA runtime does not report: FP32/FP64
// lanes (results per clock per SM) and the size of the unified L1/shared-memory array. The CUDA
// backend turns them into theoretical peaks at the measured clock; the unit tests
// (tests/unit/cuda_patterns_test.cpp) check them against the published V100/A100/H100 peaks, and
// tests/unit/gpu_tables_cover_every_cc_test.cpp that every compute capability from 7.0 to 12.1
// has a row. Host-only, no CUDA headers.
#pragma once

#include <cstdint>
#include <string>

namespace roofprobe {

struct GpuArchFigures {
  int fp32_lanes_per_sm = 0;          // FP32 add/mul/FMA results per clock per SM; 0: unknown
  int fp64_lanes_per_sm = 0;          // FP64 likewise; 0: unknown
  std::uint64_t l1_bytes_per_sm = 0;  // unified L1 data cache + shared memory per SM; 0: unknown
  int schedulers_per_sm = 0;          // warp schedulers (issue one warp instruction per clock each)
  const char* family = "";            // architecture name, for the provenance strings
  const char* unknown = "";           // "unknown: ..." why a figure above is 0 (a row's own reason)
};

// Sources: CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table (results per
// clock per SM) and the "Technical Specifications per Compute Capability" table (unified data
// cache size), plus the Volta/Ampere/Hopper/Blackwell whitepapers. Every compute capability from
// 7.0 to 12.1 has a row; a figure that is not published stays 0 and the row's `unknown` says why
// (the backend then states no peak instead of guessing one). A compute capability without a row
// yields zeros.
inline GpuArchFigures gpu_arch_figures(int major, int minor) {
  constexpr std::uint64_t KiB = 1024;
  constexpr const char* kB300Fp64 =
      "unknown: FP64 lanes per SM of compute capability 10.3 (B300 sharply reduces FP64 against "
      "B200's 64 and no per-SM FP64 rate is published for it)";
  constexpr const char* kThor =
      "unknown: no per-SM FP32/FP64 lane, L1 or scheduler figure published for compute capability "
      "11.0 (Jetson Thor) in the Programming Guide or a whitepaper";
  switch (major * 10 + minor) {
    case 70:
      return {64, 32, 128 * KiB, 4, "Volta"};  // V100
    case 72:
      return {64, 32, 128 * KiB, 4, "Volta"};  // Xavier
    case 75:
      return {64, 2, 96 * KiB, 4, "Turing"};  // T4, RTX 20xx
    case 80:
      return {64, 32, 192 * KiB, 4, "Ampere"};  // A100, A30
    case 86:
      return {128, 2, 128 * KiB, 4, "Ampere"};  // A40, RTX 30xx
    case 87:
      return {128, 2, 192 * KiB, 4, "Ampere"};  // Orin
    case 89:
      return {128, 2, 128 * KiB, 4, "Ada Lovelace"};  // L40S, RTX 40xx
    case 90:
      return {128, 64, 256 * KiB, 4, "Hopper"};  // H100, H200, GH200
    case 100:
      return {128, 64, 256 * KiB, 4, "Blackwell"};  // B200, GB200
    case 103:  // B300, GB300 (Blackwell Ultra): the 10.0 SM's FP32 lanes and L1, FP64 cut
      return {128, 0, 256 * KiB, 4, "Blackwell", kB300Fp64};
    case 110:  // Jetson Thor (Blackwell; cc 10.1 before CUDA 13)
      return {0, 0, 0, 0, "Blackwell", kThor};
    case 120:
      return {128, 2, 128 * KiB, 4, "Blackwell"};  // RTX 50xx
    case 121:
      return {128, 2, 128 * KiB, 4, "Blackwell"};  // GB10 (DGX Spark): the 12.0 SM
    default:
      return {};
  }
}

// Theoretical GFLOP/s of `sms` SMs with `lanes_per_sm` lanes at `clock_mhz`: an FMA counts two
// FLOPs per lane per clock, an add or a multiply one (so the noFMA ceiling is half the FMA one).
inline double gpu_peak_gflops(int sms, int lanes_per_sm, double clock_mhz, bool fma) {
  return static_cast<double>(sms) * lanes_per_sm * (fma ? 2.0 : 1.0) * clock_mhz * 1e-3;
}

// Theoretical DRAM bandwidth, GB/s (1e9): double data rate x bus width. `memory_clock_khz` as
// cudaDevAttrMemoryClockRate reports it (the peak memory clock).
inline double gpu_memory_peak_gbs(double memory_clock_khz, int bus_width_bits) {
  return 2.0 * memory_clock_khz * 1e3 * (bus_width_bits / 8.0) * 1e-9;
}

// The runtime cannot say whether a board carries HBM or GDDR; every HBM part so far has a bus of
// at least 2048 bits (HBM stacks are 1024 bits wide each) and no GDDR part comes close (<= 512).
inline std::string gpu_memory_name(int bus_width_bits) { return bus_width_bits >= 2048 ? "HBM" : "DRAM"; }

}  // namespace roofprobe
