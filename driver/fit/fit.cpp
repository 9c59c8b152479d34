// Fitting: bandwidth-vs-working-set curves -> memory levels (the level model of level_model.hpp,
// named from the cache hierarchy); maxima of compute probes -> compute ceilings; external
// bandwidth CSVs -> memory levels.
#include "driver/fit/fit.hpp"
#include "driver/fit/median.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "driver/model/atomic_file.hpp"
#include "driver/model/errors.hpp"
#include "driver/report/points.hpp"
#include "driver/model/units.hpp"

namespace roofprobe {

// ---- statistics ------------------------------------------------------------------------------

Stats compute_stats(std::vector<double> values) {
  Stats st;
  if (values.empty()) return st;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  st.best = *hi;
  const double min_value = *lo;
  st.samples = static_cast<int>(values.size());
  st.median = median_of(std::move(values));
  st.spread = st.median != 0 ? (st.best - min_value) / std::fabs(st.median) : 0;
  return st;
}

// ---- memory levels ---------------------------------------------------------------------------

std::vector<Plateau> find_plateaus(const std::vector<CurvePoint>& points, const LevelModelOptions& options,
                                   std::string* model) {
  const LevelModelFit fit = fit_level_model(points, options);
  if (model != nullptr) *model = fit.model;
  std::vector<Plateau> plateaus;
  for (const FittedLevel& level : fit.levels) {
    Plateau p;
    p.x_lo = level.x_lo;
    p.x_hi = level.x_hi;
    p.value = level.rate;
    p.value_ci95 = level.rate_ci95;
    p.capacity = level.capacity;
    p.capacity_ci95 = level.capacity_ci95;
    p.stats = compute_stats(level.samples);
    p.sizes = level.sizes;
    plateaus.push_back(std::move(p));
  }
  return plateaus;
}

// ---- naming ----------------------------------------------------------------------------------

namespace {

// "L2", "L2.b", "L2.c", ...: later plateaus that land on a name already used.
void suffix_duplicates(std::vector<std::string>& names) {
  std::map<std::string, int> seen;
  for (std::string& name : names) {
    const int count = seen[name]++;
    if (count > 0) name += "." + std::string(1, static_cast<char>('a' + std::min(count, 25)));
  }
}

}  // namespace

// A knee more than this many times the last cache's capacity is not a cache's. (A soft knee, the
// size where half the accesses miss, lies up to about twice past a victim L3: 70 MB for a Zen
// 4's 32 MB read curve.)
constexpr double kBeyondLastCache = 4.0;

std::vector<std::string> name_levels(const std::vector<Plateau>& plateaus, const std::vector<CacheInfo>& caches,
                                     const std::string& memory_name, const std::string& first_level) {
  std::vector<std::string> names;
  if (caches.empty()) {
    for (std::size_t i = 0; i < plateaus.size(); ++i)
      names.push_back(i + 1 == plateaus.size() ? memory_name : "L" + std::to_string(i + 1));
    return names;
  }
  // A level ends at its knee: it is the cache whose capacity is nearest its knee (in ratio), never
  // a nearer cache than the level before it. The last level (no knee) and a knee far past the
  // last cache are memory. A series that declares its nearest level (`first_level`: the kernel
  // can reach no nearer one, and reaches this one) has it as its first level when it has more
  // than one: its knee says where the level ends, not which level it is (an H100's aggregate L1,
  // 33 MB, and its 50 MB L2 are less than an octave apart).
  std::size_t floor_level = 0;
  std::size_t declared = caches.size();
  for (std::size_t k = 0; k < caches.size(); ++k)
    if (caches[k].name == first_level) declared = k;
  const bool use_declared = declared < caches.size() && plateaus.size() > 1;
  if (use_declared) floor_level = declared;
  for (std::size_t i = 0; i < plateaus.size(); ++i) {
    const Plateau& p = plateaus[i];
    if (use_declared && i == 0) {
      names.push_back(caches[declared].name);
      floor_level = declared + 1;
      continue;
    }
    std::size_t level = caches.size();
    if (p.capacity > 0) {
      double nearest = std::numeric_limits<double>::infinity();
      for (std::size_t k = floor_level; k < caches.size(); ++k) {
        const double capacity = static_cast<double>(caches[k].bytes) * std::max(1, caches[k].instances);
        const double distance = std::fabs(std::log(p.capacity / capacity));
        if (distance < nearest) nearest = distance, level = k;
      }
      const CacheInfo& last = caches.back();
      if (p.capacity > kBeyondLastCache * static_cast<double>(last.bytes) * std::max(1, last.instances))
        level = caches.size();
    }
    level = std::max(level, floor_level);
    floor_level = level;
    names.push_back(level < caches.size() ? caches[level].name : memory_name);
  }
  suffix_duplicates(names);
  return names;
}

// ---- fitting samples -------------------------------------------------------------------------

namespace {

// Samples of one (backend, probe), in the order they first appear.
struct ProbeSamples {
  std::string backend, probe;
  std::vector<const Sample*> samples;
};

std::vector<ProbeSamples> group_by_probe(const std::vector<Sample>& samples) {
  std::vector<ProbeSamples> groups;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (const Sample& s : samples) {
    auto [it, inserted] = index.try_emplace({s.backend, s.probe}, groups.size());
    if (inserted) groups.push_back({s.backend, s.probe, {}});
    groups[it->second].samples.push_back(&s);
  }
  return groups;
}

// "axis=value;axis=value" of the series axes a sample has (sorted, params_to_string).
std::string series_key(const Params& params, const std::vector<std::string>& axes) {
  Params sub;
  for (const std::string& axis : axes) {
    auto it = params.find(axis);
    if (it != params.end()) sub.insert(*it);
  }
  return params_to_string(sub);
}

// Canonical form of a series written by hand ("b=1;a=2" -> "a=2;b=1").
std::string canonical_series(const std::string& text) {
  try {
    return params_to_string(params_from_string(text));
  } catch (const std::exception&) {
    return text;
  }
}

using Series = std::vector<std::pair<std::string, std::vector<const Sample*>>>;

// Splits samples into series, in the order the series first appear.
Series split_series(const std::vector<const Sample*>& samples, const std::vector<std::string>& axes) {
  Series series;
  std::map<std::string, std::size_t> index;
  for (const Sample* s : samples) {
    const std::string key = series_key(s->params, axes);
    auto [it, inserted] = index.try_emplace(key, series.size());
    if (inserted) series.push_back({key, {}});
    series[it->second].second.push_back(s);
  }
  return series;
}

std::optional<double> x_value(const Sample& s, const std::string& x_axis) {
  if (s.params.count(x_axis) != 0) {
    try {
      return param_real(s.params, x_axis);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  if (x_axis == "working_set_bytes" && s.working_set_bytes > 0) return s.working_set_bytes;
  return std::nullopt;
}

// The samples of one point (one full parameter set) and their median rate.
struct PointSamples {
  const Params* params = nullptr;
  std::vector<double> values;
  double median = 0;
};

// Groups samples by point (params_to_string of all parameters), median per point.
std::map<std::string, PointSamples> group_by_point(const std::vector<const Sample*>& samples,
                                                   const std::string& metric) {
  std::map<std::string, PointSamples> points;
  for (const Sample* s : samples) {
    const double value = s->metric(metric);
    if (!std::isfinite(value)) continue;  // a failed or zero-time sample carries no rate
    PointSamples& p = points[params_to_string(s->params)];
    p.params = &s->params;
    p.values.push_back(value);
  }
  for (auto& [key, p] : points) p.median = median_of(p.values);
  return points;
}

const PointSamples* best_point(const std::map<std::string, PointSamples>& points) {
  const PointSamples* best = nullptr;
  for (const auto& [key, p] : points)
    if (best == nullptr || p.median > best->median) best = &p;
  return best;
}

// A pointer into a temporary map would dangle: callers keep the map, or use best_of.
const PointSamples* best_point(std::map<std::string, PointSamples>&&) = delete;

// The best point of `samples` by `metric`, copied out of the grouping (its params still point
// into `samples`).
std::optional<PointSamples> best_of(const std::vector<const Sample*>& samples, const std::string& metric) {
  const auto points = group_by_point(samples, metric);
  if (const PointSamples* best = best_point(points)) return *best;
  return std::nullopt;
}

// Median clock of the point's samples (each measured during or right after its launch); 0 when
// none carries one.
double median_clock_of(const std::vector<const Sample*>& samples, const Params& params) {
  std::vector<double> mhz;
  for (const Sample* s : samples)
    if (s->params == params && s->clock_mhz > 0 && std::isfinite(s->clock_mhz)) mhz.push_back(s->clock_mhz);
  return mhz.empty() ? 0 : median_of(mhz);
}

// A sample of the point with these parameters (its work counts are the point's).
const Sample* first_sample_of(const std::vector<const Sample*>& samples, const Params& params) {
  for (const Sample* s : samples)
    if (s->params == params) return s;
  return nullptr;
}

// One series as a curve over the size axis. Where a size has several points (axes that are
// neither the size nor a series axis, e.g. an occupancy sweep), the best point is the one the
// hardware can reach, so its samples represent that size; repetitions are kept as samples.
struct SizeCurve {
  std::vector<CurvePoint> points;
  std::map<double, Params> params_at;  // size -> the chosen point's parameters
  std::map<double, double> median_at;  // size -> the chosen point's median
};

SizeCurve series_curve(const std::vector<const Sample*>& samples, const FeedSpec& spec) {
  std::map<double, std::vector<const Sample*>> by_size;
  for (const Sample* s : samples)
    if (auto x = x_value(*s, spec.x_axis)) by_size[*x].push_back(s);
  SizeCurve curve;
  for (const auto& [x, at_size] : by_size) {
    const auto points = group_by_point(at_size, spec.metric);
    const PointSamples* best = best_point(points);
    curve.params_at[x] = *best->params;
    curve.median_at[x] = best->median;
    for (double v : best->values) curve.points.push_back({x, v});
  }
  return curve;
}

// The rate figures every memory level carries, from its plateau and the device.
MemoryLevel make_level(const Plateau& p, const std::string& name, const std::string& metric, const DeviceInfo& device) {
  MemoryLevel level;
  level.level = name;
  level.source = "empirical";
  if (metric == "gtxn_s") {
    level.gtxn_s = p.value;
    level.gbs = p.value * 32;
  } else {
    level.gbs = p.value;
    level.gtxn_s = p.value / 32;
  }
  if (device.clock_measured_mhz > 0 && device.compute_units > 0)
    level.bytes_per_clk_per_unit = level.gbs * 1e9 / (device.clock_measured_mhz * 1e6) / device.compute_units;
  level.working_set_lo = p.x_lo;
  level.working_set_hi = p.x_hi;
  const double to_gbs = level.gtxn_s > 0 && metric == "gtxn_s" ? 32 : 1;
  if (p.value_ci95.known()) level.gbs_ci95 = {p.value_ci95.lo * to_gbs, p.value_ci95.hi * to_gbs};
  level.capacity_bytes = p.capacity;
  level.capacity_ci95 = p.capacity_ci95;
  level.stats = p.stats;
  return level;
}

// The probe's reach rule for the series of `sample` (FeedSpec::series_reach), or none.
const FeedSpec::SeriesReach* reach_of(const FeedSpec& spec, const Sample& sample) {
  for (const FeedSpec::SeriesReach& rule : spec.series_reach) {
    bool matches = true;
    for (const auto& [axis, value] : params_from_string(rule.params)) {
      auto it = sample.params.find(axis);
      matches = matches && it != sample.params.end() && it->second == value;
    }
    if (matches) return &rule;
  }
  return nullptr;
}

// One series' curve (one access kernel: read, update, copy, ...) fitted on its own, its levels
// named from the hierarchy.
struct SeriesLevels {
  std::string key;
  std::vector<const Sample*> samples;
  SizeCurve curve;
  std::vector<Plateau> plateaus;
  std::vector<std::string> names;
  bool first_level_only = false;  // FeedSpec::SeriesReach: publishes its first level and memory only
};

std::optional<SeriesLevels> fit_series_levels(const std::string& key, const std::vector<const Sample*>& samples,
                                              const FeedSpec& spec, const LevelModelOptions& options,
                                              const DeviceInfo& device, std::string* why_not) {
  SeriesLevels s{key, samples, series_curve(samples, spec), {}, {}};
  std::string model;
  std::vector<Plateau> plateaus = find_plateaus(s.curve.points, options, &model);
  if (plateaus.empty()) {
    if (why_not != nullptr) *why_not = model.empty() ? "fewer than 3 working-set sizes" : model;
    return std::nullopt;
  }
  const FeedSpec::SeriesReach* reach = reach_of(spec, *samples.front());
  s.first_level_only = reach != nullptr && reach->first_level_only;
  std::vector<std::string> names =
      name_levels(plateaus, device.caches, device.memory_name, reach ? reach->first_level : "");
  // Past the last cache there is no further level: a level named memory before the last is the
  // drawn-out transition into memory (a victim L3 still hitting part of the set), so memory is
  // the level at the largest working sets. Cache duplicates (a GPU's near and far L2 halves) stay.
  const std::string& memory = device.memory_name;
  auto is_memory = [&](const std::string& n) { return n == memory || n.rfind(memory + ".", 0) == 0; };
  for (std::size_t i = 0; i < plateaus.size(); ++i) {
    const bool last = i + 1 == plateaus.size();
    if (!device.caches.empty() && !last && is_memory(names[i])) continue;
    if (reach != nullptr && reach->first_level_only && i > 0 && !last) continue;
    s.plateaus.push_back(plateaus[i]);
    s.names.push_back(last && is_memory(names[i]) ? memory : names[i]);
  }
  return s;
}

// True when the samples of sizes in [lo, hi] exist and every one is flagged (noisy).
bool all_flagged(const std::vector<const Sample*>& samples, const std::string& x_axis, double lo, double hi) {
  bool any = false;
  for (const Sample* s : samples) {
    const auto x = x_value(*s, x_axis);
    if (!x || *x < lo * (1 - 1e-9) || *x > hi * (1 + 1e-9)) continue;
    if (!is_noisy(*s)) return false;
    any = true;
  }
  return any;
}

// Memory levels of a bandwidth probe. Every series (access kernel) is fitted separately; a
// level's headline is the fastest kernel at it (total bytes moved per second, reads + writes),
// and every kernel's own figure stays in by_series.
void fit_memory_levels(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  // Underfilled launches (fewer work items than threads) measure the launch's parallelism, not
  // a level: a GPU's cg read then rises linearly with the set up to a few MB, a ramp sharper
  // than the model's A/w, which pulled an H100's fitted L2 to twice its plateau.
  std::vector<const Sample*> filled;
  for (const Sample* s : group.samples)
    if (!is_underfilled(*s)) filled.push_back(s);
  if (filled.empty() && !group.samples.empty()) {
    machine.missing.push_back("memory levels of probe '" + group.probe + "' (" + group.backend +
                              "): every launch had fewer work items than threads (underfilled); "
                              "sweep larger working sets");
    return;
  }
  const Series series = split_series(filled, spec.series_axes);
  LevelModelOptions options;
  options.allow_ramp = filled.size() == group.samples.size();
  for (const CacheInfo& c : machine.device.caches)
    options.capacity_hints.push_back(static_cast<double>(c.bytes) * std::max(1, c.instances));
  options.knees_at_capacities = machine.device.kind == "cpu";
  std::vector<SeriesLevels> fitted;
  for (const auto& [key, samples] : series) {
    std::string why_not;
    if (auto s = fit_series_levels(key, samples, spec, options, machine.device, &why_not)) {
      fitted.push_back(std::move(*s));
    } else {
      machine.missing.push_back("memory levels of probe '" + group.probe + "' (" + group.backend +
                                (key.empty() ? "" : ", " + key) + "): " + why_not);
    }
  }
  // Level names in hierarchy order: the primary series' first, then any only other series have.
  const std::string primary = canonical_series(spec.primary_series);
  std::stable_partition(fitted.begin(), fitted.end(), [&](const SeriesLevels& s) { return s.key == primary; });
  // When the primary series sees the whole hierarchy, its levels are the hierarchy: another
  // kernel's extra level is a bend of its own curve (a Zen 4's copy and write curves bent a
  // second time at 120 MB on their way to DRAM: an "L3.b"), and its figures still count at the
  // primary's levels (below). A primary that reaches only its first level (a GPU's ca read)
  // leaves the further levels to the kernels that reach them.
  const bool primary_defines = !fitted.empty() && fitted.front().key == primary && !fitted.front().first_level_only;
  std::vector<std::string> order;
  for (const SeriesLevels& s : fitted) {
    if (primary_defines && s.key != primary) break;
    for (const std::string& name : s.names)
      if (std::find(order.begin(), order.end(), name) == order.end()) order.push_back(name);
  }
  for (const std::string& name : order) {
    const SeriesLevels* head = nullptr;
    const Plateau* best = nullptr;
    std::map<std::string, double> by_series;
    for (const SeriesLevels& s : fitted)
      for (std::size_t i = 0; i < s.names.size(); ++i) {
        if (s.names[i] != name) continue;
        if (!s.key.empty()) by_series[s.key] = s.plateaus[i].value;
        if (best == nullptr || s.plateaus[i].value > best->value) best = &s.plateaus[i], head = &s;
      }
    MemoryLevel level = make_level(*best, name, spec.metric, machine.device);
    // A kernel whose fit merged this level with a neighbour (an update kernel whose L2 and L3
    // rates lie within its noise: one level from 80 KiB to 50 MiB on a Zen 4) still runs here:
    // its figure is the rate of its own level serving the middle of this level's sizes. It may
    // be the headline; the sizes and the capacity stay those of the kernels that resolved it.
    const double middle = std::sqrt(best->x_lo * best->x_hi);
    const Plateau* rate = best;
    const SeriesLevels* rate_head = head;
    for (const SeriesLevels& s : fitted) {
      if (s.key.empty() || by_series.count(s.key) != 0 || s.first_level_only || s.plateaus.size() < 2) continue;
      if (middle < s.plateaus.front().x_lo || middle > s.plateaus.back().x_lo) continue;  // beyond its reach
      for (const Plateau& p : s.plateaus) {
        if (middle < p.x_lo || middle > p.x_hi) continue;
        by_series[s.key] = p.value;
        if (p.value > rate->value) rate = &p, rate_head = &s;
      }
    }
    if (rate != best) {
      const MemoryLevel from = make_level(*rate, name, spec.metric, machine.device);
      level.gbs = from.gbs;
      level.gtxn_s = from.gtxn_s;
      level.bytes_per_clk_per_unit = from.bytes_per_clk_per_unit;
      level.gbs_ci95 = from.gbs_ci95;
      level.stats = from.stats;
    }
    level.probe = group.probe;
    level.headline_series = rate_head->key;
    level.by_series = std::move(by_series);
    level.noisy = all_flagged(rate_head->samples, spec.x_axis, rate->x_lo, rate->x_hi);
    auto at = rate_head->curve.params_at.lower_bound(rate->x_lo * (1 - 1e-9));
    if (at != rate_head->curve.params_at.end()) level.params = at->second;
    level.params.erase(spec.x_axis);
    machine.memory.push_back(std::move(level));
  }
  // A cache the topology reports that no curve resolved is named, not dropped without a word:
  // with the other core busy, a Zen 4's read curve ran at 100-116 GB/s from 256 KiB to 17 MiB,
  // its L2 and L3 one level, and the machine file had no L2 and said nothing.
  if (!fitted.empty())
    for (const CacheInfo& c : machine.device.caches) {
      const bool resolved = std::any_of(machine.memory.begin(), machine.memory.end(), [&](const MemoryLevel& l) {
        return l.probe == group.probe && (l.level == c.name || l.level.rfind(c.name + ".", 0) == 0);
      });
      if (resolved) continue;
      const MemoryLevel* covering = nullptr;
      const double capacity = static_cast<double>(c.bytes) * std::max(1, c.instances);
      for (const MemoryLevel& l : machine.memory)
        if (l.probe == group.probe && l.working_set_lo <= capacity * 2 && l.working_set_hi >= capacity / 2)
          covering = &l;
      machine.missing.push_back("memory level " + c.name + " (" + format_bytes(capacity) +
                                "): no access kernel's curve has a level of its own there" +
                                (covering != nullptr
                                     ? " (" + covering->level + "'s covers its sizes: their rates are within the noise)"
                                     : std::string()));
    }
  if (!fitted.empty())
    machine.provenance["level_model"] =
        "per access kernel: harmonic blend of levels with logistic knees (and a launch ramp where the "
        "criterion keeps one), robust (Cauchy) least squares in log rate, level count by BIC; "
        "intervals are 95%";
}

// Upper-cases a parameter value for a ceiling name; "nofma" keeps the lower-case "no".
std::string name_token(const std::string& value) {
  if (value == "nofma") return "noFMA";
  std::string out = value;
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

// "{precision}.{form}" with each {axis} replaced by its rendered value (upper-cased for ceiling
// names, as written for wall patterns: "stride-8", "conflict-broadcast"); unknown axes stay as
// written.
std::string render_name(const std::string& pattern, const Params& params, const std::string& fallback,
                        bool upper = true) {
  if (pattern.empty()) return fallback;
  std::string out;
  for (std::size_t pos = 0; pos < pattern.size();) {
    const std::size_t open = pattern.find('{', pos);
    const std::size_t close = open == std::string::npos ? std::string::npos : pattern.find('}', open);
    if (close == std::string::npos) {
      out += pattern.substr(pos);
      break;
    }
    out += pattern.substr(pos, open - pos);
    const std::string axis = pattern.substr(open + 1, close - open - 1);
    auto it = params.find(axis);
    out += it != params.end() ? (upper ? name_token(it->second) : it->second) : pattern.substr(open, close - open + 1);
    pos = close + 1;
  }
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
    auto unknown = dev.extra.find("theoretical_unknown");
    if (theo == dev.theoretical_gflops.end() && unknown != dev.extra.end())
      machine.missing.push_back(c.name + ": no theoretical peak: " + unknown->second);
    c.stats = compute_stats(best->values);
    c.probe = group.probe;
    c.params = *best->params;
    // Probes that count their instructions (tensor MMAs) give the instruction ceiling too: the
    // same point's rate in warp instructions, and the FLOPs one instruction does.
    const Sample* first = first_sample_of(samples, *best->params);
    if (first != nullptr && first->warp_instructions > 0 && first->flops > 0) {
      c.flops_per_instruction = first->flops / first->warp_instructions;
      c.instructions_gips = c.gflops / c.flops_per_instruction;
    }
    machine.compute.push_back(std::move(c));
  }
}

// ---- instruction-roofline feeds -------------------------------------------------------------

// Warp instructions per clock the device can issue: SMs x schedulers (one instruction per
// scheduler per clock; ARCHITECTURE.md). 0 when the device does not say how many schedulers.
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

// Integer value of `axis` in a point's parameters; nullopt when absent or not an integer.
std::optional<int> int_param(const Params& params, const std::string& axis) {
  if (params.count(axis) == 0) return std::nullopt;
  try {
    return static_cast<int>(param_int(params, axis));
  } catch (const std::exception&) {
    return std::nullopt;
  }
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
    p.thread_gips = best->median * lanes / 32.0;  // thread instructions / 32, per ARCHITECTURE.md
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

}  // namespace

namespace {

// Samples flagged while measuring (noisy: the point hit its time budget before its spread fell
// under max_noise) are left out of one feed's maxima series by series: a series keeps only its
// clean points when at least half of its points are clean; otherwise it keeps them all and is
// returned in `noisy` (its ceilings are published with the noisy flag and their spread). The
// decision is per series, never per probe: a busy core during the FP64 points must not delete the
// FP64 ceiling because the FP32 points were clean.
ProbeSamples for_maxima(const ProbeSamples& group, const FeedSpec& spec, std::set<std::string>& noisy) {
  ProbeSamples kept = group;
  kept.samples.clear();
  for (const auto& [key, samples] : split_series(group.samples, spec.series_axes)) {
    std::set<int> points, clean_points;
    for (const Sample* s : samples) {
      points.insert(s->point);
      if (!is_noisy(*s)) clean_points.insert(s->point);
    }
    const bool use_clean = 2 * clean_points.size() >= points.size();
    if (!use_clean) noisy.insert(key);
    for (const Sample* s : samples)
      if (!use_clean || !is_noisy(*s)) kept.samples.push_back(s);
  }
  return kept;
}

// Marks what one feed fitted from noisy series: compute ceilings by their series, other feeds by
// a note (their sections carry no flag).
void mark_noisy(const std::set<std::string>& noisy, const ProbeSamples& group, const FeedSpec& spec,
                std::size_t first_new_ceiling, Machine& machine) {
  if (noisy.empty()) return;
  if (spec.kind == FeedKind::ComputeCeiling) {
    for (std::size_t i = first_new_ceiling; i < machine.compute.size(); ++i)
      if (noisy.count(series_key(machine.compute[i].params, spec.series_axes)) != 0) machine.compute[i].noisy = true;
    return;
  }
  for (const std::string& key : noisy)
    machine.missing.push_back("probe '" + group.probe + "'" + (key.empty() ? "" : " (" + key + ")") +
                              ": most points are flagged noisy; its figures include them");
}

// Nearest level first. Levels arrive in probe and series order (a GPU's ca read brings L1 and
// HBM, the cg read then L2), so they are ranked by the hierarchy: the caches in the device's
// order ("L2.b" with its L2), shared memory right after L1 (beside it on NVIDIA GPUs), then
// memory, then the host link ("system").
void order_memory_levels(Machine& machine) {
  const auto& caches = machine.device.caches;
  const double memory_rank = caches.empty() ? 100.0 : static_cast<double>(caches.size());
  auto rank = [&](const MemoryLevel& l) {
    if (l.level == "system") return memory_rank + 1;
    if (l.level == "shared") return 0.5;
    const std::string base = l.level.substr(0, l.level.find('.'));
    if (base == machine.device.memory_name) return memory_rank;
    for (std::size_t k = 0; k < caches.size(); ++k)
      if (caches[k].name == base) return static_cast<double>(k);
    if (base.size() > 1 && base[0] == 'L' && std::isdigit(static_cast<unsigned char>(base[1])))
      return std::atof(base.c_str() + 1) - 1;  // no hierarchy known: L1, L2, ... by number
    return memory_rank - 0.5;
  };
  std::stable_sort(machine.memory.begin(), machine.memory.end(),
                   [&](const MemoryLevel& a, const MemoryLevel& b) { return rank(a) < rank(b); });
}

// A ceiling above the theoretical peak at the measured clock cannot be real: report it as a
// probable probe bug instead of publishing it. 3% allows for clock drift between the
// measurement of the clock and of the ceiling.
void reject_above_theory(Machine& machine) {
  constexpr double kTolerance = 1.03;
  auto& compute = machine.compute;
  for (auto it = compute.begin(); it != compute.end();) {
    if (it->theoretical_gflops > 0 && it->gflops > kTolerance * it->theoretical_gflops) {
      std::ostringstream why;
      why.precision(4);
      why << it->name << ": rejected: " << it->gflops << " GFLOP/s is above the theoretical " << it->theoretical_gflops
          << " GFLOP/s at " << it->clock_mhz << " MHz by more than 3% (probable probe bug)";
      machine.missing.push_back(why.str());
      it = compute.erase(it);
    } else {
      ++it;
    }
  }
  if (machine.warp_gips && machine.warp_gips->theoretical_gips > 0 &&
      machine.warp_gips->measured_gips > kTolerance * machine.warp_gips->theoretical_gips) {
    std::ostringstream why;
    why.precision(4);
    why << "instructions.warp_gips: rejected: " << machine.warp_gips->measured_gips << " GIPS is above the theoretical "
        << machine.warp_gips->theoretical_gips << " GIPS by more than 3% (probable probe bug)";
    machine.missing.push_back(why.str());
    machine.warp_gips.reset();
  }
}

}  // namespace

void fit_samples(const std::vector<Sample>& samples, Machine& machine, const FeedTable* feeds) {
  for (const ProbeSamples& group : group_by_probe(samples)) {
    // The feeds of the backend that measured the samples: a CPU and a CUDA probe of one name
    // fit differently (their series axes and levels differ). The run's own record first.
    const std::vector<FeedSpec>* specs = nullptr;
    if (feeds != nullptr)
      if (auto it = feeds->find({group.backend, group.probe}); it != feeds->end()) specs = &it->second;
    if (specs == nullptr)
      if (const Probe* probe = Registry::instance().probe(group.backend, group.probe)) specs = &probe->info().feeds;
    if (specs == nullptr) {
      machine.missing.push_back("probe '" + group.probe + "' (" + group.backend +
                                "): not known to this build (backend '" + group.backend +
                                "' not compiled in?) and no feeds.yaml beside the sweep declares it; " +
                                std::to_string(group.samples.size()) + " samples not fitted");
      continue;
    }
    for (const FeedSpec& spec : *specs) {
      // One feed that cannot be fitted (a metric the samples do not carry) must not cost the
      // others: it is reported with the levels and ceilings that were fitted.
      try {
        // Memory-level curves keep every sample: the fit is robust to outliers by design, and
        // dropping noisy sizes would leave gaps exactly where a shared machine is busiest.
        if (spec.kind == FeedKind::MemoryLevels) {
          fit_memory_levels(group, spec, machine);
          continue;
        }
        std::set<std::string> noisy;
        const ProbeSamples kept = for_maxima(group, spec, noisy);
        const std::size_t first_new_ceiling = machine.compute.size();
        switch (spec.kind) {
          case FeedKind::MemoryLevels:
            break;
          case FeedKind::ComputeCeiling:
            fit_compute_ceilings(kept, spec, machine);
            break;
          case FeedKind::NamedLevel:
            fit_named_level(kept, spec, machine);
            break;
          case FeedKind::WarpGips:
            fit_warp_gips(kept, spec, machine);
            break;
          case FeedKind::Predication:
            fit_predication(kept, spec, machine);
            break;
          case FeedKind::Walls:
            fit_walls(kept, spec, machine);
            break;
          case FeedKind::Scaling:
            fit_scaling(kept, spec, machine);
            break;
          case FeedKind::Clock:
            fit_clocks(kept, spec, machine);
            break;
        }
        mark_noisy(noisy, group, spec, first_new_ceiling, machine);
      } catch (const std::exception& e) {
        machine.missing.push_back("probe '" + group.probe + "' (" + group.backend + "), metric '" + spec.metric +
                                  "': not fitted: " + e.what());
      }
    }
  }
  std::stable_sort(machine.compute.begin(), machine.compute.end(),
                   [](const ComputeCeiling& a, const ComputeCeiling& b) { return a.name < b.name; });
  order_memory_levels(machine);
  reject_above_theory(machine);
}

// ---- external bandwidth CSV ------------------------------------------------------------------

namespace {

std::string trim(const std::string& text) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  std::string out = text.substr(b, e - b);
  if (out.size() >= 2 && out.front() == '"' && out.back() == '"') out = out.substr(1, out.size() - 2);
  return out;
}

// Fields of one record, quote-aware (a quoted field may hold commas), each trimmed.
std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields = split_csv_record(line);
  for (std::string& f : fields) f = trim(f);
  return fields;
}

std::string lower(std::string text) {
  for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

class CsvError {
 public:
  CsvError(const std::string& path, int line) : prefix_(path + ":" + std::to_string(line) + ": ") {}
  [[noreturn]] void fail(const std::string& what) const { throw InputError(prefix_ + what); }

 private:
  std::string prefix_;
};

// A positive finite number, or InputError naming the file, line and column.
double parse_positive(const std::string& field, const std::string& column, const CsvError& err) {
  if (field.empty()) err.fail("column '" + column + "' is empty");
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(field.c_str(), &end);
  if (end == field.c_str() || *end != '\0' || errno == EINVAL)
    err.fail("column '" + column + "': '" + field + "' is not a number");
  if (!std::isfinite(v)) err.fail("column '" + column + "': '" + field + "' is not finite");
  if (v <= 0) err.fail("column '" + column + "': '" + field + "' must be positive");
  return v;
}

// Reads (working_set_bytes, gbs) rows; '#' lines and blank lines are skipped, columns found by
// header name in any order.
std::vector<CurvePoint> read_bandwidth_csv(const std::string& path) {
  check_input_file(path, "a bandwidth CSV");  // a FIFO or /dev/zero would never end
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the file");
  std::vector<CurvePoint> points;
  std::string line;
  int line_no = 0;
  std::optional<std::size_t> x_col, y_col;
  std::size_t needed = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 BOM
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    const CsvError err(path, line_no);
    const std::vector<std::string> fields = split_csv_line(line);
    if (!x_col) {  // the header
      for (std::size_t i = 0; i < fields.size(); ++i) {
        const std::string name = lower(fields[i]);
        if (name == "working_set_bytes" && !x_col) x_col = i;
        if (name == "gbs" && !y_col) y_col = i;
      }
      if (!x_col || !y_col)
        err.fail(std::string("header has no '") + (!x_col ? "working_set_bytes" : "gbs") +
                 "' column (expected columns working_set_bytes and gbs)");
      needed = std::max(*x_col, *y_col) + 1;
      continue;
    }
    if (fields.size() < needed)
      err.fail("expected at least " + std::to_string(needed) + " fields, found " + std::to_string(fields.size()));
    const double x = parse_positive(fields[*x_col], "working_set_bytes", err);
    const double y = parse_positive(fields[*y_col], "gbs", err);
    points.push_back({x, y});
  }
  const CsvError at_end(path, std::max(1, line_no));
  if (!x_col) at_end.fail("empty file: expected a header with columns working_set_bytes and gbs");
  if (points.empty()) at_end.fail("no data rows after the header");
  return points;
}

}  // namespace

void fit_bandwidth_csv(const std::string& path, Machine& machine, const ExternalSweepOptions& options) {
  const std::vector<CurvePoint> points =
      options.format == SweepFormat::Csv ? read_bandwidth_csv(path) : read_external_sweep(path, options.format);
  LevelModelOptions model_options;
  std::vector<CacheInfo> caches;
  for (std::size_t i = 0; i < options.cache_bytes.size(); ++i) {
    if (!(options.cache_bytes[i] > 0)) throw InputError("fit --cache-sizes: sizes must be positive");
    if (i > 0 && !(options.cache_bytes[i] > options.cache_bytes[i - 1]))
      throw InputError("fit --cache-sizes: give the caches nearest first, each larger than the one before");
    caches.push_back({"L" + std::to_string(i + 1), static_cast<std::uint64_t>(options.cache_bytes[i]), 1});
    model_options.capacity_hints.push_back(options.cache_bytes[i]);
  }
  // Every cache the sweep passes through is given: on a CPU each knee is one of them (fit_memory_levels).
  model_options.knees_at_capacities = machine.device.kind == "cpu" && !caches.empty();
  if (!options.level_names.empty()) model_options.max_levels = static_cast<int>(options.level_names.size());
  std::string model;
  const std::vector<Plateau> plateaus = find_plateaus(points, model_options, &model);
  if (plateaus.empty())
    throw InputError(path + ": " +
                     (model.empty() ? std::string("need at least 3 distinct working-set sizes to fit levels") : model));
  machine.provenance["level_model"] = model;
  machine.device.caches = caches;
  const std::string memory_name = machine.device.memory_name.empty() ? "DRAM" : machine.device.memory_name;
  std::vector<std::string> names = name_levels(plateaus, caches, memory_name);
  if (!options.level_names.empty()) {
    if (options.level_names.size() != plateaus.size()) {
      std::string found;
      for (const Plateau& p : plateaus)
        found += (found.empty() ? "" : ", ") + std::to_string(static_cast<long long>(std::llround(p.value)));
      throw InputError("fit --levels: the sweep shows " + std::to_string(plateaus.size()) + " level" +
                       (plateaus.size() == 1 ? "" : "s") + " (" + found + " GB/s) for " +
                       std::to_string(options.level_names.size()) + " names");
    }
    names = options.level_names;
  }
  for (std::size_t i = 0; i < plateaus.size(); ++i) {
    MemoryLevel level = make_level(plateaus[i], names[i], "gbs", machine.device);
    level.probe = "external";
    machine.memory.push_back(std::move(level));
  }
}

}  // namespace roofprobe
