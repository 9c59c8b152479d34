#include "driver/session/power_caps.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "driver/fit/feed_fitting.hpp"
#include "driver/model/csv_text.hpp"
#include "driver/model/errors.hpp"
#include "driver/run/signals.hpp"

namespace roofprobe {

namespace {

std::string watts_text(double watts) { return csv_text::number_text(watts, 6); }

// A cap's label in messages and missing: lines.
std::string cap_label(double watts) { return "power cap " + watts_text(watts) + " W"; }

// The parameters of `series` ("cache_op=ca;mode=read") all hold in `params`.
bool in_series(const Params& params, const Params& series) {
  for (const auto& [axis, value] : series) {
    const auto it = params.find(axis);
    if (it == params.end() || it->second != value) return false;
  }
  return true;
}

// Whether the point feeds a ceiling a cap moves that the run measures again: a compute ceiling
// of FMAs or tensor instructions, or the device memory.
bool measured_under_caps(const PlanPoint& point, double memory_from_bytes) {
  for (const FeedSpec& spec : point.probe->info().feeds) {
    if (spec.kind == FeedKind::ComputeCeiling) {
      const std::string name = fitting::render_name(spec.name_pattern, point.params, "");
      const bool fma = name.size() > 4 && name.compare(name.size() - 4, 4, ".FMA") == 0;
      if (fma || name.rfind("TENSOR.", 0) == 0) return true;
    }
    if (spec.kind == FeedKind::MemoryLevels) {
      const auto size = point.params.find(spec.x_axis);
      if (size == point.params.end()) continue;
      const Params primary = spec.primary_series.empty() ? Params{} : params_from_string(spec.primary_series);
      if (in_series(point.params, primary) && std::stod(size->second) >= memory_from_bytes) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<double> parse_power_caps(const std::string& text) {
  std::vector<double> caps;
  std::stringstream in(text);
  std::string item;
  const auto bad = [&](const std::string& why) { throw InputError("--power-caps '" + text + "': " + why); };
  if (text.empty()) bad("expected watts, e.g. 300,400,500");
  while (std::getline(in, item, ',')) {
    std::size_t used = 0;
    double watts = 0;
    try {
      watts = std::stod(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size()) bad("'" + item + "' is not a number of watts");
    if (!std::isfinite(watts) || watts <= 0) bad("'" + item + "': a cap must be positive and finite watts");
    if (std::find(caps.begin(), caps.end(), watts) != caps.end()) bad(watts_text(watts) + " W is listed twice");
    caps.push_back(watts);
  }
  if (text.back() == ',') bad("a cap is empty");
  return caps;
}

PowerLimitControl& power_limit_control_of(Backend& backend) {
  std::string why;
  PowerLimitControl* control = backend.power_limit_control(why);
  if (control == nullptr) throw InputError("--power-caps: " + why);
  return *control;
}

double check_power_caps(PowerLimitControl& control, const std::vector<double>& caps) {
  try {
    const PowerLimitRange range = control.constraints();
    for (const double cap : caps)
      if (cap < range.min_w || cap > range.max_w)
        throw InputError("--power-caps: " + watts_text(cap) + " W is outside the device's limits, " +
                         watts_text(range.min_w) + " to " + watts_text(range.max_w) + " W");
    const double original = control.current_w();
    control.check_permission();
    return original;
  } catch (const PowerLimitError& e) {
    throw InputError(std::string("--power-caps: ") + e.what());
  }
}

Plan power_cap_plan(const Plan& plan, const DeviceInfo& device) {
  double largest_cache = 0;
  for (const CacheInfo& c : device.caches)
    largest_cache = std::max(largest_cache, static_cast<double>(cache_bytes(device, c.name)));
  // Four times the largest cache: past the knee to memory, where the cache serves too few of the
  // accesses to lift the rate (the level fit's last plateau).
  const double memory_from = 4 * largest_cache;
  Plan out;
  out.backend = plan.backend;
  for (const PlanPoint& point : plan.points)
    if (measured_under_caps(point, memory_from)) out.points.push_back(point);
  return out;
}

PowerLimitGuard::PowerLimitGuard(PowerLimitControl& control, double original_w,
                                 std::function<void(const std::string&)> report)
    : control_(control), original_w_(original_w), report_(std::move(report)) {
  hold_second_signal(true);
}

PowerLimitGuard::~PowerLimitGuard() {
  restore();
  hold_second_signal(false);
}

void PowerLimitGuard::set(double watts) {
  changed_ = true;  // a refused set may have changed it all the same: restore in any case
  control_.set_w(watts);
}

bool PowerLimitGuard::restore() {
  if (!changed_) return true;
  changed_ = false;
  try {
    control_.set_w(original_w_);
    report_("note: power limit restored to " + watts_text(original_w_) + " W");
    return true;
  } catch (const std::exception& e) {
    report_("error: the power limit could not be restored to " + watts_text(original_w_) + " W: " + e.what() +
            "; restore it with: " + control_.restore_command(original_w_));
    return false;
  }
}

SweepOutcome run_power_caps(Backend& backend, PowerLimitControl& control, double original_w, const DeviceInfo& device,
                            const Plan& cap_plan, const std::vector<double>& caps, const MeasurementSettings& settings,
                            SweepWriter& sweep, const SweepHooks& hooks) {
  SweepOutcome all;
  const auto report = [&](const std::string& line) {
    if (hooks.report) hooks.report(line);
  };
  std::map<int, int> ordinal;  // plan index -> position in cap_plan
  for (const PlanPoint& p : cap_plan.points) ordinal.emplace(p.index, static_cast<int>(ordinal.size()));
  const int per_cap = static_cast<int>(cap_plan.points.size());
  PowerLimitGuard guard(control, original_w, report);
  report("note: the power limit is " + watts_text(original_w) + " W; if the run is killed (SIGKILL) before it " +
         "sets it back, restore it with: " + control.restore_command(original_w));
  for (std::size_t i = 0; i < caps.size(); ++i) {
    const std::string label = cap_label(caps[i]);
    if (const int signal = hooks.stop_requested()) {
      all.stopped_by = signal;
      for (std::size_t j = i; j < caps.size(); ++j) all.not_measured.push_back(cap_label(caps[j]));
      break;
    }
    report(label + ": setting the limit, measuring " + std::to_string(per_cap) + " points");
    try {
      guard.set(caps[i]);
    } catch (const PowerLimitError& e) {
      ++all.failures;
      report("error: " + label + ": " + e.what() + "; the caps left are not measured");
      all.missing.push_back(label + ": not set: " + e.what());
      break;
    }
    SweepHooks cap_hooks = hooks;
    cap_hooks.power_cap_w = caps[i];
    cap_hooks.progress = [&, i](int index, const std::string& point) {
      hooks.progress(static_cast<int>(i) * per_cap + ordinal[index], label + ": " + point);
    };
    SweepOutcome o = run_sweep(backend, device, cap_plan, settings, {}, sweep, cap_hooks);
    all.samples.insert(all.samples.end(), o.samples.begin(), o.samples.end());
    for (const std::string& m : o.missing) all.missing.push_back(label + ": " + m);
    for (const std::string& m : o.not_measured) all.not_measured.push_back(label + ": " + m);
    all.failures += o.failures;
    all.foreign_points += o.foreign_points;
    report(label + ": " + std::to_string(o.samples.size()) + " samples measured");
    if (o.stopped_by != 0 || o.device_lost) {
      all.stopped_by = o.stopped_by;
      all.device_lost = o.device_lost;
      for (std::size_t j = i + 1; j < caps.size(); ++j) all.not_measured.push_back(cap_label(caps[j]));
      break;
    }
  }
  if (!guard.restore()) {
    ++all.failures;
    all.missing.push_back("the power limit could not be restored to " + watts_text(original_w) + " W (" +
                          control.restore_command(original_w) + ")");
  }
  return all;
}

}  // namespace roofprobe
