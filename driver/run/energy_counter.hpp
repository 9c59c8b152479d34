// The device's energy counter, characterized once at the start of a run: what it measures, how
// often it updates, and the device's power at rest. The fit uses the update interval to decide
// which points were sampled long enough for their energy to mean something.
#pragma once

#include "kernels/contract/probe.hpp"

namespace roofprobe {

// device.extra keys the characterization writes (read by driver/fit/energy.cpp).
inline constexpr const char* kEnergyCounterKey = "energy_counter";        // what, or "none: why"
inline constexpr const char* kEnergyUpdateKey = "energy_update_seconds";  // the counter's update interval
inline constexpr const char* kIdlePowerKey = "idle_power_w";              // power at rest

// Reads the counter every millisecond for `idle_seconds` while nothing runs: the interval
// between its changes is its update interval, and the energy between its first and last change
// over that time is the idle power. Writes the keys above into device.extra; without a counter,
// kEnergyCounterKey says "none: " and why.
void describe_energy_counter(Backend& backend, DeviceInfo& device, double idle_seconds = 0.5);

}  // namespace roofprobe
