// The sustained figures from the sustained phase's windows (docs/METHODOLOGY.md).
#include <algorithm>
#include <cmath>
#include <map>

#include "driver/fit/energy.hpp"
#include "driver/fit/feed_fitting.hpp"
#include "driver/fit/fit.hpp"
#include "driver/fit/median.hpp"
#include "driver/fit/student_t.hpp"
#include "driver/run/engine.hpp"

namespace roofprobe {

namespace {

// The 95% interval of `mean`, the mean of `values` (Student's t). Settled rates agree within 1%,
// so theirs stays well above zero; the windows' energies per FLOP or byte are not held to the
// settle rule (a CPU package's counter also counts other processes' cores), and where normal noise
// would put the lower bound at or below 0 the noise is taken as log-normal (t_interval95). Values
// identical in every window (a coarse timer) still get a positive width.
Interval mean_interval(const std::vector<double>& values, double mean) {
  const Interval i = t_interval95(values, mean);
  return {std::min(i.lo, mean * (1 - 1e-9)), std::max(i.hi, mean * (1 + 1e-9))};
}

SustainedFigure figure_of(const std::vector<const Sample*>& windows, bool compute, const DeviceInfo& device) {
  std::vector<double> rates, clocks;
  double seconds = 0;
  for (const Sample* w : windows) {
    rates.push_back(compute ? w->gflops : w->gbs);
    clocks.push_back(w->clock_mhz);
    seconds += w->seconds;
  }
  SustainedFigure f;
  f.windows = static_cast<int>(windows.size());
  f.seconds = seconds;
  f.settled = windows_settled(rates, clocks);
  // The figure rests on the last windows: the settled ones, or, unsettled, the latest there are.
  // Its limit is theirs too: the phase's first windows still carry the power of the phase before
  // (an H200's TF32 phase began throttled at 647 W and settled at 1980 MHz and 494 W).
  const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(kSettleWindows), windows.size());
  const auto last = windows.end() - static_cast<std::ptrdiff_t>(n);
  std::string throttled;
  for (auto it = last; it != windows.end(); ++it) add_throttle_reasons(throttled, (*it)->throttle);
  f.throttled = throttled;
  double sum = 0, watts = 0;
  int powered = 0;
  std::vector<double> mhz;
  for (auto it = last; it != windows.end(); ++it) {
    const Sample& w = **it;
    sum += compute ? w.gflops : w.gbs;
    if (w.clock_mhz > 0) mhz.push_back(w.clock_mhz);
    if (w.power_w > 0) {
      watts += w.power_w;
      ++powered;
    }
  }
  f.rate = sum / static_cast<double>(n);
  f.clock_mhz = mhz.empty() ? 0 : median_of(mhz);
  f.limited_by = fitting::limit_of(throttled, device, f.clock_mhz);
  f.power_w = powered > 0 ? watts / powered : 0;  // the board's reported power, unless the counter tells
  // The energy figures rest on the last windows that together span the counter's resolution
  // (kEnergyIntervalsPerPoint updates; the windows share readings, so only the stretch's two ends
  // are uncertain): a 0.25 s window of a counter updating every 0.1 s is off by up to 40% alone.
  const double least = energy_span_seconds(device);
  auto first = last;
  double energy_seconds = 0;
  for (auto it = last; it != windows.end(); ++it) energy_seconds += (*it)->seconds;
  while (energy_seconds < least && first != windows.begin()) energy_seconds += (*--first)->seconds;
  double energy = 0, work = 0;
  std::vector<double> pj;  // each window's picojoules per FLOP or byte, for the interval
  bool all_energy = energy_seconds >= least;
  for (auto it = first; all_energy && it != windows.end(); ++it) {
    const double w_work = compute ? (*it)->flops : (*it)->bytes;
    all_energy = (*it)->energy_j > 0 && w_work > 0;
    energy += (*it)->energy_j;
    work += w_work;
    if (all_energy) pj.push_back((*it)->energy_j / w_work * 1e12);
  }
  if (all_energy && energy_seconds > 0) {
    f.power_w = energy / energy_seconds;
    f.pj_per_unit = energy / work * 1e12;
  }
  if (f.settled && n > 1) {
    std::vector<double> rate_values;
    for (auto it = last; it != windows.end(); ++it) rate_values.push_back(compute ? (*it)->gflops : (*it)->gbs);
    f.ci95 = mean_interval(rate_values, f.rate);
    if (f.pj_per_unit > 0 && pj.size() > 1) f.pj_ci95 = mean_interval(pj, f.pj_per_unit);
  }
  return f;
}

}  // namespace

void fit_sustained(const std::vector<Sample>& sustained_rows, Machine& machine) {
  // Per ceiling, the windows in the order they were measured (a resumed run appends whole
  // phases, so one ceiling's windows are never split).
  std::map<std::string, std::vector<const Sample*>> by_ceiling;
  for (const Sample& s : sustained_rows)
    if (is_sustained(s)) by_ceiling[sustained_ceiling(s)].push_back(&s);
  for (auto& [name, windows] : by_ceiling) {
    std::stable_sort(windows.begin(), windows.end(),
                     [](const Sample* a, const Sample* b) { return a->sample < b->sample; });
    // Windows measured beside another process are not the device's own (the run's missing: names
    // the process; a refit of the sweep alone says why from the flag).
    if (std::any_of(windows.begin(), windows.end(),
                    [](const Sample* w) { return w->flags.find(kForeignLoadFlag) != std::string::npos; })) {
      const std::string prefix = name + ": sustained: measured while";
      if (std::none_of(machine.missing.begin(), machine.missing.end(),
                       [&](const std::string& m) { return m.rfind(prefix, 0) == 0; }))
        machine.missing.push_back(prefix + " other processes used the device (its windows are flagged " +
                                  kForeignLoadFlag + "): not the device's own");
      continue;
    }
    bool placed = false;
    for (ComputeCeiling& c : machine.compute)
      if (c.name == name && c.source == "empirical") {
        c.sustained = figure_of(windows, true, machine.device);
        placed = true;
      }
    for (MemoryLevel& l : machine.memory)
      if (l.level == name && l.source == "empirical") {
        l.sustained = figure_of(windows, false, machine.device);
        placed = true;
      }
    if (!placed)
      machine.missing.push_back(name + ": " + std::to_string(windows.size()) +
                                " sustained windows in the sweep, but the fit has no such ceiling or level");
  }
}

}  // namespace roofprobe
