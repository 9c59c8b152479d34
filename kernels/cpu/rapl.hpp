// The CPU's energy counters through Linux's powercap interface (RAPL: Running Average Power
// Limit), read from sysfs: /sys/class/powercap/intel-rapl:<N>/ is one package (its `name` is
// "package-<N>"), /sys/class/powercap/intel-rapl:<N>:<M>/ a part of it ("core", "uncore",
// "dram"). Each zone has `energy_uj`, a counter in microjoules that wraps at
// `max_energy_range_uj`. AMD processors are exposed through the same interface by the kernel's
// rapl driver. The energy of the device is the packages plus their DRAM domains; "core" and
// "uncore" are already inside the package, and "psys" (the platform) contains the packages, so
// neither is added.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace roofprobe::cpu {

class RaplEnergy {
 public:
  // `root` is the powercap class directory; tests point it at a tree of their own.
  explicit RaplEnergy(std::string root = "/sys/class/powercap");

  // Empty when the counters can be read; otherwise why not (no powercap interface, as in most
  // virtual machines; energy_uj readable by root only, as Linux has it since 5.10).
  const std::string& unavailable_reason() const { return why_not_; }
  // The zones summed, "package-0+dram".
  std::string domains() const;
  // Joules since this object was made, over every zone, each corrected for wrap-around (which
  // needs a reading at least once per wrap: about an hour at 60 W for a 2^32 uJ range).
  // nullopt when unavailable or a zone stopped being readable.
  std::optional<double> joules();

 private:
  struct Zone {
    std::string name;
    std::string energy_path;
    std::uint64_t range_uj = 0;  // max_energy_range_uj: the counter wraps after this value
    std::uint64_t last_uj = 0;
    std::uint64_t total_uj = 0;  // accumulated since the first reading
  };
  std::vector<Zone> zones_;
  std::string why_not_;
};

}  // namespace roofprobe::cpu
