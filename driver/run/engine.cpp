#include "driver/run/engine.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace roofprobe {

void NoiseCriterion::add(double seconds) {
  ++n_;
  double delta = seconds - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (seconds - mean_);
  elapsed_ += seconds;
}

double NoiseCriterion::relative_noise() const {
  if (n_ < 2 || mean_ <= 0) return 0;
  return std::sqrt(m2_ / static_cast<double>(n_ - 1)) / mean_;
}

bool NoiseCriterion::converged() const {
  return n_ >= static_cast<std::size_t>(s_.min_samples) && elapsed_ >= s_.min_seconds &&
         relative_noise() <= s_.max_noise;
}

bool NoiseCriterion::done() const {
  if (converged()) return true;
  std::size_t floor = std::min<std::size_t>(3, static_cast<std::size_t>(s_.min_samples));
  return elapsed_ >= s_.timeout_seconds && n_ >= floor;
}

namespace {

// Raises the repetitions per launch until one launch lasts about the target, so the timer's
// resolution and the launch overhead are small against the work. Each round takes the fastest
// of a few launches: one launch slowed by a page fault or a preempted thread must not stop the
// sizing early (the point would then be measured at one repetition, all overhead).
// One launch, unless a stop was asked for since the last one.
double launch(Backend& backend, PreparedPoint& point, const std::function<bool()>& stop) {
  if (stop && stop()) throw MeasurementStopped();
  return backend.time_launch(point);
}

double fastest_launch(Backend& backend, PreparedPoint& point, int launches, const std::function<bool()>& stop) {
  double best = launch(backend, point, stop);
  for (int i = 1; i < launches; ++i) best = std::min(best, launch(backend, point, stop));
  return best;
}

double size_launches(Backend& backend, PreparedPoint& point, double target, const std::function<bool()>& stop) {
  double t = fastest_launch(backend, point, 3, stop);
  for (int round = 0; round < 8 && t < 0.5 * target; ++round) {
    double scale = std::min(target / std::max(t, 1e-7), 1e4);
    auto reps = static_cast<std::int64_t>(std::ceil(static_cast<double>(point.repetitions()) * scale));
    if (reps <= point.repetitions()) break;  // the probe has a fixed amount of work per launch
    point.set_repetitions(reps);
    t = fastest_launch(backend, point, 2, stop);
  }
  // A launch must be dominated by its work, not by a fixed overhead (a thread woken from sleep
  // on a busy or virtualised machine can add milliseconds per launch): doubling the repetitions
  // must nearly double the time. If not, keep doubling until it does.
  for (int round = 0; round < 24; ++round) {
    const std::int64_t reps = point.repetitions();
    point.set_repetitions(reps * 2);
    if (point.repetitions() == reps) break;  // fixed work per launch
    double doubled = fastest_launch(backend, point, 2, stop);
    if (doubled >= 1.6 * t) {
      point.set_repetitions(reps);  // proportional: the previous size was fine
      break;
    }
    t = doubled;
    if (t > 20 * target) break;
  }
  return t;
}

}  // namespace

PointMeasurement measure_point(Backend& backend, PreparedPoint& point, const MeasurementSettings& s,
                               const std::function<bool()>& stop) {
  PointMeasurement m;
  // Warm-up: first launches pay for page faults, cache and TLB misses, clock ramp-up.
  double warm = size_launches(backend, point, s.target_launch_seconds, stop);
  while (warm < s.warmup_seconds) warm += launch(backend, point, stop);

  NoiseCriterion criterion(s);
  const std::optional<double> energy_before = backend.energy_joules();
  while (!criterion.done()) {
    double t = launch(backend, point, stop);
    m.seconds.push_back(t);
    m.launch_telemetry.push_back(backend.last_launch_telemetry());
    criterion.add(t);
  }
  const std::optional<double> energy_after = energy_before ? backend.energy_joules() : std::nullopt;
  if (energy_before && energy_after && *energy_after >= *energy_before) m.energy_j = *energy_after - *energy_before;
  m.work = point.work();
  m.clock_mhz = backend.measure_clock_mhz();
  m.converged = criterion.converged();
  m.noise = criterion.relative_noise();
  m.check = point.verify();
  return m;
}

