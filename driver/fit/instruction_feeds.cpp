// The instruction roofline's feeds: warp GIPS, predication, the global and shared walls, SM
// scaling, clocks, and the named levels (shared memory, the host link) of their probes.
#include <algorithm>
#include <cmath>
#include <exception>
#include <stdexcept>

#include "driver/fit/feed_fitting.hpp"
#include "driver/fit/median.hpp"

namespace roofprobe::fitting {

namespace {

// Warp instructions per clock the device can issue: SMs x schedulers (one instruction per
// scheduler per clock; docs/ARCHITECTURE.md). 0 when the device does not say how many schedulers.
double theoretical_warp_gips(const DeviceInfo& device) {
  auto it = device.extra.find("schedulers_per_sm");
  if (it == device.extra.end() || device.compute_units <= 0 || device.clock_measured_mhz <= 0) return 0;
  double schedulers = 0;
  try {
    schedulers = std::stod(it->second);
  } catch (const std::exception&) {
    return 0;
  }
  return device.compute_units * schedulers * device.clock_measured_mhz * 1e-3;
}

}  // namespace

void fit_warp_gips(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  const auto points = group_by_point(group.samples, spec.metric);
  const PointSamples* best = best_point(points);
  if (best == nullptr) return;
  InstructionCeiling w;
  w.measured_gips = best->median;
  w.theoretical_gips = theoretical_warp_gips(machine.device);
  w.clock_mhz = machine.device.clock_measured_mhz;
  w.stats = compute_stats(best->values);
  w.probe = group.probe;
  // Two probes may feed warp GIPS; the machine keeps the highest.
  if (!machine.warp_gips || machine.warp_gips->measured_gips < w.measured_gips) machine.warp_gips = w;
}

void fit_predication(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  std::map<int, std::vector<const Sample*>> by_lanes;
  for (const Sample* s : group.samples)
    if (auto lanes = int_param(s->params, spec.x_axis)) by_lanes[*lanes].push_back(s);
  std::vector<PredicationPoint> table;
  for (const auto& [lanes, samples] : by_lanes) {
    const std::optional<PointSamples> best = best_of(samples, spec.metric);
    if (!best) continue;
    PredicationPoint p;
    p.active_lanes = lanes;
    p.warp_gips = best->median;
    p.thread_gips = best->median * lanes / 32.0;  // thread instructions / 32, per docs/ARCHITECTURE.md
    table.push_back(p);
  }
  // Most active lanes first, as the instruction roofline lists them.
  std::sort(table.begin(), table.end(), [](const auto& a, const auto& b) { return a.active_lanes > b.active_lanes; });
  if (!table.empty()) machine.predication = std::move(table);
}

void fit_walls(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  const bool shared = spec.wall_set == "shared";
  if (!shared && spec.wall_set != "global")
    throw std::invalid_argument("wall_set '" + spec.wall_set + "' is not global or shared");
  std::vector<Wall>& walls = shared ? machine.shared_walls : machine.global_walls;
  for (const auto& [key, samples] : split_series(group.samples, spec.series_axes)) {
    const std::optional<PointSamples> best = best_of(samples, spec.metric);
    if (!best) continue;
    const Sample* first = first_sample_of(samples, *best->params);
    const double per = shared ? first->shared_wavefronts : first->transactions;
    if (!(per > 0) || !(first->warp_instructions > 0)) continue;  // nothing counted: no wall
    Wall w;
    w.pattern = render_name(spec.name_pattern, *best->params, key, /*upper=*/false);
    if (auto bytes = int_param(*best->params, "word_bytes")) w.word_bytes = *bytes;
    if (shared) w.conflict_degree = int_param(*best->params, "conflict_degree").value_or(0);
    // Warp instructions per transaction from the probe's accounting (its address model counts
    // the sectors or wavefronts of each request); the rates are what the device did with them.
    w.instruction_intensity = first->warp_instructions / per;
    w.gtxn_s = best->median;
    const std::optional<PointSamples> by_gips = best_of(samples, "gips");
    w.warp_gips = by_gips ? by_gips->median : 0;
    w.measured_intensity = w.gtxn_s > 0 ? w.warp_gips / w.gtxn_s : 0;
    walls.push_back(std::move(w));
  }
  // Highest intensity first: stride-0 / broadcast, then the wider and wider patterns.
  std::stable_sort(walls.begin(), walls.end(),
                   [](const Wall& a, const Wall& b) { return a.instruction_intensity > b.instruction_intensity; });
}

void fit_scaling(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  for (const auto& [key, samples] : split_series(group.samples, spec.series_axes)) {
    std::map<int, std::vector<const Sample*>> by_units;
    bool has_flops = false;
    for (const Sample* s : samples) {
      has_flops = has_flops || s->flops > 0;
      if (auto units = int_param(s->params, spec.x_axis))
        by_units[*units > 0 ? *units : machine.device.compute_units].push_back(s);  // 0: all of them
    }
    const std::string metric = !spec.metric.empty() ? spec.metric : has_flops ? "gflops" : "gbs";
    for (const auto& [units, at] : by_units) {
      const std::optional<PointSamples> best = best_of(at, metric);
      if (!best) continue;
      auto it = std::find_if(machine.scaling.begin(), machine.scaling.end(),
                             [&](const ScalingPoint& p) { return p.units == units; });
      if (it == machine.scaling.end()) {
        machine.scaling.push_back({units, {}});
        it = machine.scaling.end() - 1;
      }
      // A bandwidth series is named after the memory level it streams from (HBM, DRAM), as the
      // plots and comparisons name levels; a FLOP series by the feed's pattern.
      const std::string name = has_flops || machine.device.memory_name.empty()
                                   ? render_name(spec.name_pattern, *best->params, key)
                                   : machine.device.memory_name;
      it->ceilings[name] = best->median;
    }
  }
  std::sort(machine.scaling.begin(), machine.scaling.end(),
            [](const ScalingPoint& a, const ScalingPoint& b) { return a.units < b.units; });
}

void fit_clocks(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  for (const auto& [key, samples] : split_series(group.samples, spec.series_axes)) {
    std::vector<double> mhz;
    for (const Sample* s : samples)
      if (s->clock_mhz > 0 && std::isfinite(s->clock_mhz)) mhz.push_back(s->clock_mhz);
    if (mhz.empty()) continue;
    ClockReading c;
    c.load = render_name(spec.name_pattern, samples.front()->params, key.empty() ? "load" : key, /*upper=*/false);
    c.median_mhz = median_of(mhz);
    c.min_mhz = *std::min_element(mhz.begin(), mhz.end());
    c.max_mhz = *std::max_element(mhz.begin(), mhz.end());
    c.samples = static_cast<int>(mhz.size());
    c.probe = group.probe;
    machine.clocks.push_back(std::move(c));
  }
}

// One memory level with a fixed name (shared memory, the host link) from the best point of the
// primary series; the other series' bests go to by_series.
void fit_named_level(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  if (spec.level_name.empty()) throw std::invalid_argument("a NamedLevel feed needs level_name");
  const Series series = split_series(group.samples, spec.series_axes);
  const std::string wanted = canonical_series(spec.primary_series);
  auto primary = series.begin();
  if (!spec.primary_series.empty())
    primary = std::find_if(series.begin(), series.end(), [&](const auto& s) { return s.first == wanted; });
  if (primary == series.end()) {
    machine.missing.push_back("level '" + spec.level_name + "' of probe '" + group.probe +
                              "': no samples of the primary series '" + spec.primary_series + "'");
    return;
  }
  const std::optional<PointSamples> best = best_of(primary->second, spec.metric);
  if (!best) return;
  Plateau p;
  p.value = best->median;
  p.value_ci95 = median_interval95(best->values);  // the median of the best point's samples
  p.stats = compute_stats(best->values);
  p.sizes = 1;
  const Sample* first = first_sample_of(primary->second, *best->params);
  p.x_lo = p.x_hi = first != nullptr ? first->working_set_bytes : 0;
  MemoryLevel level = make_level(p, spec.level_name, spec.metric, machine.device);
  if (spec.level_name == "shared") level.gtxn_s = level.gbs / 128;  // wavefronts, not sectors
  level.probe = group.probe;
  level.params = *best->params;
  for (const auto& [key, samples] : series) {
    if (key == primary->first) continue;
    if (const auto b = best_of(samples, spec.metric)) level.by_series[key] = b->median;
  }
  machine.memory.push_back(std::move(level));
}

}  // namespace roofprobe::fitting
