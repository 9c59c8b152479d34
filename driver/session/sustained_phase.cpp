#include "driver/session/sustained_phase.hpp"

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <set>

#include "driver/fit/energy.hpp"
#include "driver/run/engine.hpp"
#include "driver/run/sweep_runner.hpp"

namespace roofprobe {

bool is_sustained_compute(const std::string& name) {
  if (name.rfind("TENSOR.", 0) == 0) return true;
  const std::string fma = ".FMA";
  return name.size() > fma.size() && name.compare(name.size() - fma.size(), fma.size(), fma) == 0;
}

namespace {

std::optional<double> working_set_of(const Params& params) {
  auto it = params.find("working_set_bytes");
  if (it == params.end()) return std::nullopt;
  try {
    return std::stod(it->second);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::string text(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

}  // namespace

const PlanPoint* level_point(const Plan& plan, const MemoryLevel& level) {
  // The level's figure is the plateau of its headline series: that series at the largest working
  // set inside the plateau, the one furthest from the cache before it.
  const PlanPoint* best = nullptr;
  double best_size = 0;
  for (const PlanPoint& p : plan.points) {
    if (p.probe->info().name != level.probe) continue;
    bool same_series = true;
    for (const auto& [axis, value] : level.params)
      if (axis != "working_set_bytes") same_series = same_series && p.params.count(axis) && p.params.at(axis) == value;
    const std::optional<double> size = working_set_of(p.params);
    // A probe without a working-set axis (shared memory, system memory) names the level's point
    // by its parameters alone.
    if (same_series && !size && best == nullptr && p.params.size() == level.params.size()) best = &p;
    if (!same_series || !size || *size < level.working_set_lo ||
        (level.working_set_hi > 0 && *size > level.working_set_hi))
      continue;
    if (best == nullptr || *size > best_size) {
      best = &p;
      best_size = *size;
    }
  }
  return best;
}

std::vector<SustainedTarget> sustained_targets(const Plan& plan, const Machine& burst,
                                               const std::vector<Sample>& samples, std::vector<std::string>& missing) {
  std::set<std::string> measured;
  for (const Sample& s : samples)
    if (is_sustained(s)) measured.insert(sustained_ceiling(s));
  std::vector<SustainedTarget> out;
  for (const ComputeCeiling& c : burst.compute) {
    if (!is_sustained_compute(c.name) || measured.count(c.name)) continue;
    for (const PlanPoint& p : plan.points)
      if (p.probe->info().name == c.probe && p.params == c.params) {
        out.push_back({c.name, &p});
        break;
      }
  }
  for (const MemoryLevel& l : burst.memory) {
    if (l.level != burst.device.memory_name || l.source != "empirical" || measured.count(l.level)) continue;
    const PlanPoint* best = level_point(plan, l);
    if (best != nullptr)
      out.push_back({l.level, best});
    else
      missing.push_back(l.level + ": sustained not measured: no point of probe '" + l.probe +
                        "' lies inside the level's working sets");
  }
  return out;
}

SustainedOutcome run_sustained_phase(Backend& backend, const DeviceInfo& device,
                                     const std::vector<SustainedTarget>& targets, const MeasurementSettings& settings,
                                     double seconds, SweepWriter& sweep, const std::function<bool()>& stop,
                                     const std::function<void(const std::string&)>& report) {
  SustainedOutcome out;
  // A phase that settles early still runs until the energy counter has updated often enough for
  // its energy to count (driver/fit/energy.hpp), with a tenth to spare for the time between
  // launches, which the windows' sampled seconds leave out.
  const double least = 1.1 * energy_span_seconds(device);
  for (const SustainedTarget& t : targets) {
    if (stop()) break;
    const PlanPoint& point = *t.point;
    const std::string& probe = point.probe->info().name;
    const std::string label = t.ceiling + " (" + probe + " " + params_to_string(point.params) + ")";
    report("sustained " + label + ": up to " + text("%.3g", seconds) + " s");
    try {
      std::unique_ptr<PreparedPoint> prepared = point.probe->prepare(point.params, device);
      // Another process on the device during the phase takes its power and clock: the windows
      // are kept, flagged, and the ceiling's sustained figure is not published (as in the sweep,
      // without the retries: a phase is seconds long).
      const ForeignUse before = backend.foreign_use();
      const auto start = std::chrono::steady_clock::now();
      const SustainedMeasurement m = measure_sustained(backend, *prepared, settings, seconds, stop, {}, least);
      const std::string foreign =
          foreign_load_reason(before, backend.foreign_use(),
                              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      if (!m.check.ok) {
        report("error: verification failed: sustained " + label + ": " + m.check.detail + " (windows discarded)");
        out.missing.push_back(t.ceiling + ": sustained: verification failed: " + m.check.detail);
        ++out.failures;
        continue;
      }
      std::vector<Sample> rows =
          sustained_samples_of(m, backend.name(), probe, point.params, point.index, t.ceiling, 0);
      if (rows.empty()) continue;
      if (!foreign.empty()) {
        for (Sample& s : rows) s.flags += (s.flags.empty() ? "" : "|") + std::string(kForeignLoadFlag);
        report("note: sustained " + label + ": measured while " + foreign + ": not published");
        out.missing.push_back(t.ceiling + ": sustained: measured while " + foreign + ": not the device's own");
        ++out.foreign;
      }
      const Sample& last = rows.back();
      const bool compute = last.flops > 0;
      report("sustained " + t.ceiling + ": " + std::to_string(rows.size()) + " windows, last " +
             text("%.1f", compute ? last.gflops : last.gbs) + (compute ? " GFLOP/s" : " GB/s") +
             (last.clock_mhz > 0 ? text(" at %.0f MHz", last.clock_mhz) : "") +
             (last.power_w > 0 ? text(", %.0f W", last.power_w) : "") + (m.settled ? ", settled" : ", not settled"));
      sweep.append_point(rows);
      out.samples.insert(out.samples.end(), rows.begin(), rows.end());
    } catch (const MeasurementStopped&) {
      out.missing.push_back(t.ceiling + ": sustained not measured (interrupted)");
      break;
    } catch (const DeviceOutOfMemory& e) {
      report("note: sustained " + label + ": out of device memory: " + e.what());
      out.missing.push_back(t.ceiling + ": sustained not measured: out of device memory: " + e.what());
    } catch (const DeviceFault& e) {
      ++out.failures;
      report("error: sustained " + label + ": device fault: " + e.what());
      out.missing.push_back(t.ceiling + ": sustained not measured: device fault: " + e.what());
      if (!backend.recover()) break;
    } catch (const std::exception& e) {
      ++out.failures;
      report("error: sustained " + label + ": " + e.what());
      out.missing.push_back(t.ceiling + ": sustained not measured: " + e.what());
    }
  }
  return out;
}

}  // namespace roofprobe
