#include "driver/session/energy_phase.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <set>

#include "driver/fit/energy.hpp"
#include "driver/run/engine.hpp"
#include "driver/run/sweep_runner.hpp"
#include "driver/session/sustained_phase.hpp"

namespace roofprobe {

namespace {

std::string text(const char* format, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// The point's parameters on k of n workers: a cache level's working set shrinks with its workers.
Params params_on(const EnergyTarget& t, int k) {
  Params p = t.point->params;
  auto it = p.find("working_set_bytes");
  if (t.scale_working_set && it != p.end() && k < t.of) {
    const double whole = param_real(t.point->params, "working_set_bytes");
    it->second = std::to_string(static_cast<unsigned long long>(std::llround(whole * k / t.of)));
  }
  return p;
}

}  // namespace

bool private_level(const DeviceInfo& device, const std::string& level) {
  for (const CacheInfo& c : device.caches)
    if (c.name == level) return c.instances > 1 && c.instances >= device.compute_units;
  return false;
}

double energy_share_seconds(const DeviceInfo& device) {
  return std::max(kEnergyShareLeastSeconds, kEnergyStretchesPerShare * 1.1 * energy_span_seconds(device));
}

WorkerSplit worker_split(Backend& backend, const DeviceInfo& device) {
  WorkerSplit split;
  // A device with no partition smaller than itself has no part to run on.
  const int smallest = device.compute_units > 1 ? backend.confinable_workers(1) : 0;
  if (smallest > 0 && smallest < device.compute_units) {
    split.workers = device.compute_units;
    split.granted = [&backend](int k) { return backend.confinable_workers(k); };
  } else {
    split.workers = device.threads;
  }
  return split;
}

std::vector<int> energy_workers(int n, bool have_full, const std::function<int(int)>& granted) {
  std::vector<int> out;
  for (int k : {n / 4, n / 2, n}) {
    k = std::max(k, 1);
    if (granted) k = std::min(granted(k), n);
    if (k < 1 || k > n || (k == n && have_full)) continue;
    if (std::find(out.begin(), out.end(), k) == out.end()) out.push_back(k);
  }
  return out;
}

std::vector<EnergyTarget> energy_targets(const Plan& plan, const Machine& burst, const std::vector<Sample>& samples,
                                         const WorkerSplit& split, std::vector<std::string>& missing) {
  const int n = split.workers;
  // What the run already measured: the sustained phases (the full share), the shares done.
  std::set<std::string> sustained;
  std::set<std::pair<std::string, int>> done;
  for (const Sample& s : samples) {
    if (is_sustained(s)) sustained.insert(sustained_ceiling(s));
    if (const auto share = energy_share(s)) done.insert({share->target, share->workers});
  }
  std::vector<EnergyTarget> out;
  // Probes that cannot run on part of the device (or have one worker to run on), and their
  // targets: one line under missing: for them all.
  std::set<std::string> whole_device_probes;
  std::vector<std::string> whole_device_targets;
  bool one_worker = false;
  std::vector<std::string> no_point;  // levels without a point inside their plateau (a named level)
  const auto add = [&](const std::string& name, const PlanPoint* point, bool memory) {
    const Probe& probe = *point->probe;
    const bool on_part = split.backend_confines() || probe.runs_on_fewer_workers();
    if (!on_part || n < 2) {
      one_worker = one_worker || on_part;
      whole_device_probes.insert("'" + probe.info().name + "'");
      whole_device_targets.push_back(name);
      return;
    }
    EnergyTarget t;
    t.target = name;
    t.point = point;
    t.of = n;
    // A level the workers share (the device memory, a last-level cache) serves fewer workers at
    // nearly its whole rate, while each worker's core keeps drawing power as it waits: its bytes
    // per second no longer follow the power, so it runs on all the workers only.
    const bool scales = !memory || private_level(burst.device, name);
    t.scale_working_set = memory && scales;
    const bool have_full = sustained.count(name) > 0;
    for (int k : scales ? energy_workers(n, have_full, split.granted) : std::vector<int>{})
      if (!done.count({name, k})) t.workers.push_back(k);
    if (!scales && !have_full && !done.count({name, n})) t.workers.push_back(n);
    if (!t.workers.empty()) out.push_back(std::move(t));
  };
  for (const ComputeCeiling& c : burst.compute) {
    if (c.source != "empirical" || !is_sustained_compute(c.name)) continue;
    for (const PlanPoint& p : plan.points)
      if (p.probe->info().name == c.probe && p.params == c.params) {
        add(c.name, &p, false);
        break;
      }
  }
  for (const MemoryLevel& l : burst.memory) {
    if (l.source != "empirical") continue;
    if (const PlanPoint* p = level_point(plan, l))
      add(l.level, p, true);
    else
      no_point.push_back(l.level);
  }
  const auto join = [](const auto& names) {
    std::string s;
    for (const std::string& x : names) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  // Where no probe of the backend can run on part of the device (a GPU without green contexts),
  // the phase has nothing to run, and the energy model's own line under missing: says why it is
  // not fitted.
  if (out.empty() && !one_worker) return out;
  if (!no_point.empty())
    missing.push_back("energy model: " + join(no_point) +
                      ": not run on part of the device: no point of the level's probe lies inside its working sets");
  if (!whole_device_probes.empty()) {
    missing.push_back("energy model: " + join(whole_device_targets) + ": only at full rate: probe" +
                      (whole_device_probes.size() > 1 ? "s " : " ") + join(whole_device_probes) + " " +
                      (one_worker ? "ran on one worker" : "cannot run on part of the device") +
                      ", and one rate per ceiling cannot tell its energy per FLOP or byte from the constant power");
  }
  return out;
}

EnergyPhaseOutcome run_energy_phase(Backend& backend, const DeviceInfo& device, const WorkerSplit& split,
                                    const std::vector<EnergyTarget>& targets, const MeasurementSettings& settings,
                                    double seconds, SweepWriter& sweep, const std::function<bool()>& stop,
                                    const std::function<void(const std::string&)>& report) {
  EnergyPhaseOutcome out;
  // Shares measured beside another process's load: one line under missing: for them all, as the
  // sweep names such points once per probe.
  int shares = 0;
  std::string first_foreign;
  const auto name_foreign = [&] {
    if (out.foreign > 0)
      out.missing.push_back(
          "energy model: " + std::to_string(out.foreign) + " of " + std::to_string(shares) +
          " shares measured while other processes used the device, not fitted (first: " + first_foreign + ")");
  };
  // Shares the backend could not confine to their workers: after the first refusal the others
  // are not tried, and one line names them all.
  std::string cannot_confine;
  int not_confined = 0;
  const auto finish = [&] {
    name_foreign();
    if (not_confined > 0)
      out.missing.push_back("energy model: " + std::to_string(not_confined) +
                            " shares on part of the device not run: " + cannot_confine);
  };
  for (const EnergyTarget& t : targets) {
    for (int k : t.workers) {
      if (stop()) {
        finish();
        return out;
      }
      const bool confine = split.backend_confines() && k < t.of;
      if (confine && !cannot_confine.empty()) {
        ++not_confined;
        continue;
      }
      ++shares;
      const PlanPoint& point = *t.point;
      const std::string& probe = point.probe->info().name;
      const Params params = params_on(t, k);
      const EnergyShare share{t.target, k, t.of};
      const std::string label = t.target + " on " + std::to_string(k) + " of " + std::to_string(t.of) + " workers (" +
                                probe + " " + params_to_string(params) + ")";
      report("energy " + label + ": " + text("%.3g", seconds) + " s");
      try {
        // Declared before the point: the point's buffers are freed inside its partition.
        std::unique_ptr<Confinement> confined;
        if (confine) {
          try {
            confined = backend.confine(k);
            if (confined->workers() != k)
              throw std::runtime_error("the backend granted " + std::to_string(confined->workers()) + " workers for " +
                                       std::to_string(k));
          } catch (const DeviceFault&) {
            throw;
          } catch (const DeviceOutOfMemory&) {
            throw;
          } catch (const std::exception& e) {
            cannot_confine = e.what();
            ++not_confined;
            --shares;
            report("note: energy " + label + ": not run: " + cannot_confine);
            continue;
          }
        }
        DeviceInfo part = device;
        part.threads = k;
        part.compute_units = std::min(device.compute_units, k);
        std::unique_ptr<PreparedPoint> prepared = point.probe->prepare(params, part);
        // As in the sustained phase: another process's energy in the counter is not this work's.
        const ForeignUse before = backend.foreign_use();
        const auto start = std::chrono::steady_clock::now();
        const SustainedMeasurement m = measure_sustained(backend, *prepared, settings, seconds, stop, {}, seconds);
        const std::string foreign =
            foreign_load_reason(before, backend.foreign_use(),
                                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        if (!m.check.ok) {
          report("error: verification failed: energy " + label + ": " + m.check.detail + " (windows discarded)");
          out.missing.push_back("energy model: " + energy_phase(share) + ": verification failed: " + m.check.detail);
          ++out.failures;
          continue;
        }
        // The rows keep the point's parameters, which name the point a resumed run finds in its
        // plan; their working_set_bytes is the set this share ran.
        std::vector<Sample> rows =
            phase_samples_of(m, backend.name(), probe, point.params, point.index, energy_phase(share), 0);
        if (rows.empty()) continue;
        if (!foreign.empty()) {
          for (Sample& s : rows) s.flags += (s.flags.empty() ? "" : "|") + std::string(kForeignLoadFlag);
          report("note: energy " + label + ": measured while " + foreign + ": not fitted");
          if (out.foreign++ == 0) first_foreign = energy_phase(share) + ": " + foreign;
        }
        sweep.append_point(rows);
        out.samples.insert(out.samples.end(), rows.begin(), rows.end());
      } catch (const MeasurementStopped&) {
        out.missing.push_back("energy model: " + energy_phase(share) + ": not measured (interrupted)");
        finish();
        return out;
      } catch (const DeviceOutOfMemory& e) {
        report("note: energy " + label + ": out of device memory: " + e.what());
        out.missing.push_back("energy model: " + energy_phase(share) + ": out of device memory: " + e.what());
      } catch (const DeviceFault& e) {
        ++out.failures;
        report("error: energy " + label + ": device fault: " + e.what());
        out.missing.push_back("energy model: " + energy_phase(share) + ": device fault: " + e.what());
        if (!backend.recover()) {
          finish();
          return out;
        }
      } catch (const std::exception& e) {
        ++out.failures;
        report("error: energy " + label + ": " + e.what());
        out.missing.push_back("energy model: " + energy_phase(share) + ": " + e.what());
      }
    }
  }
  finish();
  return out;
}

}  // namespace roofprobe
