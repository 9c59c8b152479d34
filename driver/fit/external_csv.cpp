// External bandwidth sweeps (a CSV of working set and bandwidth, e.g. from likwid-bench or
// another tool) -> memory levels, through the same level model and naming as roofprobe's own.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include "driver/fit/curve_sizes.hpp"
#include "driver/fit/external_sweep.hpp"
#include "driver/fit/feed_fitting.hpp"
#include "driver/fit/fit.hpp"
#include "driver/model/atomic_file.hpp"
#include "driver/model/csv_text.hpp"
#include "driver/model/errors.hpp"
#include "driver/model/median_of.hpp"
#include "driver/model/units.hpp"

namespace roofprobe {

using fitting::make_level;

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
  std::vector<std::string> fields = csv_text::split_csv_record(line);
  for (std::string& f : fields) f = trim(f);
  return fields;
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
  // strtod also reads hexadecimal ("0x10"); a CSV's numbers are decimal.
  if (end == field.c_str() || *end != '\0' || errno == EINVAL || field.find_first_of("xX") != std::string::npos)
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
        const std::string name = csv_text::lower(fields[i]);
        std::optional<std::size_t>& col = name == "working_set_bytes" ? x_col : y_col;
        if (name != "working_set_bytes" && name != "gbs") continue;
        if (col) err.fail("two '" + name + "' columns: which one is the sweep's is not clear");
        col = i;
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
    if (const std::string why = implausible_sample(x, y); !why.empty()) err.fail(why);
    points.push_back({x, y});
  }
  const CsvError at_end(path, std::max(1, line_no));
  if (!x_col) at_end.fail("empty file: expected a header with columns working_set_bytes and gbs");
  if (points.empty()) at_end.fail("no data rows after the header");
  return points;
}

}  // namespace

