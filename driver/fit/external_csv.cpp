// External bandwidth sweeps (a CSV of working set and bandwidth, e.g. from likwid-bench or
// another tool) -> memory levels, through the same level model and naming as roofprobe's own.
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "driver/fit/feed_fitting.hpp"
#include "driver/fit/fit.hpp"
#include "driver/model/atomic_file.hpp"
#include "driver/model/csv_text.hpp"
#include "driver/model/errors.hpp"
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
        const std::string name = csv_text::lower(fields[i]);
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
  std::optional<UnresolvedLevel> unresolved;
  const std::vector<Plateau> plateaus = find_plateaus(points, model_options, &model, &unresolved);
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
  if (unresolved)
    machine.missing.push_back(unresolved_level_note(*unresolved, static_cast<int>(plateaus.size()), path));
}

}  // namespace roofprobe
