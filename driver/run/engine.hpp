// The measurement engine: warm-up, launch sizing, repetitions until the noise criterion holds
// or the time budget ends, verification. Every rate is derived here from the probe's declared
// Work and the backend's timer, so no probe computes a rate.
#pragma once

#include <optional>
#include <functional>
#include <stdexcept>
#include <vector>

#include "driver/run/config.hpp"
#include "driver/model/sweep.hpp"
#include "kernels/contract/probe.hpp"

namespace roofprobe {

// nvbench-style stopping rule over per-launch times: stop when there are at least min_samples,
// at least min_seconds were spent sampling, and the relative standard deviation is at most
// max_noise; or, whatever the noise, once timeout_seconds were spent (with >= 3 samples, or
// min_samples if smaller).
class NoiseCriterion {
 public:
  explicit NoiseCriterion(const MeasurementSettings& settings) : s_(settings) {}
  void add(double seconds);
  bool done() const;
  bool converged() const;         // met the noise bound (not stopped by the timeout)
  double relative_noise() const;  // stdev / mean of the samples so far (0 with < 2)
  double elapsed() const { return elapsed_; }
  std::size_t count() const { return n_; }

 private:
  MeasurementSettings s_;
  std::size_t n_ = 0;
  double mean_ = 0, m2_ = 0;  // Welford's running mean and squared deviations
  double elapsed_ = 0;
};

struct PointMeasurement {
  std::vector<double> seconds;                    // one per sampled launch
  std::vector<LaunchTelemetry> launch_telemetry;  // per sampled launch: clock, power, throttle during it
  Work work;                                      // per launch, at the final repetition count
  double clock_mhz = 0;                           // measured right after sampling
  // Energy the device's counter measured from before the first sampled launch to after the
  // last (Backend::energy_joules); nullopt where there is no counter or it went backwards.
  std::optional<double> energy_j;
  bool converged = false;
  double noise = 0;
  Check check;
};

// Thrown by measure_point when `stop` says so between two launches: a stop signal is honoured
// within one launch (at most a few target_launch_seconds), not at the end of the point.
struct MeasurementStopped : std::runtime_error {
  MeasurementStopped() : std::runtime_error("stopped by a signal") {}
};

// `stop` is asked between launches (warm-up, sizing and sampling); true ends the point with
// MeasurementStopped and no samples.
PointMeasurement measure_point(Backend& backend, PreparedPoint& point, const MeasurementSettings& settings,
                               const std::function<bool()>& stop = {});

// Flags of a measured point (sweep.csv `flags`, '|'-separated): "noisy" when it stopped at the
// time budget above max_noise, "clock-sag" when the clock measured right after it was more than
// 10% below the run's reference clock (throttling). Empty when clean.
std::string point_flags(const PointMeasurement& m, double reference_clock_mhz);

// Rows for sweep.csv: rates from the work and each sample's time.
std::vector<Sample> samples_of(const PointMeasurement& m, const std::string& backend, const std::string& probe,
                               const Params& params, int point_index, int rank, double reference_clock_mhz = 0);

// The sustained phase (docs/METHODOLOGY.md): one point looped for seconds, in windows, until the
// device's power and clock settle. A window is a run of launches lasting about window_seconds.
struct SustainedWindow {
  double seconds = 0;  // the window's launches' time together
  int launches = 0;
  double clock_mhz = 0;            // median clock its launches ran at (0: not measured)
  double power_w = 0;              // mean board power its launches reported (0: not reported)
  std::string throttle;            // every throttle reason its launches recorded, "+"-joined
  std::optional<double> energy_j;  // the energy counter over the window (nullopt: none)
};

// Settled: the last kSettleWindows windows' rates lie within kSettleSpread of their mean
// ((max - min) / mean), and so do their clocks where every one of them measured a clock. A
// phase stops early once settled, but not before half its time: a CPU's turbo budget or a GPU's
// power limit can hold a few windows level before they fall.
inline constexpr int kSettleWindows = 3;
inline constexpr double kSettleSpread = 0.01;
// `rates` and `clocks` (0: not measured) one per window, oldest first.
bool windows_settled(const std::vector<double>& rates, const std::vector<double>& clocks);

struct SustainedMeasurement {
  std::vector<SustainedWindow> windows;
  Work work;  // per launch, at the repetition count the phase ran
  bool settled = false;
  Check check;  // the phase's result against the host's prediction (windows empty when not ok)
};

// Window length for a phase of `seconds`: a twentieth of it, so the settle rule sees the last
// seconds in several windows, and at least 20 ms, so a window spans many launches and the energy
// counter's updates.
double sustained_window_seconds(double seconds);

// Loops `point` for at most `seconds` (wall time), window by window, and verifies the result at
// the end, as measure_point does; stops early once windows_settled, but not before half the time
// nor before `least_seconds` (what the energy counter needs to resolve the phase's energy).
// `on_window` is told of each window (progress lines). `stop` is asked between launches, as in
// measure_point.
SustainedMeasurement measure_sustained(Backend& backend, PreparedPoint& point, const MeasurementSettings& settings,
                                       double seconds, const std::function<bool()>& stop = {},
                                       const std::function<void(const SustainedWindow&, const Work&)>& on_window = {},
                                       double least_seconds = 0);

// The sweep.csv rows of a looped point (one per window, with Sample::phase `phase`), on the
// point `point_index` it looped.
std::vector<Sample> phase_samples_of(const SustainedMeasurement& m, const std::string& backend,
                                     const std::string& probe, const Params& params, int point_index,
                                     const std::string& phase, int rank);
// The rows of a sustained phase of ceiling `ceiling`: phase "sustained:<ceiling>".
std::vector<Sample> sustained_samples_of(const SustainedMeasurement& m, const std::string& backend,
                                         const std::string& probe, const Params& params, int point_index,
                                         const std::string& ceiling, int rank);

}  // namespace roofprobe
