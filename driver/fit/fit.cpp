// Fitting: bandwidth-vs-working-set curves -> memory levels (the level model of level_model.hpp,
// named from the cache hierarchy); maxima of compute probes -> compute ceilings; fit_samples,
// which hands each probe's feeds to their fitters (the instruction roofline's are in
// instruction_feeds.cpp, external bandwidth CSVs in external_csv.cpp).
#include "driver/fit/fit.hpp"

#include "driver/fit/energy.hpp"
#include "driver/fit/energy_model.hpp"
#include "driver/fit/feed_fitting.hpp"
#include "driver/fit/median.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <set>
#include <sstream>
#include <map>
#include <optional>
#include <utility>

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
                                   std::string* model, std::optional<UnresolvedLevel>* unresolved,
                                   std::vector<UnresolvedLevel>* unlocated, std::vector<UnresolvedLevel>* in_knees) {
  const LevelModelFit fit = fit_level_model(points, options);
  if (model != nullptr) *model = fit.model;
  if (unresolved != nullptr) *unresolved = fit.unresolved;
  if (unlocated != nullptr) *unlocated = fit.unlocated;
  if (in_knees != nullptr) *in_knees = fit.in_knees;
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

namespace {

// Why the data do not locate an unlocated level's rate.
std::string unlocated_why(const UnresolvedLevel& level) {
  if (level.above_samples <= 0) return "(the curve reaches it at too few sizes: a knee, not a plateau)";
  char why[160];
  std::snprintf(
      why, sizeof why,
      "(it lies %.0f%% above the fastest sample of its sizes, %.0f: the model's shape, not the data, put it there)",
      100 * (level.rate / level.above_samples - 1), level.above_samples);
  return why;
}

}  // namespace

std::string unresolved_level_note(const UnresolvedLevel& level, int chosen_levels, const std::string& curve) {
  // Four significant digits, never an exponent: a reader (or a script) takes "1.635e+04" apart.
  const auto figure = [](double v) {
    char text[64];
    std::snprintf(text, sizeof text, std::fabs(v) >= 1000 ? "%.0f" : "%.4g",
                  std::fabs(v) >= 1e4 ? std::round(v / 10) * 10 : v);
    return std::string(text);
  };
  char rate[160];
  if (level.rate_ci95.known())
    std::snprintf(rate, sizeof rate, "%s (95%% CI %s - %s)", figure(level.rate).c_str(),
                  figure(level.rate_ci95.lo).c_str(), figure(level.rate_ci95.hi).c_str());
  else
    std::snprintf(rate, sizeof rate, "%s", figure(level.rate).c_str());
  if (level.in_knee) {
    char evidence[160];
    // A negative statistic: the fit with the hidden level has the smaller residual, and only the
    // criterion's price of its parameters chose the published fit.
    std::snprintf(evidence, sizeof evidence,
                  "likelihood-ratio statistic %.2f against the published fit; %.2f or more would rule it out at 95%%",
                  level.chi_square, kHiddenLevelChiSquare);
    return "a memory level of " + curve + " between " + format_bytes(level.x_lo) + " and " + format_bytes(level.x_hi) +
           ": may hide in the knee there; the data cannot rule out a fit with " + std::to_string(level.levels) +
           " levels, one lasting an octave or more near " + rate + " (" + evidence +
           "): its rate lies between the rates of the levels either side";
  }
  if (level.unlocated)
    return "a memory level of " + curve + " between " + format_bytes(level.x_lo) + " and " + format_bytes(level.x_hi) +
           ": not resolved; the fit with " + std::to_string(level.levels) + " levels has one there, near " +
           std::string(rate) + ", but the data do not locate its rate " + unlocated_why(level) + ": " +
           (level.first ? "the first level of the curve, it is faster than the level after it"
                        : "it lies between the rates of the levels either side");
  if (level.supporting_sizes >= 0)
    return "a memory level of " + curve + " between " + format_bytes(level.x_lo) + " and " + format_bytes(level.x_hi) +
           ": not resolved; a fit with " + std::to_string(level.levels) + " levels puts one near " + rate +
           " there, but the curve is at that rate at " + std::to_string(level.supporting_sizes) + " sampled size" +
           (level.supporting_sizes == 1 ? "" : "s") +
           ", too few for a plateau: a sample inside a knee, or a level the sizes are too coarse to show";
  char evidence[160];
  std::snprintf(evidence, sizeof evidence, "%.1f of the chosen fit with %d (%g would be strong evidence against it)",
                level.delta_bic, chosen_levels, kStrongEvidenceBic);
  return "a memory level of " + curve + " between " + format_bytes(level.x_lo) + " and " + format_bytes(level.x_hi) +
         ": not resolved; a fit with " + std::to_string(level.levels) + " levels, one near " + rate +
         " there, is within a BIC difference of " + evidence + ": the rates beside it may be blends";
}

// ---- naming ----------------------------------------------------------------------------------

namespace {

// One gap in the hierarchy as the series of a probe see it: the same kind of unresolved level,
// over overlapping sizes, in several access kernels (an H200's rmw and copy curves each left a
// level unlocated between its L2 and HBM) is one gap, named once with the series that show it.
struct SeriesGap {
  UnresolvedLevel level;
  int fitted_levels = 0;
  std::vector<std::string> series;
};

bool same_kind(const UnresolvedLevel& a, const UnresolvedLevel& b) {
  return a.unlocated == b.unlocated && a.in_knee == b.in_knee && a.supporting_sizes == b.supporting_sizes;
}

// Merges the gaps of one kind whose spans overlap. The merged span and interval are the unions of
// theirs, so the interval still holds each series' level; the rest (the rate near which it lies,
// the evidence) is the first series' (the primary's, when it has one).
std::vector<SeriesGap> merge_series_gaps(std::vector<SeriesGap> gaps) {
  std::vector<SeriesGap> merged;
  for (SeriesGap& gap : gaps) {
    const auto joins = [&](const SeriesGap& m) {
      return same_kind(m.level, gap.level) && gap.level.x_lo <= m.level.x_hi && m.level.x_lo <= gap.level.x_hi;
    };
    const auto it = std::find_if(merged.begin(), merged.end(), joins);
    if (it == merged.end()) {
      merged.push_back(std::move(gap));
      continue;
    }
    UnresolvedLevel& into = it->level;
    into.x_lo = std::min(into.x_lo, gap.level.x_lo);
    into.x_hi = std::max(into.x_hi, gap.level.x_hi);
    if (into.rate_ci95.known() && gap.level.rate_ci95.known())
      into.rate_ci95 = {std::min(into.rate_ci95.lo, gap.level.rate_ci95.lo),
                        std::max(into.rate_ci95.hi, gap.level.rate_ci95.hi)};
    else
      into.rate_ci95 = {};
    // Two gaps of one series (its first level and the one after, both unlocated) name it once.
    for (std::string& name : gap.series)
      if (std::find(it->series.begin(), it->series.end(), name) == it->series.end())
        it->series.push_back(std::move(name));
  }
  return merged;
}

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

// ---- memory levels and compute ceilings from samples -----------------------------------------

namespace fitting {
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
  bool first_level_only = false;              // FeedSpec::SeriesReach: publishes its first level and memory only
  std::string declared_first;                 // FeedSpec::SeriesReach: the level its first one is, if declared
  std::optional<UnresolvedLevel> unresolved;  // a level its curve cannot rule out
  std::vector<UnresolvedLevel> unlocated;     // levels of its fit whose rates the data do not locate
  std::vector<UnresolvedLevel> in_knees;      // knees of its fit where a level may hide
  int fitted_levels = 0;                      // levels of its fit, before naming drops any
};

std::optional<SeriesLevels> fit_series_levels(const std::string& key, const std::vector<const Sample*>& samples,
                                              const FeedSpec& spec, const LevelModelOptions& options,
                                              const DeviceInfo& device, std::string* why_not) {
  SeriesLevels s{key, samples, series_curve(samples, spec), {}, {}};
  std::string model;
  std::vector<Plateau> plateaus =
      find_plateaus(s.curve.points, options, &model, &s.unresolved, &s.unlocated, &s.in_knees);
  s.fitted_levels = static_cast<int>(plateaus.size() + s.unlocated.size());
  if (plateaus.empty()) {
    if (why_not != nullptr) *why_not = model.empty() ? "fewer than 3 working-set sizes" : model;
    return std::nullopt;
  }
  const FeedSpec::SeriesReach* reach = reach_of(spec, *samples.front());
  s.first_level_only = reach != nullptr && reach->first_level_only;
  if (reach != nullptr) s.declared_first = reach->first_level;
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

// The level `name` across the fitted series: its headline is the fastest kernel there, every
// kernel's own figure goes to by_series.
MemoryLevel level_across_series(const std::string& name, const std::vector<SeriesLevels>& fitted,
                                const ProbeSamples& group, const FeedSpec& spec, const DeviceInfo& device) {
  const SeriesLevels* head = nullptr;
  const Plateau* best = nullptr;
  std::map<std::string, double> by_series;
  for (const SeriesLevels& s : fitted)
    for (std::size_t i = 0; i < s.names.size(); ++i) {
      if (s.names[i] != name) continue;
      if (!s.key.empty()) by_series[s.key] = s.plateaus[i].value;
      if (best == nullptr || s.plateaus[i].value > best->value) best = &s.plateaus[i], head = &s;
    }
  MemoryLevel level = make_level(*best, name, spec.metric, device);
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
    const MemoryLevel from = make_level(*rate, name, spec.metric, device);
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
  return level;
}

// A level's capacity is its knee: where its curve falls to the next level. Named after a cache,
// the knee lies within kBeyondLastCache of the size the device reports for it; where it does
// not, the level says so: an H200's cg read runs at 11.2 TB/s on a 1 MiB set and falls to 8.5-10.8
// from 2 MiB on, far inside its 60 MiB L2, and its L2 is the faster rate with a knee at 1.2 MB.
// Levels from `first` on, one probe's.
void explain_capacities(Machine& machine, std::size_t first) {
  for (std::size_t i = first; i < machine.memory.size(); ++i) {
    MemoryLevel& level = machine.memory[i];
    if (!(level.capacity_bytes > 0)) continue;
    const std::string cache_name = level.level.substr(0, level.level.find('.'));
    const auto cache = std::find_if(machine.device.caches.begin(), machine.device.caches.end(),
                                    [&](const CacheInfo& c) { return c.name == cache_name; });
    if (cache == machine.device.caches.end() || cache->bytes == 0) continue;
    const double reported = static_cast<double>(cache->bytes) * std::max(1, cache->instances);
    const double ratio = level.capacity_bytes / reported;
    if (ratio >= 1 / kBeyondLastCache && ratio <= kBeyondLastCache) continue;
    // The level of the same cache after it, if the curve has one.
    const MemoryLevel* next = nullptr;
    for (std::size_t j = first; j < machine.memory.size(); ++j) {
      const MemoryLevel& other = machine.memory[j];
      if (j != i && other.level.rfind(cache_name + ".", 0) == 0 && other.level > level.level &&
          (next == nullptr || other.level < next->level))
        next = &other;
    }
    std::string what = "the curve falls there, not at the cache's size";
    if (next != nullptr && ratio < 1) {
      char rate[64];
      std::snprintf(rate, sizeof rate, "%.0f GB/s", next->gbs);
      what = "the curve falls there to " + next->level + " (" + rate + ")";
    }
    char text[200];
    std::snprintf(text, sizeof text, "the knee at %s is %.0fx %s the %s the device reports for %s: ",
                  format_bytes(level.capacity_bytes).c_str(), ratio < 1 ? 1 / ratio : ratio,
                  ratio < 1 ? "below" : "above", format_bytes(reported).c_str(), cache_name.c_str());
    level.capacity_note = text + what;
  }
}

// A cache the topology reports that no curve resolved is named, not dropped without a word:
// with the other core busy, a Zen 4's read curve ran at 100-116 GB/s from 256 KiB to 17 MiB,
// its L2 and L3 one level, and the machine file had no L2 and said nothing.
void name_unresolved_caches(const ProbeSamples& group, Machine& machine) {
  for (const CacheInfo& c : machine.device.caches) {
    const bool resolved = std::any_of(machine.memory.begin(), machine.memory.end(), [&](const MemoryLevel& l) {
      return l.probe == group.probe && (l.level == c.name || l.level.rfind(c.name + ".", 0) == 0);
    });
    if (resolved) continue;
    const MemoryLevel* covering = nullptr;
    const double capacity = static_cast<double>(c.bytes) * std::max(1, c.instances);
    for (const MemoryLevel& l : machine.memory)
      if (l.probe == group.probe && l.working_set_lo <= capacity * 2 && l.working_set_hi >= capacity / 2) covering = &l;
    machine.missing.push_back("memory level " + c.name + " (" + format_bytes(capacity) +
                              "): no access kernel's curve has a level of its own there" +
                              (covering != nullptr
                                   ? " (" + covering->level + "'s covers its sizes: their rates are within the noise)"
                                   : std::string()));
  }
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
  const std::size_t first_new = machine.memory.size();
  for (const std::string& name : order)
    machine.memory.push_back(level_across_series(name, fitted, group, spec, machine.device));
  explain_capacities(machine, first_new);
  if (!fitted.empty()) name_unresolved_caches(group, machine);
  // A series' first level of one size (one whose smaller sizes were underfilled and left out) is a
  // gap worth naming only where it is faster than the level it declares, as the probe publishes
  // it: otherwise that level already stands for it (an H100's cg copy read 7.3 TB/s at its first
  // size, and the L2 published from its other kernels is 8.1).
  const auto published_at_least = [&](const std::string& name, double rate) {
    for (std::size_t i = first_new; i < machine.memory.size(); ++i)
      if (machine.memory[i].level == name && machine.memory[i].gbs >= rate) return true;
    return false;
  };
  std::vector<SeriesGap> gaps;
  for (const SeriesLevels& s : fitted) {
    for (const UnresolvedLevel& u : s.unlocated)
      if (!(u.first && !s.declared_first.empty() && published_at_least(s.declared_first, u.rate)))
        gaps.push_back({u, s.fitted_levels, {s.key}});
    if (s.unresolved) gaps.push_back({*s.unresolved, s.fitted_levels, {s.key}});
    // A series that reaches only its first level (a GPU's ca read) leaves the levels past it to
    // the kernels that reach them: a level hiding in its knee is theirs to measure.
    if (!s.first_level_only)
      for (const UnresolvedLevel& u : s.in_knees) gaps.push_back({u, s.fitted_levels, {s.key}});
  }
  for (const SeriesGap& gap : merge_series_gaps(std::move(gaps))) {
    std::string keys;
    for (const std::string& key : gap.series)
      if (!key.empty()) keys += (keys.empty() ? "" : " | ") + key;
    const std::string curve = "probe '" + group.probe + "' (" + group.backend + (keys.empty() ? "" : ", " + keys) + ")";
    machine.missing.push_back(unresolved_level_note(gap.level, gap.fitted_levels, curve));
  }
  if (!fitted.empty())
    machine.provenance["level_model"] =
        "per access kernel: harmonic blend of levels with logistic knees (and a launch ramp where the "
        "criterion keeps one), robust (Cauchy) least squares in log rate, level count by BIC; "
        "intervals are 95%";
}

}  // namespace fitting

using namespace fitting;  // the feed fitters and their sample groups (feed_fitting.hpp)

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
    // Another process's share is in a foreign-load sample's rate: where the series has points
    // measured alone, only those count. A series measured only beside such load keeps its
    // samples, marked noisy and named under missing: (named_foreign_only_series).
    const bool any_own =
        std::any_of(samples.begin(), samples.end(), [](const Sample* s) { return !is_foreign_load(*s); });
    const auto counts = [&](const Sample* s) { return !any_own || !is_foreign_load(*s); };
    std::set<int> points, clean_points;
    for (const Sample* s : samples) {
      if (!counts(s)) continue;
      points.insert(s->point);
      if (!is_noisy(*s)) clean_points.insert(s->point);
    }
    const bool use_clean = 2 * clean_points.size() >= points.size();
    if (!use_clean) noisy.insert(key);
    for (const Sample* s : samples)
      if (counts(s) && (!use_clean || !is_noisy(*s))) kept.samples.push_back(s);
  }
  return kept;
}

