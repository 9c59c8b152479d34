// sweep.csv: every raw sample, one row each, appended and flushed per point. It is the record a
// run leaves behind; `roofprobe fit` rebuilds the machine file from it.
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"

namespace roofprobe {

inline constexpr const char* kUnderfilledFlag = "underfilled";
// Another process used the device while the point was measured (driver/run/sweep_runner.hpp).
inline constexpr const char* kForeignLoadFlag = "foreign-load";

struct Sample {
  int rank = 0;
  std::string backend;
  std::string probe;
  int point = 0;   // index of the point in the plan
  int sample = 0;  // index of the sample within the point
  Params params;
  double working_set_bytes = 0;
  double seconds = 0;
  double bytes = 0;
  double flops = 0;
  double transactions = 0;       // 32-byte sectors
  double warp_instructions = 0;  // GPU warp instructions the probe counts (0: not counted)
  double shared_wavefronts = 0;  // 128-byte shared-memory wavefronts
  double gbs = 0;                // derived: bytes / seconds / 1e9
  double gflops = 0;             // derived: flops / seconds / 1e9
  double gtxn_s = 0;             // derived: transactions / seconds / 1e9
  double gips = 0;               // derived: warp_instructions / seconds / 1e9
  double shared_gtxn_s = 0;      // derived: shared_wavefronts / seconds / 1e9
  // The SM/core clock: for a probe that declares Work::clock_cycles, cycles / seconds of this
  // sample; else measured during this launch where the backend did (CPU compute probes); else
  // measured by the backend right after the point (0: unknown).
  double clock_mhz = 0;
  int point_samples = 0;  // rows its point has: a resumed run knows the point is whole
  // "|"-separated: "noisy" (stopped by the timeout, not the noise bound), "clock-sag" (clock
  // below 90% of the run's), "underfilled" (fewer work items than threads: Work::underfilled);
  // "foreign-load" (another process used the device during the point, after retries);
  // empty when none applies. Only noisy and clock-sag make a sample unreliable (is_noisy).
  std::string flags;
  double power_w = 0;    // board power the device reported for this launch (0: not reported)
  std::string throttle;  // what lowered the clock during this launch ("sw-power+hw-thermal"; empty: nothing)
  // This launch's share of the energy the device's counter measured over its point's sampled
  // launches (the group's energy x seconds / the group's seconds), joules; 0: not measured.
  // Whether the group was long enough for the counter is decided by the fit (driver/fit/energy.hpp).
  double energy_j = 0;
  // The power limit the point ran under when `roofprobe run --power-caps` set one, watts; 0: the
  // limit the device had (the run's own ceilings). The fit keeps the two apart.
  double power_cap_w = 0;
  // Which phase of the run measured the row: empty for the sweep (the burst figures), or
  // "sustained:<ceiling>" for one window of the sustained phase of that ceiling ("sustained:FP64.FMA",
  // "sustained:DRAM"; docs/METHODOLOGY.md), or "energy:<target>:<k>/<n>" for one window of the
  // energy phase, which ran the point of ceiling or level <target> on k of the device's n workers
  // ("energy:L2:1/4"). A phase row holds one window: its work and seconds are those of all the
  // window's launches, `sample` numbers the windows, `point_samples` counts them.
  std::string phase;

  // "gbs" | "gflops" | "gtxn_s" | "gips" | "shared_gtxn_s" | "clock_mhz" | "seconds"
  double metric(const std::string& name) const;
};

// True when the sample carries a flag that makes its rate unreliable (noisy, foreign-load, or
// clock-sag where the power cap did not lower the clock); an underfilled sample is a reliable
// measurement of something else (see Sample::flags).
bool is_noisy(const Sample& s);
// True when another process used the device during the sample's point (flag foreign-load).
bool is_foreign_load(const Sample& s);
// Prefix of a sustained row's phase; what follows is the ceiling's name.
inline constexpr const char* kSustainedPhase = "sustained:";
// True for a row of the sustained phase (Sample::phase).
bool is_sustained(const Sample& s);
// The ceiling a sustained row belongs to ("FP64.FMA"); empty for a sweep row.
std::string sustained_ceiling(const Sample& s);
// Prefix of an energy-phase row's phase (Sample::phase); the row's work and rate are those of part
// of the device, so only the energy model reads it.
inline constexpr const char* kEnergyPhase = "energy:";
// What an energy-phase row ran: the ceiling or level it is for, and on how many of how many workers.
struct EnergyShare {
  std::string target;  // "FP64.FMA", "L2"
  int workers = 0;     // k
  int of = 0;          // n
};
// The share of an energy-phase row; nullopt for any other row. Throws std::invalid_argument on
// an energy phase that is malformed.
std::optional<EnergyShare> energy_share(const Sample& s);
// The phase text of a share: "energy:L2:1/4".
std::string energy_phase(const EnergyShare& share);
// The rows of the sweep proper (the burst figures), without the sustained or energy phase's.
std::vector<Sample> burst_samples(const std::vector<Sample>& samples);
// Adds each of the "+"-joined throttle `reasons` not yet in `into` (Sample::throttle), keeping
// first-seen order: the union of the reasons of several launches or samples.
void add_throttle_reasons(std::string& into, const std::string& reasons);
// True when the "+"-joined throttle reasons hold `reason` ("sw-power").
bool has_throttle_reason(const std::string& throttle, const std::string& reason);
// True when the throttle reasons name the board's power limit (NVML's sw-power or power-brake):
// a clock lowered by it is the work's ceiling under that limit, not a disturbance.
bool has_power_cap_reason(const std::string& throttle);
// True when the sample is flagged underfilled.
bool is_underfilled(const Sample& s);

// A run holds an exclusive flock on this file in its directory for as long as it writes there:
// a second run is refused, and `fit` knows a sweep is still being written.
inline constexpr const char* kRunLockFile = ".roofprobe.lock";
// True when a process holds the run lock of `dir` now (it is still writing the run there).
bool run_directory_in_use(const std::string& dir);

// The missing: line of a probe's `points` measured while `reason` ("other processes used the
// device"), `first` naming the first of them ("bandwidth mode=read;..."): one line per probe, not
// per point (a run beside a steady load would list hundreds).
std::string foreign_load_note(const std::string& probe, std::size_t points, const std::string& first,
                              const std::string& reason);
// One foreign_load_note per probe whose samples are flagged foreign-load, in the order first seen.
std::vector<std::string> foreign_load_gaps(const std::vector<Sample>& samples);

// The header line, without newline.
const std::string& sweep_csv_header();
std::string sweep_csv_row(const Sample& s);

// Appends rows, flushing (fflush + fsync) after each point so a crash loses at most the point
// being measured.
class SweepWriter {
 public:
  explicit SweepWriter(const std::string& path);  // creates with header, or appends if it exists
  ~SweepWriter();
  SweepWriter(const SweepWriter&) = delete;
  SweepWriter& operator=(const SweepWriter&) = delete;
  void append_point(const std::vector<Sample>& samples);

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
};

// Reads a sweep.csv; throws InputError naming file and line on malformed rows.
std::vector<Sample> read_sweep_csv(const std::string& path);

// Readies an interrupted run's sweep.csv for appending: cuts a torn last line (killed
// mid-write) and the rows of the last point if it has fewer rows than its point_samples (only
// the last point can be partial: points are appended in order). Returns the samples kept.
std::vector<Sample> prepare_sweep_for_resume(const std::string& path);

}  // namespace roofprobe