namespace {

// A sweep whose largest size is less than this many times a cache's capacity has not left it:
// the knee out of a cache (half the accesses missing) lies up to about twice past its capacity
// (a Zen 4's 32 MiB victim L3 at 70 MB), and the next level's plateau begins past its knee.
constexpr double kLeftCache = 4.0;
// A knee belongs to a cache when it lies within this factor of the cache's capacity (exclusive
// caches add the nearer levels' capacity, replacement and partitions move the half-miss point:
// an H100's near L2 half ends at 25 MB of its 50 MiB).
constexpr double kKneeFromCapacity = 4.0;
// A level faster than the memory's peak by more than this is not memory (the peak is the spec
// sheet's or a published measurement's, which sustained rates reach within a few percent).
constexpr double kAboveMemoryPeak = 1.15;
// Memory serves a level when its counters carry most of the level's rate: less than half is a
// cache's level.
constexpr double kMemoryShareOfLastLevel = 0.5;
// Sizes this many times past the last cache's capacity are past the reach of every cache. Far
// more than the sweep needs to have left it (kLeftCache): gpu-benches' gpu-cache still runs at
// L2 rates 11 times past a V100's L2 (its blocks share lines the sizes count apart).
constexpr double kFarPastCache = 32;
// ERT grows its working set in steps of a few percent up to ERT_MEMORY_MAX: a sweep whose largest
// set is less than the planned one over this factor stopped before its plan's end.
constexpr double kErtPlannedReach = 2;

std::string size_text(double bytes) { return format_bytes(bytes); }

// "255 ns", "3.2 us", "41 ms": a time per pass, three significant digits at most.
std::string time_text(double seconds) {
  const char* unit = "s";
  for (const char* u : {"ms", "us", "ns"})
    if (seconds < 1) seconds *= 1e3, unit = u;
  char text[32];
  std::snprintf(text, sizeof text, "%.3g %s", seconds, unit);
  return text;
}

// The capacity a sweep fills a cache at: gpu-benches' gpu-cache has every multiprocessor read the
// same data set, so a per-multiprocessor cache fills at its own size; every other sweep divides
// its working set among the cores or multiprocessors, which fill all instances together.
double capacity_of(const CacheInfo& c, bool same_data_per_unit) {
  return static_cast<double>(c.bytes) * (same_data_per_unit ? 1 : std::max(1, c.instances));
}

// Names from capacities (external_sweep.hpp, name_external_levels).
std::vector<std::string> names_from_capacities(const std::vector<Plateau>& plateaus, const ExternalSweepOptions& o,
                                               const std::vector<CacheInfo>& caches, const std::string& memory_name,
                                               double x_min, double x_max, std::vector<std::string>& notes) {
  std::vector<double> cap;
  for (const CacheInfo& c : caches) cap.push_back(capacity_of(c, o.same_data_per_unit));
  const std::string source = o.caches_from.empty() ? std::string("the caches given") : o.caches_from;
  // A cache the sweep starts past serves none of it: the first level is a farther one.
  std::size_t floor_level = 0;
  while (floor_level < cap.size() && x_min > cap[floor_level]) {
    notes.push_back("the sweep starts at " + size_text(x_min) + ", past " + caches[floor_level].name + " (" +
                    size_text(cap[floor_level]) + " by " + source + "): it has no " + caches[floor_level].name +
                    " level");
    ++floor_level;
  }
  std::vector<std::string> names;
  std::string ends_early;  // why the last level is not memory
  std::size_t level = floor_level;
  for (std::size_t i = 0; i < plateaus.size(); ++i) {
    const Plateau& p = plateaus[i];
    const bool last = i + 1 == plateaus.size();
    // Only with a reference's caches, which are all of the device's: past --cache-sizes a knee
    // may be a cache the user left out.
    if (!last && !o.device_caches.empty() && p.capacity > kLeftCache * cap.back() &&
        !(o.memory_peak_gbs > 0 && p.value > kAboveMemoryPeak * o.memory_peak_gbs)) {
      // A knee far past every cache: both rates beside it are memory's (a TLB's reach, pages
      // spread over more channels), and memory is the rate at the largest sizes.
      names.push_back(memory_name);
      continue;
    }
    if (!last) {
      // Its knee names it: the nearest cache at or past the level before.
      double nearest = std::numeric_limits<double>::infinity();
      std::size_t at = cap.size();
      for (std::size_t k = level; k < cap.size(); ++k) {
        const double distance = std::fabs(std::log(p.capacity / cap[k]));
        if (distance < nearest) nearest = distance, at = k;
      }
      if ((at == cap.size() || nearest > std::log(kKneeFromCapacity)) && !o.device_caches.empty() &&
          i + 1 < plateaus.size()) {
        // The reference lists every cache of the device: a knee near none of them is a soft
        // knee inside one (a partitioned L2's near half fading into its far half), and the rates
        // before it lead into the next level.
        names.push_back("");
        continue;
      }
      if (at == cap.size() || nearest > std::log(kKneeFromCapacity))
        throw InputError("fit: the sweep has a knee at " + size_text(p.capacity) + " (" +
                         std::to_string(static_cast<long long>(std::llround(p.value))) +
                         " GB/s before it) and no cache near it in " + source +
                         ": give every cache the sweep passes through (--cache-sizes or --gpu)");
      level = at;
      names.push_back(caches[at].name);
      continue;
    }
    // The last level: memory when the sweep has left the last cache and the rate is not above
    // memory's peak; otherwise the cache past the previous level's knee (or that cache again: a
    // GPU's far L2 half).
    const bool left_caches = cap.empty() || x_max >= kLeftCache * cap.back();
    const bool above_peak = o.memory_peak_gbs > 0 && p.value > kAboveMemoryPeak * o.memory_peak_gbs;
    // Far past every cache of a reference, only memory can serve the data: faster than its peak
    // there, the sweep ran on another device than the one the reference describes.
    if (above_peak && !o.device_caches.empty() && x_max >= kFarPastCache * cap.back()) {
      char why[400];
      std::snprintf(why, sizeof why,
                    "fit %s: the sweep runs at %.0f GB/s up to %s, %.0fx past that GPU's last cache (%s, %s) "
                    "and above its %s peak of %.0f GB/s: it ran on another GPU (give that one's reference)",
                    source.c_str(), p.value, size_text(x_max).c_str(), x_max / cap.back(), caches.back().name.c_str(),
                    size_text(cap.back()).c_str(), memory_name.c_str(), o.memory_peak_gbs);
      throw InputError(why);
    }
    if (left_caches && !above_peak) {
      names.push_back(memory_name);
      break;
    }
    // Past the previous level's knee the data no longer fit its cache: the next one serves it
    // (or the same one's far half, when it is the last cache: a GPU's partitioned L2).
    const std::size_t at = i == 0 ? level : std::min(level + 1, cap.size() - 1);
    names.push_back(caches[at].name);
    char why[200];
    if (above_peak)
      std::snprintf(why, sizeof why, "%.0f GB/s, above %s's peak of %.0f GB/s", p.value, memory_name.c_str(),
                    o.memory_peak_gbs);
    else
      std::snprintf(why, sizeof why, "%.0f GB/s, and memory needs sizes past %s", p.value,
                    size_text(kLeftCache * cap.back()).c_str());
    ends_early = why;
  }
  // Two levels in one cache: the far one gets a suffix (L2.b).
  std::map<std::string, int> seen;
  for (std::string& n : names)
    if (const int count = seen[n]++; count > 0 && n != memory_name && !n.empty())
      n += "." + std::string(1, static_cast<char>('a' + std::min(count, 25)));
  if (!ends_early.empty())
    notes.push_back("the sweep ends at " + size_text(x_max) + " before " + memory_name +
                    " is reached: its last level, " + names.back() + ", runs at " + ends_early);
  return names;
}

}  // namespace

