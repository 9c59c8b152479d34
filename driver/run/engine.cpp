#include "driver/run/engine.hpp"

#include <algorithm>
#include <cmath>

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
  if (reference_clock_mhz > 0 && m.clock_mhz > 0 && m.clock_mhz < kSag * reference_clock_mhz)
    flags += (flags.empty() ? "" : "|") + std::string("clock-sag");
  if (m.work.underfilled) flags += (flags.empty() ? "" : "|") + std::string(kUnderfilledFlag);
  return flags;
}

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
    Sample s;
    s.rank = rank;
    s.backend = backend;
    s.probe = probe;
    s.point = point_index;
    s.sample = static_cast<int>(i);
    s.params = params;
    s.working_set_bytes = m.work.working_set_bytes;
    s.seconds = m.seconds[i];
    s.bytes = m.work.bytes();
    s.flops = m.work.flops;
    s.transactions = m.work.transactions;
    s.warp_instructions = m.work.warp_instructions;
    s.shared_wavefronts = m.work.shared_wavefronts;
    const Rates r = rates_of(m.work, s.seconds);
    s.gbs = r.gbs;
    s.gflops = r.gflops;
    s.gtxn_s = r.gtxn_s;
    s.gips = r.gips;
    s.shared_gtxn_s = r.shared_gtxn_s;
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

}  // namespace roofprobe
