// Human-readable tables printed at the end of a run or fit, and by `list`.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "driver/model/machine.hpp"

namespace roofprobe {

void print_summary(std::ostream& out, const Machine& machine, const std::string& where);
void print_probe_list(std::ostream& out, const std::vector<const Probe*>& probes);

}  // namespace roofprobe
