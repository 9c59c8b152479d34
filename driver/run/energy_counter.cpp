#include "driver/run/energy_counter.hpp"

#include <chrono>
#include <optional>
#include <thread>

#include "driver/model/csv_text.hpp"

namespace roofprobe {

void describe_energy_counter(Backend& backend, DeviceInfo& device, double idle_seconds) {
  const EnergyCounterInfo info = backend.energy_counter();
  if (!info.available) {
    device.extra[kEnergyCounterKey] = "none: " + info.why_not;
    return;
  }
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  std::optional<double> first = backend.energy_joules();
  if (!first) {
    device.extra[kEnergyCounterKey] = "none: the counter could not be read";
    return;
  }
  // Times and values of the counter's changes: between the first change and the last, the
  // energy is whole update intervals, so the quantization of the ends does not enter.
  double last_value = *first;
  int changes = 0;
  double first_change_s = 0, last_change_s = 0, first_change_j = 0, last_change_j = 0;
  for (;;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    const double t = std::chrono::duration<double>(Clock::now() - start).count();
    const std::optional<double> now = backend.energy_joules();
    if (!now) {
      device.extra[kEnergyCounterKey] = "none: the counter stopped being readable";
      return;
    }
    if (*now != last_value) {
      if (changes == 0) {
        first_change_s = t;
        first_change_j = *now;
      }
      ++changes;
      last_change_s = t;
      last_change_j = *now;
      last_value = *now;
    }
    if (t >= idle_seconds) break;
  }
  device.extra[kEnergyCounterKey] = info.what;
  if (changes >= 2) {
    const double span = last_change_s - first_change_s;
    device.extra[kEnergyUpdateKey] = csv_text::number_text(span / (changes - 1), 6);
    if (span > 0) device.extra[kIdlePowerKey] = csv_text::number_text((last_change_j - first_change_j) / span, 6);
  } else {
    // Fewer than two changes in the whole window: the interval is at least the window.
    device.extra[kEnergyUpdateKey] = csv_text::number_text(idle_seconds, 6);
  }
}

}  // namespace roofprobe
