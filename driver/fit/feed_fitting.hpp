// What the feed fitters share (driver/fit/fit.cpp: memory levels and compute ceilings;
// instruction_feeds.cpp: the instruction roofline's feeds): the samples of a probe grouped by
// series and by point, the best point of a series, names rendered from a feed's pattern, and the
// rates every memory level carries. Internal to driver/fit/.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "driver/fit/fit.hpp"

namespace roofprobe::fitting {
// Samples of one (backend, probe), in the order they first appear.
struct ProbeSamples {
  std::string backend, probe;
  std::vector<const Sample*> samples;
};

std::vector<ProbeSamples> group_by_probe(const std::vector<Sample>& samples);

// "axis=value;axis=value" of the series axes a sample has (sorted, params_to_string).
std::string series_key(const Params& params, const std::vector<std::string>& axes);

// Canonical form of a series written by hand ("b=1;a=2" -> "a=2;b=1").
std::string canonical_series(const std::string& text);

using Series = std::vector<std::pair<std::string, std::vector<const Sample*>>>;

// Splits samples into series, in the order the series first appear.
Series split_series(const std::vector<const Sample*>& samples, const std::vector<std::string>& axes);

std::optional<double> x_value(const Sample& s, const std::string& x_axis);

// The samples of one point (one full parameter set) and their median rate.
struct PointSamples {
  const Params* params = nullptr;
  std::vector<double> values;
  double median = 0;
};

// Groups samples by point (params_to_string of all parameters), median per point.
std::map<std::string, PointSamples> group_by_point(const std::vector<const Sample*>& samples,
                                                   const std::string& metric);

const PointSamples* best_point(const std::map<std::string, PointSamples>& points);

// A pointer into a temporary map would dangle: callers keep the map, or use best_of.
const PointSamples* best_point(std::map<std::string, PointSamples>&&) = delete;

// The best point of `samples` by `metric`, copied out of the grouping (its params still point
// into `samples`).
std::optional<PointSamples> best_of(const std::vector<const Sample*>& samples, const std::string& metric);

// Median clock of the point's samples (each measured during or right after its launch); 0 when
// none carries one.
double median_clock_of(const std::vector<const Sample*>& samples, const Params& params);

// A sample of the point with these parameters (its work counts are the point's).
const Sample* first_sample_of(const std::vector<const Sample*>& samples, const Params& params);

// What bound a ceiling ("power cap 700 W", "temperature", "clock"), from the "+"-joined throttle
// reasons its samples recorded and the clock they ran at (MHz, 0: unknown); empty where the
// device reports no reasons (compute_feeds.cpp).
std::string limit_of(const std::string& throttled, const DeviceInfo& dev, double clock_mhz = 0);

// The rate figures every memory level carries, from its plateau and the device.
MemoryLevel make_level(const Plateau& p, const std::string& name, const std::string& metric, const DeviceInfo& device);

// Upper-cases a parameter value for a ceiling name; "nofma" keeps the lower-case "no".
std::string name_token(const std::string& value);

// "{precision}.{form}" with each {axis} replaced by its rendered value (upper-cased for ceiling
// names, as written for wall patterns: "stride-8", "conflict-broadcast"); unknown axes stay as
// written.
std::string render_name(const std::string& pattern, const Params& params, const std::string& fallback,
                        bool upper = true);

// Integer value of `axis` in a point's parameters; nullopt when absent or not an integer.
std::optional<int> int_param(const Params& params, const std::string& axis);

// The fitters of one feed kind each (FeedKind): they read one probe's samples and add what they
// fit to the machine.
void fit_memory_levels(const ProbeSamples& group, const FeedSpec& spec, Machine& machine);
void fit_compute_ceilings(const ProbeSamples& group, const FeedSpec& spec, Machine& machine);
void fit_named_level(const ProbeSamples& group, const FeedSpec& spec, Machine& machine);
void fit_warp_gips(const ProbeSamples& group, const FeedSpec& spec, Machine& machine);
void fit_predication(const ProbeSamples& group, const FeedSpec& spec, Machine& machine);
void fit_walls(const ProbeSamples& group, const FeedSpec& spec, Machine& machine);
void fit_scaling(const ProbeSamples& group, const FeedSpec& spec, Machine& machine);
void fit_clocks(const ProbeSamples& group, const FeedSpec& spec, Machine& machine);

}  // namespace roofprobe::fitting
