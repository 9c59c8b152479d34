// Energy figures of the fitted ceilings: from each sample's share of its point's energy
// (sweep.csv energy_j), over the samples behind each compute ceiling and memory level, the
// average power, the energy per FLOP and the energy per byte.
#pragma once

#include <string>
#include <vector>

#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"

namespace roofprobe {

// A point's energy is used only when its sampled launches lasted at least this many of the
// counter's update intervals: the counter is read once before and once after the point, so each
// end may be off by up to one interval, and 40 intervals bound that error by 2 / 40 = 5%.
inline constexpr double kEnergyIntervalsPerPoint = 40;

// The least sampled time a stretch of counter readings needs for its energy to count:
// kEnergyIntervalsPerPoint of the update interval the device recorded (0 where it recorded none).
double energy_span_seconds(const DeviceInfo& d);

// The value the device recorded under device.extra[key]; empty when it recorded none.
std::string device_extra(const DeviceInfo& d, const std::string& key);

// Every key of `fixed` has the same value in `params`: a ceiling's fixed parameters pick the
// samples behind it.
bool params_include(const Params& fixed, const Params& params);

// Sets machine.energy from the samples when device.extra says a counter was read (its update
// interval measured, driver/run/energy_counter.hpp) and at least one ceiling's samples qualify;
// otherwise names under machine.missing why there are no energy figures. Call it after the
// levels and ceilings are fitted.
void fit_energy(const std::vector<Sample>& samples, Machine& machine);

}  // namespace roofprobe
