// Human-readable tables printed at the end of a run or fit, and by `list`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "driver/model/machine.hpp"

namespace roofprobe {

void print_summary(std::ostream& out, const Machine& machine, const std::string& where);
void print_probe_list(std::ostream& out, const std::vector<const Probe*>& probes);
// Per probe, the combinations of its choice axes that exist on `device` (Probe::exists_on), and
// how many do not.
void print_existing_combinations(std::ostream& out, const std::vector<const Probe*>& probes, const DeviceInfo& device);

}  // namespace roofprobe
