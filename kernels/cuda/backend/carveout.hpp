// The L1 / shared-memory split each CUDA probe runs with. Volta and later carve L1 and shared
// memory out of one SRAM per SM; unless a kernel states a preference
// (cudaFuncAttributePreferredSharedMemoryCarveout) the driver picks the split, and a measurement
// of L1 would depend on what the driver chose. Every probe states its split here, the occupancy
// query of its kernels applies it (cuda_support.hpp: resident_blocks), and the device description
// lists it (device.extra.carveout). Plain C++, host-tested.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace roofprobe::cuda {

enum class Carveout {
  MaxL1,      // the largest L1 the SM can configure: the kernel uses no shared memory
  MaxShared,  // the largest shared memory: the kernel's data lives there
};

// The value of cudaFuncAttributePreferredSharedMemoryCarveout: a percentage of the maximum shared
// memory (cudaSharedmemCarveoutMaxL1 = 0, cudaSharedmemCarveoutMaxShared = 100).
inline int carveout_percent(Carveout c) { return c == Carveout::MaxShared ? 100 : 0; }
inline const char* carveout_name(Carveout c) { return c == Carveout::MaxShared ? "max shared" : "max L1"; }

struct ProbeCarveout {
  const char* probe;
  Carveout carveout;
};

// One row per CUDA probe (ProbeConformance holds every registered CUDA probe to having one).
// "tensor.tile" is the tensor probe's wgmma and tcgen05 paths, which stage their tiles in shared
// memory; its mma.sync and WMMA paths keep their operands in registers.
inline constexpr ProbeCarveout kProbeCarveouts[] = {
    {"bandwidth", Carveout::MaxL1},  // its ca curves measure L1: the largest one the SM has
    {"clock", Carveout::MaxL1},           {"flops", Carveout::MaxL1},   {"fma_mix", Carveout::MaxL1},
    {"issue", Carveout::MaxL1},           {"scaling", Carveout::MaxL1}, {"shared", Carveout::MaxShared},
    {"stride", Carveout::MaxL1},          {"system", Carveout::MaxL1},  {"tensor", Carveout::MaxL1},
    {"tensor.tile", Carveout::MaxShared},
};

// The split of `probe`; std::logic_error for a probe without a row (a new probe must choose).
inline Carveout carveout_of(std::string_view probe) {
  for (const ProbeCarveout& row : kProbeCarveouts)
    if (probe == row.probe) return row.carveout;
  throw std::logic_error("CUDA probe '" + std::string(probe) + "' states no L1/shared carveout (carveout.hpp)");
}

// "bandwidth: max L1, ..., shared: max shared, ...": what device.extra.carveout records.
inline std::string carveout_table_text() {
  std::string out;
  for (const ProbeCarveout& row : kProbeCarveouts)
    out += (out.empty() ? "" : ", ") + std::string(row.probe) + ": " + carveout_name(row.carveout);
  return out;
}

}  // namespace roofprobe::cuda
