#include "driver/fit/energy.hpp"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>

namespace roofprobe {

std::string device_extra(const DeviceInfo& d, const std::string& key) {
  auto it = d.extra.find(key);
  return it == d.extra.end() ? std::string() : it->second;
}

double energy_span_seconds(const DeviceInfo& d) {
  return kEnergyIntervalsPerPoint * std::atof(device_extra(d, "energy_update_seconds").c_str());
}

bool params_include(const Params& fixed, const Params& params) {
  for (const auto& [k, v] : fixed) {
    auto it = params.find(k);
    if (it == params.end() || it->second != v) return false;
  }
  return true;
}

namespace {

struct PointTotals {
  double energy_j = 0, seconds = 0, flops = 0, bytes = 0;
  int samples = 0;
};

// Sums per point (backend, probe, phase, point index) of the samples `wanted` picks, keeping only the
// points whose sampled time reaches min_seconds.
template <class Wanted>
PointTotals qualifying_totals(const std::vector<Sample>& samples, double min_seconds, Wanted wanted) {
  std::map<std::pair<std::string, int>, PointTotals> points;
  for (const Sample& s : samples) {
    // Another process's energy is in the counter of a foreign-load point; an underfilled launch
    // does other work than the ceiling's.
    // An energy-phase row ran on part of the device: its power is not the ceiling's.
    if (s.energy_j <= 0 || is_underfilled(s) || s.flags.find(kForeignLoadFlag) != std::string::npos ||
        s.phase.rfind(kEnergyPhase, 0) == 0 || !wanted(s))
      continue;
    // A point's sustained windows are one stretch of counter readings, its sweep samples another:
    // each must be long enough on its own.
    PointTotals& p = points[{s.backend + "/" + s.probe + "/" + s.phase, s.point}];
    p.energy_j += s.energy_j;
    p.seconds += s.seconds;
    p.flops += s.flops;
    p.bytes += s.bytes;
    ++p.samples;
  }
  PointTotals total;
  for (const auto& [key, p] : points) {
    if (p.seconds < min_seconds) continue;
    total.energy_j += p.energy_j;
    total.seconds += p.seconds;
    total.flops += p.flops;
    total.bytes += p.bytes;
    total.samples += p.samples;
  }
  return total;
}

}  // namespace

void fit_energy(const std::vector<Sample>& samples, Machine& machine) {
  const std::string counter = device_extra(machine.device, "energy_counter");
  if (counter.empty()) return;  // a run from before energy was read: nothing to say
  if (counter.rfind("none: ", 0) == 0) {
    machine.missing.push_back("energy ceilings: " + counter.substr(6));
    return;
  }
  EnergySection e;
  e.counter = counter;
  e.update_seconds = std::atof(device_extra(machine.device, "energy_update_seconds").c_str());
  e.idle_power_w = std::atof(device_extra(machine.device, "idle_power_w").c_str());
  e.min_point_seconds = energy_span_seconds(machine.device);

  for (const ComputeCeiling& c : machine.compute) {
    if (c.source != "empirical") continue;
    const PointTotals t = qualifying_totals(samples, e.min_point_seconds, [&](const Sample& s) {
      return s.probe == c.probe && s.flops > 0 && s.params == c.params;
    });
    if (t.samples == 0 || t.seconds <= 0 || t.flops <= 0) continue;
    e.ceilings.push_back({c.name, t.energy_j / t.seconds, t.energy_j / t.flops * 1e12, 0, t.seconds, t.samples});
  }
  for (const MemoryLevel& l : machine.memory) {
    if (l.source != "empirical") continue;
    const PointTotals t = qualifying_totals(samples, e.min_point_seconds, [&](const Sample& s) {
      return s.probe == l.probe && s.bytes > 0 && params_include(l.params, s.params) &&
             s.working_set_bytes >= l.working_set_lo && s.working_set_bytes <= l.working_set_hi;
    });
    if (t.samples == 0 || t.seconds <= 0 || t.bytes <= 0) continue;
    e.ceilings.push_back({l.level, t.energy_j / t.seconds, 0, t.energy_j / t.bytes * 1e12, t.seconds, t.samples});
  }
  if (e.ceilings.empty()) {
    char why[256];
    std::snprintf(why, sizeof why,
                  "energy ceilings: no ceiling has a point sampled for %.3g s or longer (%g updates of the "
                  "counter, every %.3g s); raise measurement.min_seconds, or the backend's sustained_seconds",
                  e.min_point_seconds, kEnergyIntervalsPerPoint, e.update_seconds);
    machine.missing.push_back(why);
    return;
  }
  machine.energy = std::move(e);
}

}  // namespace roofprobe
