#include "driver/run/plan.hpp"

#include "driver/model/errors.hpp"
#include "driver/model/units.hpp"

namespace roofprobe {

namespace {

// Odometer over the axes in declaration order, last axis fastest.
std::vector<Params> cartesian(const Probe& probe, const ProbeConfig& pc) {
  std::vector<Params> out{Params{}};
  for (const Axis& axis : probe.info().axes) {
    const auto& values = pc.axes.at(axis.name);
    std::vector<Params> next;
    next.reserve(out.size() * values.size());
    for (const Params& partial : out)
      for (const std::string& v : values) {
        Params p = partial;
        p[axis.name] = v;
        next.push_back(std::move(p));
      }
    out = std::move(next);
  }
  return out;
}

// Working sets beyond this share of memory would swap or be killed, and measure nothing useful.
constexpr double kMaxMemoryShare = 0.8;

}  // namespace

Plan build_plan(const RunConfig& config, const BackendConfig& backend, const DeviceInfo& device) {
  Plan plan;
  plan.backend = backend.name;
  for (const ProbeConfig& pc : backend.probes) {
    const Probe* probe = Registry::instance().probe(backend.name, pc.name);
    for (Params& params : cartesian(*probe, pc)) {
      double footprint = static_cast<double>(probe->footprint_bytes(params));
      if (device.memory_bytes > 0 && footprint > kMaxMemoryShare * static_cast<double>(device.memory_bytes)) {
        std::string axis;
        int line = pc.line;
        for (const Axis& a : probe->info().axes)
          if (a.type == AxisType::Bytes) {
            axis = a.name;
            if (pc.axis_line.at(a.name) > 0) line = pc.axis_line.at(a.name);
          }
        throw InputError(config.source + ":" + std::to_string(line) + ": " + backend.name + ".probes." + pc.name + "." +
                         axis + ": " + format_bytes(footprint) + " exceeds 80% of the " + device.memory_name + " (" +
                         format_bytes(static_cast<double>(device.memory_bytes)) + ")");
      }
      std::string why = probe->unsupported_reason(params, device);
      if (!probe->exists_on(params, device)) {
        plan.not_existing.push_back(pc.name + " " + params_to_string(params) + (why.empty() ? "" : ": " + why));
        continue;
      }
      if (!why.empty()) {
        plan.skipped.push_back(pc.name + " " + params_to_string(params) + ": " + why);
        continue;
      }
      PlanPoint point;
      point.index = static_cast<int>(plan.points.size());
      point.probe = probe;
      point.params = std::move(params);
      plan.points.push_back(std::move(point));
    }
  }
  return plan;
}

}  // namespace roofprobe
