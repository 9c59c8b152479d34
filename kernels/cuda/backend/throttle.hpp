// NVML's clock throttle reasons (nvmlClocksThrottleReason*, "clocks event reasons" in newer
// NVML), as the sweep records them: the reasons that lowered the SM clock while a launch ran.
// Plain C++, host-tested; the bits are NVML's documented values.
#pragma once

#include <cstdint>
#include <string>

namespace roofprobe::cuda {

struct ThrottleReason {
  std::uint64_t bit;
  const char* name;
  bool slows;  // lowers the clock below what the device would run: the measurement says so
};

inline constexpr ThrottleReason kThrottleReasons[] = {
    {0x1, "idle", false},             // nothing running: not a throttle of a measurement
    {0x2, "app-clocks", false},       // the application-clocks setting: a configuration
    {0x4, "sw-power", true},          // the software power cap
    {0x8, "hw-slowdown", true},       // hardware slowdown (thermal or power brake, external)
    {0x10, "sync-boost", false},      // held with other GPUs of a sync-boost group
    {0x20, "sw-thermal", true},       // software thermal slowdown
    {0x40, "hw-thermal", true},       // hardware thermal slowdown
    {0x80, "power-brake", true},      // hardware power-brake slowdown
    {0x100, "display-clocks", false}  // display clock setting
};

// "sw-power+hw-thermal": the clock-lowering reasons in `mask`, in the table's order; empty when
// none of them is set.
inline std::string throttle_text(std::uint64_t mask) {
  std::string out;
  for (const ThrottleReason& r : kThrottleReasons)
    if (r.slows && (mask & r.bit) != 0) out += (out.empty() ? "" : "+") + std::string(r.name);
  return out;
}

}  // namespace roofprobe::cuda
