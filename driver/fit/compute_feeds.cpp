// Compute-ceiling feeds: the best point of each series (FP64.FMA, TENSOR.FP16.FP32, ...), its
// theoretical peak at the clock its own samples ran at, and, where several instructions do the
// same work, every instruction's own best.
#include <algorithm>

#include "driver/fit/feed_fitting.hpp"
#include "driver/fit/median.hpp"
#include "kernels/contract/device_power.hpp"
#include "driver/fit/fit.hpp"
#include "driver/model/sweep.hpp"

namespace roofprobe::fitting {

// Every throttle reason the point's samples recorded, "+"-joined in first-seen order; empty when none.
std::string throttle_of(const std::vector<const Sample*>& samples, const Params& params) {
  std::string out;
  for (const Sample* s : samples)
    if (s->params == params) add_throttle_reasons(out, s->throttle);
  return out;
}

// What bound a ceiling, from the throttle reasons its samples recorded (NVML's, throttle.hpp in
// the CUDA backend): the power cap, with its watts where the device reported them; temperature;
// a hardware slowdown; or, when nothing lowered the clock, the clock itself. Empty where the
// device reports no throttle reasons (CPUs, a GPU without NVML): nobody knows. Launches that ran
// at the device's top clock were not slowed, whatever reason NVML reported around them (an H200's
// FP64 noFMA point: sw-power at 1980 MHz of 1980 and 529 W): their limit is the clock.
std::string limit_of(const std::string& throttled, const DeviceInfo& dev, double clock_mhz) {
  constexpr double kTopClockFraction = 0.995;
  const bool at_top_clock =
      clock_mhz > 0 && dev.clock_max_mhz > 0 && clock_mhz >= dev.clock_max_mhz * kTopClockFraction;
  const auto has = [&](const char* reason) { return !at_top_clock && has_throttle_reason(throttled, reason); };
  std::vector<std::string> limits;
  if (!at_top_clock && has_power_cap_reason(throttled)) {
    const auto cap = dev.extra.find(kExtraPowerLimitW);
    limits.push_back(cap == dev.extra.end() ? "power cap" : "power cap " + cap->second + " W");
  }
  if (has("sw-thermal") || has("hw-thermal")) limits.push_back("temperature");
  if (has("hw-slowdown")) limits.push_back("hardware slowdown");
  std::string out;
  for (const std::string& l : limits) out += (out.empty() ? "" : " and ") + l;
  if (out.empty() && (throttled.empty() || at_top_clock)) {
    const auto telemetry = dev.extra.find("telemetry");
    if (telemetry != dev.extra.end() && telemetry->second.rfind("NVML", 0) == 0) out = "clock";
  }
  return out;
}

// FLOPs per instruction and instruction rate of a point, where its probe counts instructions.
void instruction_rate(const std::vector<const Sample*>& samples, const Params& params, double gflops,
                      double* flops_per_instruction, double* instructions_gips) {
  const Sample* first = first_sample_of(samples, params);
  if (first != nullptr && first->warp_instructions > 0 && first->flops > 0) {
    *flops_per_instruction = first->flops / first->warp_instructions;
    *instructions_gips = gflops / *flops_per_instruction;
  }
}

// Every instruction's own best for one ceiling's series (the spec's instruction axis), fastest
// first; the headline is the first.
std::vector<InstructionFigure> instruction_figures(const std::vector<const Sample*>& samples, const FeedSpec& spec) {
  std::vector<InstructionFigure> out;
  for (const auto& [key, of_one] : split_series(samples, {spec.instruction_axis})) {
    const auto best = best_of(of_one, spec.metric);
    if (!best) continue;
    InstructionFigure f;
    const auto value = best->params->find(spec.instruction_axis);
    const std::string axis_value = value == best->params->end() ? std::string() : value->second;
    // The text of this very point ("api=mma;type=fp64.fp64": one PTX shape), else of its axis value.
    std::vector<std::string> axes = spec.series_axes;
    axes.push_back(spec.instruction_axis);
    auto text = spec.instruction_text.find(series_key(*best->params, axes));
    if (text == spec.instruction_text.end()) text = spec.instruction_text.find(axis_value);
    f.instruction = text != spec.instruction_text.end() ? text->second : spec.instruction_axis + "=" + axis_value;
    f.gflops = best->median;
    f.stats = compute_stats(best->values);
    f.params = *best->params;
    instruction_rate(of_one, f.params, f.gflops, &f.flops_per_instruction, &f.instructions_gips);
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const InstructionFigure& a, const InstructionFigure& b) { return a.gflops > b.gflops; });
  return out;
}

void fit_compute_ceilings(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  for (const auto& [key, samples] : split_series(group.samples, spec.series_axes)) {
    const auto points = group_by_point(samples, spec.metric);
    const PointSamples* best = best_point(points);
    if (best == nullptr) continue;
    ComputeCeiling c;
    const std::string fallback = key.empty() ? group.probe : group.probe + "[" + key + "]";
    c.name = render_name(spec.name_pattern, *best->params, fallback);
    c.source = "empirical";
    c.gflops = best->median;
    c.gflops_ci95 = median_interval95(best->values);
    // The theoretical peak at the clock measured with this ceiling's own samples: the device's
    // figure is at its start-up clock and peaks scale with the clock.
    const DeviceInfo& dev = machine.device;
    const double own_clock = median_clock_of(samples, *best->params);
    c.clock_mhz = own_clock > 0 ? own_clock : dev.clock_measured_mhz;
    auto theo = dev.theoretical_gflops.find(c.name);
    c.theoretical_gflops = theo == dev.theoretical_gflops.end() ? 0
                           : own_clock > 0 && dev.clock_measured_mhz > 0
                               ? theo->second * own_clock / dev.clock_measured_mhz
                               : theo->second;
    c.fraction_of_theoretical = c.theoretical_gflops > 0 ? c.gflops / c.theoretical_gflops : 0;
    // Why there is no peak: the ceiling's own reason (theoretical_unknown.<name>) or the device's.
    auto unknown = dev.extra.find("theoretical_unknown." + c.name);
    if (unknown == dev.extra.end()) unknown = dev.extra.find("theoretical_unknown");
    if (theo == dev.theoretical_gflops.end() && unknown != dev.extra.end())
      machine.missing.push_back(c.name + ": no theoretical peak: " + unknown->second);
    c.stats = compute_stats(best->values);
    c.probe = group.probe;
    c.params = *best->params;
    c.throttled = throttle_of(samples, *best->params);
    c.limited_by = limit_of(c.throttled, dev, own_clock);
    // Probes that count their instructions (tensor MMAs) give the instruction ceiling too: the
    // same point's rate in warp instructions, and the FLOPs one instruction does.
    instruction_rate(samples, *best->params, c.gflops, &c.flops_per_instruction, &c.instructions_gips);
    if (!spec.instruction_axis.empty()) {
      c.by_instruction = instruction_figures(samples, spec);
      if (!c.by_instruction.empty()) c.instruction = c.by_instruction.front().instruction;
    }
    machine.compute.push_back(std::move(c));
  }
}

}  // namespace roofprobe::fitting
