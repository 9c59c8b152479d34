// The L1 / shared-memory split each CUDA probe runs with. Volta and later carve L1 and shared
// memory out of one SRAM per SM; unless a kernel states a preference
// (cudaFuncAttributePreferredSharedMemoryCarveout) the driver picks the split, and a measurement
// of L1 would depend on what the driver chose. Every probe states its split (RP_CUDA_CARVEOUT in its
// own probe.cu), the occupancy
// query of its kernels applies it (cuda_support.hpp: resident_blocks), and the device description
// lists it (device.extra.carveout). Plain C++, host-tested.
#pragma once

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace roofprobe::cuda {

enum class Carveout {
  MaxL1,      // the largest L1 the SM can configure: the kernel uses no shared memory
  MaxShared,  // the largest shared memory: the kernel's data lives there
};

// The value of cudaFuncAttributePreferredSharedMemoryCarveout to request: a percentage of the
// maximum shared memory per SM. MaxShared: 100. MaxL1: the smallest share that still holds the
// `blocks_per_sm` the kernel reaches with all of it. A kernel with shared memory of its own needs
// its bytes plus the driver's reserve per block (1 KiB on sm_80 and later), in 128-byte units, so a
// flat 0% would cost it blocks: an A100 bandwidth block (128 B + 1 KiB, 8 per SM) fits 7 times in
// the smallest configuration. A kernel without shared memory gets 0.
inline int carveout_percent(Carveout c, int blocks_per_sm, std::size_t shared_per_block, std::size_t reserved_per_block,
                            std::size_t shared_per_sm) {
  if (c == Carveout::MaxShared) return 100;
  if (shared_per_block == 0 || shared_per_sm == 0 || blocks_per_sm <= 0) return 0;
  const std::size_t per_block = (shared_per_block + reserved_per_block + 127) / 128 * 128;
  const std::size_t percent =
      (per_block * static_cast<std::size_t>(blocks_per_sm) * 100 + shared_per_sm - 1) / shared_per_sm;
  return percent > 100 ? 100 : static_cast<int>(percent);
}
inline const char* carveout_name(Carveout c) { return c == Carveout::MaxShared ? "max shared" : "max L1"; }

struct ProbeCarveout {
  std::string probe;
  Carveout carveout;
};

// Every CUDA probe states its split in its own folder, beside its kernels:
//   RP_CUDA_CARVEOUT("bandwidth", Carveout::MaxL1);  // why
// (ProbeConformance holds every registered CUDA probe to having one). The rows, sorted by name.
inline std::vector<ProbeCarveout>& carveout_rows() {
  static std::vector<ProbeCarveout> rows;
  return rows;
}

struct CarveoutRegistrar {
  CarveoutRegistrar(const char* probe, Carveout carveout) {
    std::vector<ProbeCarveout>& rows = carveout_rows();
    const auto at = std::lower_bound(rows.begin(), rows.end(), std::string_view(probe),
                                     [](const ProbeCarveout& row, std::string_view name) { return row.probe < name; });
    if (at != rows.end() && at->probe == probe)
      throw std::logic_error("CUDA probe '" + std::string(probe) + "' states its carveout twice");
    rows.insert(at, ProbeCarveout{probe, carveout});
  }
};

#define RP_CUDA_CARVEOUT_CONCAT2(a, b) a##b
#define RP_CUDA_CARVEOUT_CONCAT(a, b) RP_CUDA_CARVEOUT_CONCAT2(a, b)
// `key` is the probe's name, or "<name>.<part>" for a part of a probe with a split of its own.
#define RP_CUDA_CARVEOUT(key, split)                                                                 \
  static const ::roofprobe::cuda::CarveoutRegistrar RP_CUDA_CARVEOUT_CONCAT(rp_carveout_, __LINE__)( \
      key, ::roofprobe::cuda::split)

// The split of `probe`; std::logic_error for a probe without a row (a new probe must choose).
inline Carveout carveout_of(std::string_view probe) {
  for (const ProbeCarveout& row : carveout_rows())
    if (probe == row.probe) return row.carveout;
  throw std::logic_error("CUDA probe '" + std::string(probe) +
                         "' states no L1/shared carveout (RP_CUDA_CARVEOUT in its probe.cu, backend/carveout.hpp)");
}

// "bandwidth: max L1, ..., shared: max shared, ...": what device.extra.carveout records.
inline std::string carveout_table_text() {
  std::string out;
  for (const ProbeCarveout& row : carveout_rows())
    out += (out.empty() ? "" : ", ") + row.probe + ": " + carveout_name(row.carveout);
  return out;
}

}  // namespace roofprobe::cuda