std::string point_flags(const PointMeasurement& m, double reference_clock_mhz) {
  std::string flags;
  if (!m.converged) flags = "noisy";
  constexpr double kSag = 0.9;
  // A clock the device's own power limit lowered while this work ran is the work's ceiling under
  // that limit (published with limited_by: power cap), not a disturbance of it.
  const bool own_power_limit = std::any_of(m.launch_telemetry.begin(), m.launch_telemetry.end(),
                                           [](const LaunchTelemetry& t) { return has_power_cap_reason(t.throttle); });
  if (reference_clock_mhz > 0 && m.clock_mhz > 0 && m.clock_mhz < kSag * reference_clock_mhz && !own_power_limit)
    flags += (flags.empty() ? "" : "|") + std::string("clock-sag");
  if (m.work.underfilled) flags += (flags.empty() ? "" : "|") + std::string(kUnderfilledFlag);
  return flags;
}

namespace {

// A row's identity, work and rates: `work` done in `seconds` by the sample numbered `index` of
// the point; the caller adds the clock, power, energy and flags.
Sample work_sample(const Work& work, double seconds, const std::string& backend, const std::string& probe,
                   const Params& params, int point_index, int index, int rank) {
  Sample s;
  s.rank = rank;
  s.backend = backend;
  s.probe = probe;
  s.point = point_index;
  s.sample = index;
  s.params = params;
  s.working_set_bytes = work.working_set_bytes;
  s.seconds = seconds;
  s.bytes = work.bytes();
  s.flops = work.flops;
  s.transactions = work.transactions;
  s.warp_instructions = work.warp_instructions;
  s.shared_wavefronts = work.shared_wavefronts;
  const Rates r = rates_of(work, seconds);
  s.gbs = r.gbs;
  s.gflops = r.gflops;
  s.gtxn_s = r.gtxn_s;
  s.gips = r.gips;
  s.shared_gtxn_s = r.shared_gtxn_s;
  return s;
}

}  // namespace

