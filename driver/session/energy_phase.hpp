// The energy phase of a run (docs/METHODOLOGY.md): after the sustained phase, the point behind
// each FMA and tensor ceiling and behind each private cache level is run on part of the device
// (k of its n workers) for as long as the energy counter needs. At k < n the same work goes at
// a lower rate, so the energy model (driver/fit/energy_model.hpp) can tell the energy of the
// work from the constant power, which one rate per ceiling cannot: E = W eps + pi0 T has two
// unknowns per ceiling, and every point of one ceiling at full speed has the same W / T.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"
#include "driver/run/config.hpp"
#include "driver/run/plan.hpp"

namespace roofprobe {

// One ceiling or level the phase runs, at each of `workers` (of `of`).
struct EnergyTarget {
  std::string target;  // "FP64.FMA", "L2"
  const PlanPoint* point = nullptr;
  // A private cache level's point keeps each worker's share of the data, so the level stays the
  // one it measures: its working_set_bytes is scaled by k / n. A shared level runs on all n.
  bool scale_working_set = false;
  std::vector<int> workers;
  int of = 0;
};

// How long each share runs: long enough for kEnergyStretchesPerShare observations, each spanning
// the counter's rule (driver/fit/energy.hpp) with a tenth to spare, and at least
// kEnergyShareLeastSeconds: a change in the active cores moves their clocks, and a power limit's
// average spans about a second. The fit needs three observations per coefficient, and a target
// adds one coefficient: two shares of two observations each (and its sustained phase, or a third
// share) give it more than that.
inline constexpr int kEnergyStretchesPerShare = 2;
inline constexpr double kEnergyShareLeastSeconds = 1.0;
double energy_share_seconds(const DeviceInfo& device);

// How the phase puts a point on k of the device's n workers.
struct WorkerSplit {
  int workers = 0;  // n: the device's workers (CPU threads, GPU SMs)
  // Where the backend confines the launches to k workers (Backend::confine: a GPU's SMs), the
  // workers a share that asks for k gets (Backend::confinable_workers: a GPU partitions its SMs
  // in steps). Empty: the backend does not confine, and only the probes that spread their work
  // over DeviceInfo::threads run on part of the device (Probe::runs_on_fewer_workers), on k.
  std::function<int(int)> granted;
  bool backend_confines() const { return static_cast<bool>(granted); }
};

// The split of `device` (described by `backend`): its SMs where the backend can confine launches
// to some of them, else its threads.
WorkerSplit worker_split(Backend& backend, const DeviceInfo& device);

// The shares a target runs at: about a quarter, a half and all of n workers, each at least one,
// as `granted` rounds them, and none twice; without n itself where `have_full` (its sustained
// phase measured it).
std::vector<int> energy_workers(int n, bool have_full, const std::function<int(int)>& granted = {});

// True when each worker has an instance of the cache `level` of its own (one per core or SM), so
// that k workers' share of a working set is served at k / n of the level's rate; false for a
// level they share, the device memory, or a level the device does not describe.
bool private_level(const DeviceInfo& device, const std::string& level);

// The targets from the fit of the sweep's rows (`burst`): each FMA and tensor ceiling at the
// point of its best, each empirical memory level at its headline point (level_point); n is
// split.workers. Compute ceilings and private levels (private_level) run at energy_workers'
// shares; a shared level (the device memory, a last-level cache) on all
// n workers only, and not at all where the sustained phase ran it: one rate of its own is
// enough once the other targets' shares have told the constant power apart. Shares already in
// `samples` (a resumed run) are left out, and so is a target with none left. Where some targets
// run, `missing` gets one line for the targets whose probe cannot run on part of the device
// (neither the backend nor Probe::runs_on_fewer_workers puts it there) or that have one worker,
// and one for levels without a point;
// where none can run, nothing (the energy model's own line says why it is not fitted).
std::vector<EnergyTarget> energy_targets(const Plan& plan, const Machine& burst, const std::vector<Sample>& samples,
                                         const WorkerSplit& split, std::vector<std::string>& missing);

struct EnergyPhaseOutcome {
  std::vector<Sample> samples;
  std::vector<std::string> missing;
  int failures = 0;
  int foreign = 0;  // shares measured while other processes used the device (flagged, never fitted)
};

// Runs every target at each of its shares for `seconds`, appending the windows to `sweep` (phase
// "energy:<target>:<k>/<n>") as each share ends. Where split.backend_confines(), a share of k < n
// workers runs inside backend.confine(k); where the backend cannot, the shares that needed it
// are named in one line under missing:. `report` gets one line per event; `stop` is asked
// between launches.
EnergyPhaseOutcome run_energy_phase(Backend& backend, const DeviceInfo& device, const WorkerSplit& split,
                                    const std::vector<EnergyTarget>& targets, const MeasurementSettings& settings,
                                    double seconds, SweepWriter& sweep, const std::function<bool()>& stop,
                                    const std::function<void(const std::string&)>& report);

}  // namespace roofprobe
