#include "driver/run/sweep_runner.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>

#include "driver/run/engine.hpp"
#include "driver/model/units.hpp"

namespace roofprobe {

namespace {

std::string label_of(const PlanPoint& point) { return point.probe->info().name + " " + params_to_string(point.params); }

// What a point's label names before its parameters: the probe, with any prefix a caller put in
// front ("cap 300 W: bandwidth"); the whole label when it has no parameters.
std::string label_group(const std::string& label) {
  const std::size_t eq = label.find('=');
  if (eq == std::string::npos) return label;
  const std::size_t space = label.rfind(' ', eq);
  return space == std::string::npos ? label : label.substr(0, space);
}

// Foreign CPU time above this many cores on average, on the run's own cores, disturbs a point;
// below it are the kernel's own threads and daemons' wake-ups.
constexpr double kForeignCores = 0.25;
constexpr int kForeignRetries = 2;

std::string cores_text(double cores) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", cores);
  return buf;
}

}  // namespace

std::string foreign_load_reason(const ForeignUse& before, const ForeignUse& after, double seconds) {
  if (!before.known || !after.known || !(seconds > 0)) return {};
  std::string who;
  for (const std::string& p : after.processes) who += (who.empty() ? "" : ", ") + p;
  if (after.measures_time) {
    const double foreign = after.busy_seconds - before.busy_seconds - after.resolution_seconds;
    double cores = foreign / seconds - after.idle_slack;
    // The threads' own wait for their CPUs is exact where busy time rounds to ticks.
    if (before.measures_wait && after.measures_wait)
      cores = std::max(cores, (after.waited_seconds - before.waited_seconds) / seconds);
    if (!(cores > kForeignCores)) return {};
    return "other processes used " + cores_text(cores) + " of the run's cores" + (who.empty() ? "" : ": " + who);
  }
  if (after.processes.empty() && before.processes.empty()) return {};
  if (who.empty())
    for (const std::string& p : before.processes) who += (who.empty() ? "" : ", ") + p;
  return "other processes ran on the device: " + who;
}

std::vector<std::string> not_measured_lines(const std::vector<std::string>& labels, const std::string& why) {
  struct Group {
    std::size_t points = 0;
    std::string first;
  };
  std::map<std::string, Group> groups;
  std::vector<std::string> order;
  for (const std::string& label : labels) {
    Group& g = groups[label_group(label)];
    if (g.points++ == 0) {
      g.first = label;
      order.push_back(label_group(label));
    }
  }
  std::vector<std::string> lines;
  for (const std::string& key : order) {
    const Group& g = groups[key];
    if (g.points == 1)
      lines.push_back(g.first + ": not measured (" + why + ")");
    else
      lines.push_back(key + ": " + std::to_string(g.points) + " points not measured (" + why +
                      "), the first: " + g.first);
  }
  return lines;
}

