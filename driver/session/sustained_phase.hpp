// The sustained phase of a run (docs/METHODOLOGY.md): after the sweep, the point behind each FMA
// and tensor ceiling and behind the device-memory level is looped for seconds, until the
// device's power and clock settle, and its windows are appended to sweep.csv, from which `fit`
// publishes the sustained figures beside the burst ones.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"
#include "driver/run/config.hpp"
#include "driver/run/plan.hpp"

namespace roofprobe {

// A ceiling the phase loops, and the plan's point that gave its burst figure.
struct SustainedTarget {
  std::string ceiling;  // "FP64.FMA", "DRAM"
  const PlanPoint* point = nullptr;
};

// The rates the sustained phase is for: the FMA peaks and the tensor cores, whose power draw is
// what a power cap or a turbo budget limits. The no-FMA and mixed ceilings follow the same clock
// and are left to the burst figures.
bool is_sustained_compute(const std::string& ceiling);

// The plan's point behind a memory level's figure: the level's headline series at the largest
// working set inside its plateau, the one furthest from the cache before it; for a probe without
// a working-set axis (shared, system), the point with the level's parameters; nullptr when no
// point of the series lies inside.
const PlanPoint* level_point(const Plan& plan, const MemoryLevel& level);

// The targets, from the fit of the sweep's rows (`burst`, the fitted machine): each compute
// ceiling that is an FMA or tensor rate, at the point of its best; the level named after the
// device's memory, at the largest working set of its headline series inside the level. Targets
// whose rows are already in `samples` (a resumed run) are left out. `missing` gets a line for a
// level whose point cannot be found.
std::vector<SustainedTarget> sustained_targets(const Plan& plan, const Machine& burst,
                                               const std::vector<Sample>& samples, std::vector<std::string>& missing);

struct SustainedOutcome {
  std::vector<Sample> samples;
  std::vector<std::string> missing;
  int failures = 0;
  // Ceilings whose phase ran while other processes used the device (driver/run/sweep_runner.hpp,
  // foreign_load_reason): their windows are flagged foreign-load and never published.
  int foreign = 0;
};

// Measures every target for `seconds` at most, appending its windows to `sweep` as each ends.
// `report` gets one line per event (a start, an end, an error); `stop` is asked between launches.
SustainedOutcome run_sustained_phase(Backend& backend, const DeviceInfo& device,
                                     const std::vector<SustainedTarget>& targets, const MeasurementSettings& settings,
                                     double seconds, SweepWriter& sweep, const std::function<bool()>& stop,
                                     const std::function<void(const std::string&)>& report);

}  // namespace roofprobe
