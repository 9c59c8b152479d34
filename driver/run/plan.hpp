// The plan: every point a run will measure, the Cartesian product of each configured probe's
// axes (last axis fastest), pruned by what the device supports.
#pragma once

#include <string>
#include <vector>

#include "driver/run/config.hpp"

namespace roofprobe {

struct PlanPoint {
  int index = 0;
  const Probe* probe = nullptr;
  Params params;
};

struct Plan {
  std::string backend;
  std::vector<PlanPoint> points;
  std::vector<std::string> skipped;  // "probe params: reason", never silent
  // Combinations that do not exist on the device (Probe::exists_on): not planned and no gap;
  // "probe params: reason" for a note.
  std::vector<std::string> not_existing;
};

// Throws InputError (config file, line, key) when a point cannot fit in the device's memory.
Plan build_plan(const RunConfig& config, const BackendConfig& backend, const DeviceInfo& device);

}  // namespace roofprobe