SweepOutcome run_sweep(Backend& backend, const DeviceInfo& device, const Plan& plan,
                       const MeasurementSettings& settings, const std::set<int>& done, SweepWriter& sweep,
                       const SweepHooks& hooks, int rank) {
  SweepOutcome out;
  auto report = [&](const std::string& line) {
    if (hooks.report) hooks.report(line);
  };
  // Per probe: the smallest footprint that did not fit; points at or above it are skipped.
  std::map<std::string, double> oom_floor;
  std::set<std::string> faulted;  // probes ended by a device fault
  int lost_points = 0;            // not measured because of a fault
  int persistent_load = 0;        // points in a row that stayed loaded after their retries
  // Per probe, the points measured beside another process (foreign_load_note).
  struct ForeignPoints {
    std::size_t points = 0;
    std::string first, reason;
  };
  std::map<std::string, ForeignPoints> foreign_by_probe;
  std::vector<std::string> foreign_order;
  for (const PlanPoint& point : plan.points) {
    if (done.count(point.index)) continue;
    const std::string label = label_of(point);
    const std::string& probe = point.probe->info().name;
    if (out.stopped_by == 0) out.stopped_by = hooks.stop_requested();
    if (out.stopped_by != 0) {
      out.not_measured.push_back(label);
      continue;
    }
    if (out.device_lost || faulted.count(probe)) {
      ++lost_points;  // said once, after the loop: there may be hundreds
      continue;
    }
    const double footprint = static_cast<double>(point.probe->footprint_bytes(point.params));
    auto floor = oom_floor.find(probe);
    if (floor != oom_floor.end() && footprint >= floor->second) {
      out.missing.push_back(label + ": skipped: needs " + format_bytes(footprint) + ", and " +
                            format_bytes(floor->second) + " did not fit in device memory");
      continue;
    }
    hooks.progress(point.index, label);
    std::vector<Sample> samples;
    try {
      std::unique_ptr<PreparedPoint> prepared = point.probe->prepare(point.params, device);
      PointMeasurement m;
      std::string foreign;
      // Under a load that persists (the last points stayed loaded after their retries), a point
      // is measured once: retrying every point would multiply the run's time for nothing.
      const int retries = persistent_load >= 2 ? 0 : kForeignRetries;
      int attempt = 0;
      for (;; ++attempt) {
        const ForeignUse before = backend.foreign_use();
        const auto start = std::chrono::steady_clock::now();
        m = measure_point(backend, *prepared, settings, [&] { return hooks.stop_requested() != 0; });
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        foreign = foreign_load_reason(before, backend.foreign_use(), seconds);
        if (foreign.empty() || attempt == retries) break;
        report("note: " + label + ": " + foreign + "; measuring it again");
      }
      if (!m.check.ok) {
        report("error: verification failed: " + label + ": " + m.check.detail + " (samples discarded)");
        out.missing.push_back(label + ": verification failed: " + m.check.detail);
        ++out.failures;
        continue;
      }
      samples = samples_of(m, backend.name(), probe, point.params, point.index, rank, device.clock_measured_mhz);
      for (Sample& s : samples) s.power_cap_w = hooks.power_cap_w;
      if (!foreign.empty()) {
        // Kept (the run's record is whole) but never taken for the device's own rate.
        for (Sample& s : samples) s.flags += (s.flags.empty() ? "" : "|") + std::string(kForeignLoadFlag);
        report("note: " + label + ": measured while " + foreign + " (" + std::to_string(attempt + 1) +
               (attempt == 0 ? " try" : " tries") + "): flagged foreign-load");
        ForeignPoints& f = foreign_by_probe[probe];
        if (f.points++ == 0) {
          f.first = label;
          f.reason = foreign;
          foreign_order.push_back(probe);
        }
        ++out.foreign_points;
        ++persistent_load;
      } else {
        persistent_load = 0;
      }
    } catch (const MeasurementStopped&) {
      // Stopped inside the point: it is not measured (a resumed run measures it whole).
      out.stopped_by = hooks.stop_requested();
      out.not_measured.push_back(label);
      continue;
    } catch (const DeviceOutOfMemory& e) {
      // The largest size that fits has been measured already (or none does): say so, go on.
      oom_floor[probe] =
          std::min(footprint, floor != oom_floor.end() ? floor->second : std::numeric_limits<double>::max());
      report("note: " + label + ": out of device memory (" + e.what() + "); the " + probe + " sweep stops below " +
             format_bytes(footprint));
      out.missing.push_back(label + ": out of device memory: " + e.what() + "; larger points of '" + probe +
                            "' skipped");
    } catch (const DeviceFault& e) {
      ++out.failures;
      faulted.insert(probe);
      report("error: " + label + ": device fault: " + e.what() + "; probe '" + probe + "' ended");
      out.missing.push_back(label + ": device fault: " + e.what() + "; the rest of probe '" + probe + "' skipped");
      if (backend.recover()) {
        report("note: the device was reset; the run goes on with the next probe");
      } else {
        out.device_lost = true;
        report("error: the device could not be reset: the run stops here, keeping what was measured");
      }
    } catch (const std::exception& e) {
      ++out.failures;
      report("error: " + label + ": " + e.what());
      out.missing.push_back(label + ": failed: " + e.what());
    }
    // Outside the handlers above: a sweep.csv that cannot be written (disk full) ends the run.
    if (!samples.empty()) {
      sweep.append_point(samples);
      out.samples.insert(out.samples.end(), samples.begin(), samples.end());
    }
  }
  for (const std::string& probe : foreign_order) {
    const ForeignPoints& f = foreign_by_probe[probe];
    out.missing.push_back(foreign_load_note(probe, f.points, f.first, f.reason));
  }
  if (out.foreign_points > 0)
    report("note: " + std::to_string(out.foreign_points) +
           " points were measured while other processes used the device; they are flagged foreign-load and named "
           "under missing:; a ceiling measured only beside that load is marked noisy (docs/RELIABILITY.md)");
  if (lost_points > 0)
    out.missing.push_back(std::to_string(lost_points) + " points not measured after a device fault" +
                          (out.device_lost ? " (the device could not be reset)" : " (their probe had ended)"));
  return out;
}

}  // namespace roofprobe
