// Runs a plan's points one after another: prepare, measure, verify, append to sweep.csv. It owns
// what happens when a point cannot be measured, so a long run never loses what it has:
//   - a stop signal: the remaining points are listed as not measured;
//   - DeviceOutOfMemory: the probe's points of this footprint and larger are skipped (the sweep
//     stops at the largest size that fits) and the run goes on;
//   - DeviceFault (a sticky GPU error): the probe ends, the backend tries recover(); when that
//     fails the run stops, keeping and reporting everything measured so far;
//   - any other error of a point (a launch failure, a failed verification): that point is
//     reported and the sweep goes on;
//   - another process used the device during a point (Backend::foreign_use): the point is
//     measured again, up to twice; if the load stays, its samples are flagged "foreign-load"
//     (unreliable, as noisy ones are) and the point is named under missing: with the process.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "driver/run/config.hpp"
#include "driver/run/plan.hpp"
#include "driver/model/sweep.hpp"

namespace roofprobe {

struct SweepOutcome {
  std::vector<Sample> samples;            // of the points measured now
  std::vector<std::string> missing;       // for machine.missing: what was not measured, and why
  std::vector<std::string> not_measured;  // points left out by a stop signal
  int failures = 0;                       // points that failed (the machine file is incomplete)
  int stopped_by = 0;                     // the signal that stopped the sweep, or 0
  int foreign_points = 0;                 // points measured beside another process's load, after retries
  bool device_lost = false;               // a device fault the backend could not recover from
};

struct SweepHooks {
  std::function<int()> stop_requested = [] { return 0; };
  std::function<void(int done, const std::string& label)> progress = [](int, const std::string&) {};
  std::function<void(const std::string& line)> report;  // one message line per event (stderr)
  // The power limit the points run under when the run set one (--power-caps), watts, written into
  // each sample; 0: the device's own limit.
  double power_cap_w = 0;
};

// Why a point measured between the two readings `before` and `after`, `seconds` apart, was not
// alone on the device ("other processes used 1.3 of the run's cores: 4242 stress-ng"); empty
// when it was, or when the backend cannot tell.
std::string foreign_load_reason(const ForeignUse& before, const ForeignUse& after, double seconds);

// The lines for missing: that name the points a stop left out (`labels`, as not_measured holds
// them), one line per probe: "bandwidth: 120 points not measured (interrupted by SIGINT), the
// first: bandwidth op=read ...". A line per point would bury every real gap under hundreds.
// `why` is the parenthesis ("interrupted", "interrupted by SIGTERM"). A label with no parameters
// (a power cap's, say) is its own line.
std::vector<std::string> not_measured_lines(const std::vector<std::string>& labels, const std::string& why);

// Measures every point of `plan` not in `done`, appending each to `sweep` as it completes.
SweepOutcome run_sweep(Backend& backend, const DeviceInfo& device, const Plan& plan,
                       const MeasurementSettings& settings, const std::set<int>& done, SweepWriter& sweep,
                       const SweepHooks& hooks, int rank = 0);

}  // namespace roofprobe