// The series of a feed whose every sample was measured beside another process's load: its
// figures are published marked (noisy, and this line under missing:), never as the device's own.
void name_foreign_only_series(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  for (const auto& [key, samples] : split_series(group.samples, spec.series_axes)) {
    if (!std::all_of(samples.begin(), samples.end(), [](const Sample* s) { return is_foreign_load(*s); })) continue;
    const std::string note = "probe '" + group.probe + "'" + (key.empty() ? "" : " (" + key + ")") +
                             ": every point was measured beside other processes' load: its figures are marked "
                             "noisy and are not the device's own";
    if (std::find(machine.missing.begin(), machine.missing.end(), note) == machine.missing.end())
      machine.missing.push_back(note);
  }
}

// Marks what one feed fitted from noisy series: compute ceilings and named levels (shared,
// system) by their series, the rest by a note (their sections carry no flag).
void mark_noisy(const std::set<std::string>& noisy, const ProbeSamples& group, const FeedSpec& spec,
                std::size_t first_new_ceiling, std::size_t first_new_level, Machine& machine) {
  if (noisy.empty()) return;
  if (spec.kind == FeedKind::ComputeCeiling) {
    for (std::size_t i = first_new_ceiling; i < machine.compute.size(); ++i)
      if (noisy.count(series_key(machine.compute[i].params, spec.series_axes)) != 0) machine.compute[i].noisy = true;
    return;
  }
  std::set<std::string> flagged;
  if (spec.kind == FeedKind::NamedLevel)
    for (std::size_t i = first_new_level; i < machine.memory.size(); ++i) {
      const std::string key = series_key(machine.memory[i].params, spec.series_axes);
      if (noisy.count(key) == 0) continue;
      machine.memory[i].noisy = true;
      flagged.insert(key);
    }
  // Once per probe and series: the probe's other feeds read the same points (the issue probe's
  // warp GIPS and its instruction roofline).
  for (const std::string& key : noisy) {
    if (flagged.count(key) != 0) continue;
    const std::string note = "probe '" + group.probe + "'" + (key.empty() ? "" : " (" + key + ")") +
                             ": most points are flagged noisy; its figures include them";
    if (std::find(machine.missing.begin(), machine.missing.end(), note) == machine.missing.end())
      machine.missing.push_back(note);
  }
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

// The feeds of the backend that measured a probe's samples: a CPU and a CUDA probe of one name
// fit differently (their series axes and levels differ). The run's own record first.
const std::vector<FeedSpec>* feeds_of(const FeedTable* feeds, const std::string& backend, const std::string& probe) {
  if (feeds != nullptr)
    if (auto it = feeds->find({backend, probe}); it != feeds->end()) return &it->second;
  if (const Probe* p = Registry::instance().probe(backend, probe)) return &p->info().feeds;
  return nullptr;
}

// The fit of the samples measured under the device's own power limit: the sweep's rows give the
// burst figures, the sustained phase's rows only their own figures.
void fit_own_limit(const std::vector<Sample>& all_samples, Machine& machine, const FeedTable* feeds) {
  const std::vector<Sample> samples = burst_samples(all_samples);
  std::vector<Sample> sustained_rows;
  for (const Sample& s : all_samples)
    if (is_sustained(s)) sustained_rows.push_back(s);
  for (const ProbeSamples& group : group_by_probe(samples)) {
    const std::vector<FeedSpec>* specs = feeds_of(feeds, group.backend, group.probe);
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
        name_foreign_only_series(group, spec, machine);
        // Memory-level curves keep every sample: the fit is robust to outliers by design, and
        // dropping noisy sizes would leave gaps exactly where a shared machine is busiest.
        if (spec.kind == FeedKind::MemoryLevels) {
          fit_memory_levels(group, spec, machine);
          continue;
        }
        std::set<std::string> noisy;
        const ProbeSamples kept = for_maxima(group, spec, noisy);
        const std::size_t first_new_ceiling = machine.compute.size();
        const std::size_t first_new_level = machine.memory.size();
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
        mark_noisy(noisy, group, spec, first_new_ceiling, first_new_level, machine);
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
  fit_sustained(sustained_rows, machine);
  // The energy figures read the phases' rows too: a sustained phase is the stretch of counter
  // readings long enough for a ceiling's energy, and the energy phase's rows are the model's.
  fit_energy(all_samples, machine);
  // A launch's FLOPs are of the type its compute-ceiling feed names its series.
  fit_energy_model(
      all_samples,
      [&](const Sample& s) -> std::string {
        if (const std::vector<FeedSpec>* specs = feeds_of(feeds, s.backend, s.probe))
          for (const FeedSpec& spec : *specs)
            if (spec.kind == FeedKind::ComputeCeiling) {
              const std::string key = series_key(s.params, spec.series_axes);
              return render_name(spec.name_pattern, s.params, key.empty() ? s.probe : s.probe + "[" + key + "]");
            }
        return "";
      },
      machine);
}

// The samples of the device memory level `level` measured: its probe's, in its plateau's sizes,
// of its headline series.
std::vector<const Sample*> samples_of_level(const std::vector<Sample>& samples, const MemoryLevel& level) {
  std::vector<const Sample*> out;
  for (const Sample& s : samples) {
    if (s.probe != level.probe || s.working_set_bytes < level.working_set_lo ||
        s.working_set_bytes > level.working_set_hi)
      continue;
    bool same_series = true;
    for (const auto& [axis, value] : level.params) {
      const auto it = s.params.find(axis);
      same_series = same_series && (axis == "working_set_bytes" || (it != s.params.end() && it->second == value));
    }
    if (same_series) out.push_back(&s);
  }
  return out;
}

// The ceilings measured under one cap: its samples fitted as a run of their own on the device
// with the cap for its limit, so each ceiling's clock and limited_by are those it ran under. A
// run re-measures its FMA and tensor ceilings and the device memory under a cap
// (driver/session/power_caps.hpp): the compute ceilings and the memory level named after the
// device's memory are kept, the levels its large sizes alone cannot place are not.
PowerCapResult fit_one_cap(double cap_w, const std::vector<Sample>& samples, const Machine& machine,
                           const FeedTable* feeds) {
  Machine capped;
  capped.device = machine.device;
  char watts[32];
  std::snprintf(watts, sizeof watts, "%.0f", cap_w);
  capped.device.extra[kExtraPowerLimitW] = watts;
  fit_own_limit(samples, capped, feeds);
  PowerCapResult result;
  result.cap_w = cap_w;
  for (const ComputeCeiling& c : capped.compute) {
    PowerCapCeiling f;
    f.name = c.name;
    f.kind = "compute";
    f.rate = c.gflops;
    f.spread = c.stats.spread;
    f.clock_mhz = c.clock_mhz;
    f.limited_by = c.limited_by;
    f.samples = c.stats.samples;
    result.ceilings.push_back(f);
  }
  for (const MemoryLevel& l : capped.memory) {
    if (l.level != machine.device.memory_name) continue;
    PowerCapCeiling f;
    f.name = l.level;
    f.kind = "memory";
    f.rate = l.gbs;
    f.ci95 = l.gbs_ci95;
    f.spread = l.stats.spread;
    f.samples = l.stats.samples;
    const std::vector<const Sample*> own = samples_of_level(samples, l);
    std::vector<double> clocks;
    std::string throttled;
    for (const Sample* s : own) {
      if (s->clock_mhz > 0) clocks.push_back(s->clock_mhz);
      add_throttle_reasons(throttled, s->throttle);
    }
    f.clock_mhz = clocks.empty() ? 0 : median_of(clocks);
    f.limited_by = limit_of(throttled, capped.device, f.clock_mhz);
    result.ceilings.push_back(f);
  }
  return result;
}

}  // namespace

void fit_samples(const std::vector<Sample>& samples, Machine& machine, const FeedTable* feeds) {
  // Samples measured under a power cap the run set are kept apart: the machine's ceilings are the
  // device's under its own limit, and each cap's are fitted on their own.
  std::vector<Sample> own;
  std::vector<double> caps;  // in the order the run measured them
  std::map<double, std::vector<Sample>> capped;
  for (const Sample& s : samples) {
    if (s.power_cap_w <= 0) {
      own.push_back(s);
      continue;
    }
    if (capped.find(s.power_cap_w) == capped.end()) caps.push_back(s.power_cap_w);
    capped[s.power_cap_w].push_back(s);
  }
  fit_own_limit(capped.empty() ? samples : own, machine, feeds);
  if (caps.empty()) return;
  PowerCapsSection section;
  if (const auto it = machine.device.extra.find(kExtraPowerLimitSetW); it != machine.device.extra.end())
    section.restored_w = std::atof(it->second.c_str());
  for (const double cap : caps) section.caps.push_back(fit_one_cap(cap, capped[cap], machine, feeds));
  machine.power_caps = section;
}

}  // namespace roofprobe
