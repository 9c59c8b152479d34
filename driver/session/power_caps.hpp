// roofprobe run --power-caps W1,W2,...: the ceilings move under a power cap, so after the run's
// own plan the FMA, tensor and device-memory points are measured again under each cap the user
// names, by the same engine, each sample carrying the cap (sweep.csv power_cap_w); the fit
// keeps them apart (machine file power_caps:). The limit is a machine-wide setting that outlives
// the process: it is changed only when asked, only after it is known that every cap is allowed,
// and set back to what it was on every exit the process sees (docs/ENERGY.md).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "driver/run/plan.hpp"
#include "driver/run/sweep_runner.hpp"

namespace roofprobe {

// The watts of --power-caps, in the order given: positive, finite, no cap twice. Throws
// InputError naming the bad one.
std::vector<double> parse_power_caps(const std::string& text);

// The backend's power-limit control, or InputError with the backend's reason. Reads nothing.
PowerLimitControl& power_limit_control_of(Backend& backend);

// Checks, before anything is measured, that every cap lies inside the device's constraints and
// that the user may change the limit; returns the limit the run restores. Throws InputError
// (one line: the cap and the range; root needed; the driver's refusal). Never changes the limit.
double check_power_caps(PowerLimitControl& control, const std::vector<double>& caps);

// The points of `plan` measured again under each cap: the compute ceilings named *.FMA and
// TENSOR.*, and the device-memory sizes (working sets of at least 4 x the largest cache, in the
// level fit's primary series). Indices stay the plan's.
Plan power_cap_plan(const Plan& plan, const DeviceInfo& device);

// Holds the device's limit while caps are set: destroyed (a normal end, an exception), it sets
// the original limit again. While it lives, a second SIGINT/SIGTERM does not kill the run before
// that (driver/run/signals.hpp).
class PowerLimitGuard {
 public:
  PowerLimitGuard(PowerLimitControl& control, double original_w, std::function<void(const std::string&)> report);
  ~PowerLimitGuard();
  PowerLimitGuard(const PowerLimitGuard&) = delete;
  PowerLimitGuard& operator=(const PowerLimitGuard&) = delete;
  void set(double watts);
  // Sets the original limit again (once); false, with the reason reported, when the driver refused.
  bool restore();

 private:
  PowerLimitControl& control_;
  double original_w_;
  std::function<void(const std::string&)> report_;
  bool changed_ = false;
};

// Measures `cap_plan` under each cap in turn, appending to `sweep`; the limit is `original_w`
// again when it returns or throws. Stops between caps when a stop signal came (stopped_by).
SweepOutcome run_power_caps(Backend& backend, PowerLimitControl& control, double original_w, const DeviceInfo& device,
                            const Plan& cap_plan, const std::vector<double>& caps, const MeasurementSettings& settings,
                            SweepWriter& sweep, const SweepHooks& hooks);

}  // namespace roofprobe