void fit_bandwidth_csv(const std::string& path, Machine& machine, const ExternalSweepOptions& options) {
  ExternalSweepShape shape;
  std::vector<CurvePoint> points =
      options.format == SweepFormat::Csv ? read_bandwidth_csv(path) : read_external_sweep(path, options.format, &shape);
  ExternalSweepOptions o = options;
  o.same_data_per_unit = o.same_data_per_unit || shape.same_data_per_unit;
  if (!o.cache_bytes.empty() && !o.device_caches.empty())
    throw InputError("fit: give the caches once: --cache-sizes or --gpu, not both");
  LevelModelOptions model_options;
  std::vector<CacheInfo> caches = o.device_caches;
  for (std::size_t i = 0; i < o.cache_bytes.size(); ++i) {
    // Below 2^63: larger is no cache, and would not convert to a byte count.
    if (!(o.cache_bytes[i] > 0 && o.cache_bytes[i] < 9.2e18))
      throw InputError("fit --cache-sizes: sizes must be positive and below 8 EiB");
    if (i > 0 && !(o.cache_bytes[i] > o.cache_bytes[i - 1]))
      throw InputError("fit --cache-sizes: give the caches nearest first, each larger than the one before");
    caches.push_back({"L" + std::to_string(i + 1), static_cast<std::uint64_t>(o.cache_bytes[i]), 1});
  }
  for (const CacheInfo& c : caches) model_options.capacity_hints.push_back(capacity_of(c, o.same_data_per_unit));
  // Every cache the sweep passes through is given: on a CPU each knee is one of them (fit_memory_levels).
  model_options.knees_at_capacities = machine.device.kind == "cpu" && !o.cache_bytes.empty();
  if (!o.level_names.empty()) model_options.max_levels = static_cast<int>(o.level_names.size());
  std::vector<std::string> notes;
  // Why the sweep's last level may be a cache, not memory: the sweep has no whole data up to its
  // planned end (empty: it has).
  std::string cut_short;
  // A tail whose rate rises past a level the curve fell to is no level of the hierarchy; fitted
  // with the rest, it drags the levels before it (curve_sizes.hpp). The sweep is fitted without
  // it, and is then incomplete: what the sizes past it would have shown is unknown.
  if (const curve_sizes::RisingTail tail = curve_sizes::rising_tail(curve_sizes::group_sizes(points)); tail.sizes > 0) {
    points.erase(std::remove_if(points.begin(), points.end(),
                                [&](const CurvePoint& p) { return p.x >= tail.x_first * (1 - 1e-9); }),
                 points.end());
    char text[500];
    std::snprintf(text, sizeof text,
                  "the %zu largest sizes, %s to %s, are left out: their rate rises again, to %.0f-%.0f GB/s, "
                  "%.1fx or more the %.0f-%.0f GB/s of the sizes before them; no memory serves a larger set "
                  "faster, so they measured something else (a buffer wrapped or clipped, a kernel changed)",
                  tail.sizes, size_text(tail.x_first).c_str(), size_text(tail.x_last).c_str(), tail.low, tail.high,
                  tail.low / tail.before_high, tail.before_low, tail.before_high);
    notes.push_back(text);
    cut_short = "its sizes past " + size_text(tail.x_first) + " rise instead of reaching memory";
  }
  std::string model;
  std::optional<UnresolvedLevel> unresolved;
  std::vector<UnresolvedLevel> unlocated, in_knees;
  std::vector<Plateau> plateaus = find_plateaus(points, model_options, &model, &unresolved, &unlocated, &in_knees);
  // Another tool's smallest sizes may measure its fixed cost per pass, not a memory. The model's
  // launch ramp (A / w) describes a short one, and extrapolates the first level through it; where
  // no model describes the curve with them, they are left out and the curve fitted again.
  // roofprobe's own probes flag such launches (underfilled) instead; here the curve's shape is
  // the only evidence (curve_sizes.hpp).
  if (const curve_sizes::FixedCostPrefix prefix = curve_sizes::fixed_cost_prefix(curve_sizes::group_sizes(points));
      plateaus.empty() && prefix.sizes > 0) {
    points.erase(std::remove_if(points.begin(), points.end(),
                                [&](const CurvePoint& p) { return p.x <= prefix.x_last * (1 + 1e-9); }),
                 points.end());
    char text[500];
    std::snprintf(text, sizeof text,
                  "the %zu sizes from %s to %s are left out: their rate grows with the size (x%.2f per doubling), "
                  "about %s per pass whatever the size, a fixed cost (a launch, a timer), and stays below half "
                  "the curve's peak of %.0f GB/s; no level model describes the curve with them. A level at those "
                  "sizes is not measured",
                  prefix.sizes, size_text(prefix.x_first).c_str(), size_text(prefix.x_last).c_str(),
                  std::pow(2.0, prefix.slope), time_text(prefix.seconds_per_pass).c_str(), prefix.peak);
    notes.push_back(text);
    const std::string whole_curve = model;
    unresolved.reset(), unlocated.clear(), in_knees.clear(), model.clear();
    plateaus = find_plateaus(points, model_options, &model, &unresolved, &unlocated, &in_knees);
    if (plateaus.empty())
      model = whole_curve + "; without the " + std::to_string(prefix.sizes) + " fixed-cost sizes up to " +
              size_text(prefix.x_last) + ": " + model;
  }
  if (plateaus.empty())
    throw InputError(path + ": " +
                     (model.empty() ? std::string("need at least 3 distinct working-set sizes to fit levels") : model));
  machine.provenance["level_model"] = model;
  machine.device.caches = caches;
  const std::string memory_name = machine.device.memory_name.empty() ? "DRAM" : machine.device.memory_name;
  double x_min = std::numeric_limits<double>::infinity(), x_max = 0;
  for (const CurvePoint& p : points)
    if (p.x > 0 && std::isfinite(p.x)) x_min = std::min(x_min, p.x), x_max = std::max(x_max, p.x);
  // A level named by order: a level the fit found but left unpublished (its rate not located)
  // keeps its place, so the level after an unlocated first one is L2.
  const auto order_name = [&](std::size_t i) {
    const auto before = std::count_if(unlocated.begin(), unlocated.end(), [&](const UnresolvedLevel& u) {
      return u.x_hi <= plateaus[i].x_lo * (1 + 1e-9);
    });
    return "L" + std::to_string(i + 1 + static_cast<std::size_t>(before));
  };
  std::vector<std::string> names;
  if (!o.level_names.empty()) {
    if (o.level_names.size() != plateaus.size()) {
      std::string found;
      for (const Plateau& p : plateaus)
        found += (found.empty() ? "" : ", ") + std::to_string(static_cast<long long>(std::llround(p.value)));
      throw InputError("fit --levels: the sweep shows " + std::to_string(plateaus.size()) + " level" +
                       (plateaus.size() == 1 ? "" : "s") + " (" + found + " GB/s) for " +
                       std::to_string(o.level_names.size()) + " names");
    }
    names = o.level_names;
  } else if (!caches.empty()) {
    names = names_from_capacities(plateaus, o, caches, memory_name, x_min, x_max, notes);
  } else {
    for (std::size_t i = 0; i + 1 < plateaus.size(); ++i) names.push_back(order_name(i));
    names.push_back(memory_name);
    notes.push_back("levels named by their order (L1, L2, ..., " + memory_name +
                    "), not by capacity: give --gpu NAME or --cache-sizes to name them from the caches");
  }
  if (o.format == SweepFormat::Ert) {
    if (!shape.run_description) {
      notes.push_back(
          "the file does not end with the run description (META_DATA) that ERT's driver appends to "
          "every file it writes: the program's own output, or a file cut short; whether the sweep "
          "reached its planned sizes is unknown (it ends at " +
          size_text(x_max) + ")");
    } else if (shape.planned_bytes > 0 && x_max * kErtPlannedReach < shape.planned_bytes) {
      // ERT's driver describes a run that stopped early (a program killed at a large size) as it
      // describes a whole one: the rows end short of the planned working set.
      notes.push_back("the sweep ends at " + size_text(x_max) + ", short of the " + size_text(shape.planned_bytes) +
                      " its run planned (ERT_MEMORY_MAX in its CONFIG): the run stopped early");
      cut_short = "the run stopped early";
    }
  }
  if (!cut_short.empty()) machine.complete = false;
  // Named by order, the last level would be memory. Why it may not be: the sizes that would show
  // memory are not measured (with caches, names_from_capacities judged the sizes that are), or
  // gpu-cache's own memory counters say the data set never left a cache (every multiprocessor
  // reads the same set: an A100's table ends at 68 MB at 2.6-2.9 TB/s with its DRAM read column at
  // 24-27 GB/s).
  if (o.level_names.empty() && caches.empty() && names.back() == memory_name) {
    std::string not_memory = cut_short;
    if (not_memory.empty() && !shape.memory_traffic.empty()) {
      const Plateau& last = plateaus.back();
      std::vector<double> traffic;
      for (const CurvePoint& t : shape.memory_traffic)
        if (t.x >= last.x_lo && t.x <= last.x_hi) traffic.push_back(t.y);
      if (const double median = traffic.empty() ? 0 : median_of(traffic);
          !traffic.empty() && median < kMemoryShareOfLastLevel * last.value) {
        const auto [lo, hi] = std::minmax_element(traffic.begin(), traffic.end());
        char text[300];
        std::snprintf(text, sizeof text,
                      "the table's DRAM read and write columns give %.0f-%.0f GB/s at its sizes, %.1f%% of its "
                      "%.0f GB/s, so the data set stayed in a cache; memory needs a larger set",
                      *lo, *hi, 100 * median / last.value, last.value);
        not_memory = text;
      }
    }
    if (!not_memory.empty()) {
      names.back() = order_name(names.size() - 1);
      notes.push_back("its last level, named by order, is " + names.back() + ", not " + memory_name + ": " +
                      not_memory);
    }
  }
  for (std::size_t i = 0; i < plateaus.size(); ++i) {
    if (names[i].empty()) {
      notes.push_back("the rates down to " + std::to_string(static_cast<long long>(std::llround(plateaus[i].value))) +
                      " GB/s from " + format_bytes(plateaus[i].x_lo) + " to " + format_bytes(plateaus[i].capacity) +
                      " end at a knee near no cache of " + o.caches_from + ": a soft knee into " + names[i + 1] +
                      ", not a level");
      continue;
    }
    if (i + 1 < plateaus.size() && names[i] == memory_name && !caches.empty()) {
      notes.push_back("the rate past the last cache falls from " +
                      std::to_string(static_cast<long long>(std::llround(plateaus[i].value))) + " to " +
                      std::to_string(static_cast<long long>(std::llround(plateaus.back().value))) + " GB/s at " +
                      format_bytes(plateaus[i].capacity) + ": " + memory_name + " is the rate at the largest sizes");
      continue;
    }
    MemoryLevel level = make_level(plateaus[i], names[i], "gbs", machine.device);
    level.probe = "external";
    machine.memory.push_back(std::move(level));
  }
  for (const UnresolvedLevel& u : unlocated)
    machine.missing.push_back(unresolved_level_note(u, static_cast<int>(plateaus.size() + unlocated.size()), path));
  if (unresolved)
    machine.missing.push_back(
        unresolved_level_note(*unresolved, static_cast<int>(plateaus.size() + unlocated.size()), path));
  for (const UnresolvedLevel& u : in_knees)
    machine.missing.push_back(unresolved_level_note(u, static_cast<int>(plateaus.size() + unlocated.size()), path));
  for (std::string& n : notes) machine.missing.push_back(path + ": " + n);
}

}  // namespace roofprobe
