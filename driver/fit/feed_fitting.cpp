#include "driver/fit/feed_fitting.hpp"

#include <cctype>
#include <cmath>
#include <exception>

#include "driver/fit/median.hpp"

namespace roofprobe::fitting {
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
std::string render_name(const std::string& pattern, const Params& params, const std::string& fallback, bool upper) {
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

// Integer value of `axis` in a point's parameters; nullopt when absent or not an integer.
std::optional<int> int_param(const Params& params, const std::string& axis) {
  if (params.count(axis) == 0) return std::nullopt;
  try {
    return static_cast<int>(param_int(params, axis));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace roofprobe::fitting
