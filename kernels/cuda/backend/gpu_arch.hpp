// Per-SM figures of NVIDIA GPU architectures that the CUDA runtime does not report: FP32/FP64
// lanes (results per clock per SM) and the size of the unified L1/shared-memory array. The CUDA
// backend turns them into theoretical peaks at the measured clock; the unit tests check them
// against the published peaks of ARCHITECTURE.md's reference table. Host-only, no CUDA headers.
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
};

// Sources: CUDA C++ Programming Guide, "Arithmetic Instructions" throughput table (results per
// clock per SM) and the "Technical Specifications per Compute Capability" table (unified data
// cache size), plus the Volta/Ampere/Hopper whitepapers. Only compute capabilities whose figures
// are published are listed; an unknown one yields zeros and the backend says so instead of
// guessing a peak.
inline GpuArchFigures gpu_arch_figures(int major, int minor) {
  constexpr std::uint64_t KiB = 1024;
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
    case 120:
      return {128, 2, 128 * KiB, 4, "Blackwell"};  // RTX 50xx
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