std::vector<Sample> samples_of(const PointMeasurement& m, const std::string& backend, const std::string& probe,
                               const Params& params, int point_index, int rank, double reference_clock_mhz) {
  const std::string flags = point_flags(m, reference_clock_mhz);
  // The group's energy is shared among its launches by their time: the counter is read only
  // around the group, because one launch is shorter than the counter's update interval.
  double group_seconds = 0;
  for (double t : m.seconds) group_seconds += t;
  std::vector<Sample> out;
  out.reserve(m.seconds.size());
  for (std::size_t i = 0; i < m.seconds.size(); ++i) {
    Sample s = work_sample(m.work, m.seconds[i], backend, probe, params, point_index, static_cast<int>(i), rank);
    // A clock probe's launch lasts a known number of cycles: its clock is that over the time.
    // Otherwise the clock measured during this launch where the backend measured one, else the
    // reading taken right after the point.
    const LaunchTelemetry during = i < m.launch_telemetry.size() ? m.launch_telemetry[i] : LaunchTelemetry{};
    s.clock_mhz = m.work.clock_cycles > 0 ? m.work.clock_cycles / s.seconds / 1e6
                  : during.clock_mhz > 0  ? during.clock_mhz
                                          : m.clock_mhz;
    s.power_w = during.power_w;
    s.throttle = during.throttle;
    if (m.energy_j && group_seconds > 0) s.energy_j = *m.energy_j * s.seconds / group_seconds;
    s.point_samples = static_cast<int>(m.seconds.size());
    s.flags = flags;
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

// (max - min) / mean of the last n values; infinite when the mean is not positive.
double last_spread(const std::vector<double>& values, std::size_t n) {
  const auto first = values.end() - static_cast<std::ptrdiff_t>(n);
  const auto [lo, hi] = std::minmax_element(first, values.end());
  double sum = 0;
  for (auto it = first; it != values.end(); ++it) sum += *it;
  const double mean = sum / static_cast<double>(n);
  return mean > 0 ? (*hi - *lo) / mean : std::numeric_limits<double>::infinity();
}

}  // namespace

bool windows_settled(const std::vector<double>& rates, const std::vector<double>& clocks) {
  const auto n = static_cast<std::size_t>(kSettleWindows);
  if (rates.size() < n) return false;
  if (!(last_spread(rates, n) <= kSettleSpread)) return false;
  if (clocks.size() < n) return true;
  const bool clock_known =
      std::all_of(clocks.end() - static_cast<std::ptrdiff_t>(n), clocks.end(), [](double mhz) { return mhz > 0; });
  return !clock_known || last_spread(clocks, n) <= kSettleSpread;
}

double sustained_window_seconds(double seconds) { return std::max(seconds / 20, 0.02); }

SustainedMeasurement measure_sustained(Backend& backend, PreparedPoint& point, const MeasurementSettings& s,
                                       double seconds, const std::function<bool()>& stop,
                                       const std::function<void(const SustainedWindow&, const Work&)>& on_window,
                                       double least_seconds) {
  SustainedMeasurement m;
  // The same launch length as the sweep's: the loop is the point as the sweep measured it. The
  // phase's time counts from its first window.
  size_launches(backend, point, s.target_launch_seconds, stop);
  const auto start = std::chrono::steady_clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  m.work = point.work();
  const double window = sustained_window_seconds(seconds);
  std::vector<double> rates, clocks;
  // One counter reading ends a window and starts the next, so the windows' energies add up to the
  // phase's with the counter's granularity at its two ends only.
  std::optional<double> energy_before = backend.energy_joules();
  while (elapsed() < seconds) {
    SustainedWindow w;
    std::vector<double> mhz;
    double watts = 0;
    int powered = 0;
    while (w.seconds < window) {
      w.seconds += launch(backend, point, stop);
      ++w.launches;
      const LaunchTelemetry t = backend.last_launch_telemetry();
      if (t.clock_mhz > 0) mhz.push_back(t.clock_mhz);
      if (t.power_w > 0) {
        watts += t.power_w;
        ++powered;
      }
      add_throttle_reasons(w.throttle, t.throttle);
    }
    const std::optional<double> energy_after = backend.energy_joules();
    if (energy_before && energy_after && *energy_after >= *energy_before) w.energy_j = *energy_after - *energy_before;
    energy_before = energy_after;
    if (mhz.size() == static_cast<std::size_t>(w.launches)) {
      std::sort(mhz.begin(), mhz.end());
      w.clock_mhz = mhz[mhz.size() / 2];
    }
    if (powered > 0) w.power_w = watts / powered;
    rates.push_back(w.launches * (m.work.flops > 0 ? m.work.flops : m.work.bytes()) / w.seconds);
    clocks.push_back(w.clock_mhz);
    m.windows.push_back(w);
    if (on_window) on_window(w, m.work);
    m.settled = windows_settled(rates, clocks);
    if (m.settled && elapsed() >= std::max(seconds / 2, least_seconds)) break;
  }
  // Checked once at the end, as a sweep point is: the result carries every launch of the phase
  // (a checksum over all passes), and a check between windows would idle the device, letting
  // its power and clock recover in the middle of the loop. A mismatch discards every window.
  m.check = point.verify();
  if (!m.check.ok) m.windows.clear();
  return m;
}

std::vector<Sample> sustained_samples_of(const SustainedMeasurement& m, const std::string& backend,
                                         const std::string& probe, const Params& params, int point_index,
                                         const std::string& ceiling, int rank) {
  return phase_samples_of(m, backend, probe, params, point_index, kSustainedPhase + ceiling, rank);
}

std::vector<Sample> phase_samples_of(const SustainedMeasurement& m, const std::string& backend,
                                     const std::string& probe, const Params& params, int point_index,
                                     const std::string& phase, int rank) {
  std::vector<Sample> out;
  for (std::size_t i = 0; i < m.windows.size(); ++i) {
    const SustainedWindow& w = m.windows[i];
    Work work = m.work;
    const double n = w.launches;
    work.bytes_read *= n;
    work.bytes_written *= n;
    work.flops *= n;
    work.transactions *= n;
    work.shared_wavefronts *= n;
    work.warp_instructions *= n;
    Sample s = work_sample(work, w.seconds, backend, probe, params, point_index, static_cast<int>(i), rank);
    s.clock_mhz = w.clock_mhz;
    s.power_w = w.power_w;
    s.throttle = w.throttle;
    s.energy_j = w.energy_j.value_or(0);
    s.point_samples = static_cast<int>(m.windows.size());
    if (m.work.underfilled) s.flags = kUnderfilledFlag;
    s.phase = phase;
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace roofprobe
