// Readers of other tools' bandwidth sweeps (external_sweep.hpp).
#include "driver/fit/external_sweep.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <sstream>

#include "driver/model/atomic_file.hpp"
#include "driver/model/csv_text.hpp"
#include "driver/model/errors.hpp"

namespace roofprobe {
namespace {

using csv_text::lines_of;

[[noreturn]] void fail_at(const std::string& path, std::size_t line, const std::string& what) {
  throw InputError(path + ":" + std::to_string(line) + ": " + what);
}

// A decimal number as the tools print them: strtod alone also reads hexadecimal ("0x10"), "inf"
// and "nan".
bool number(const std::string& token, double& out) {
  if (token.empty() || token.find_first_not_of("0123456789.eE+-") != std::string::npos) return false;
  char* end = nullptr;
  out = std::strtod(token.c_str(), &end);
  return end != token.c_str() && *end == '\0' && std::isfinite(out);
}

void check_sample(const std::string& path, std::size_t line, double bytes, double gbs) {
  const std::string why = implausible_sample(bytes, gbs);
  if (!why.empty()) fail_at(path, line, why);
}

// ERT: rows of 5 (try.NNN) or 11 (max) numbers, then, in the files ERT's driver writes, a line
// `META_DATA` and key/value lines about the run (FLOPS, MPI_PROCS, HOSTNAME, CONFIG, ...): the
// rows end there. ERT runs its program with `> try.NNN 2>&1`, so whatever else the run printed
// lands among the rows: Open MPI's warnings about an InfiniBand device, a batch system's
// banner. ERT's own preprocess skips every line that is not five numbers; here a line whose
// first word is no number is such text and is skipped too. A line that starts as a row and is
// not all numbers is an error: a torn row would publish a level from part of the sweep. ERT's
// `pre` has max's 11 columns but a row per trial count (timer-bound rates among them), and its
// `sum` a figure per level: both are refused, named.
std::vector<CurvePoint> finish_ert(const std::map<double, double>& best_of_try, std::vector<CurvePoint> rows) {
  for (const auto& [ws, gbs] : best_of_try) rows.push_back({ws, gbs});
  return rows;
}

// ERT's CONFIG line in the run description: the working set ERT_MEMORY_MAX its sweep was to
// reach ('ERT_MEMORY_MAX': ['1073741824']); 0 when it names none.
double ert_planned_bytes(const std::string& description) {
  static const std::regex memory_max_re(R"('ERT_MEMORY_MAX'\s*:\s*\[\s*'([0-9]+)'\s*\])");
  for (const std::string& line : lines_of(description)) {
    if (line.rfind("CONFIG", 0) != 0) continue;
    std::smatch m;
    double bytes = 0;
    if (std::regex_search(line, m, memory_max_re) && number(m[1].str(), bytes) && bytes > 0) return bytes;
  }
  return 0;
}

std::vector<CurvePoint> read_ert(const std::string& path, const std::string& text, std::string& first_text_line,
                                 ExternalSweepShape* shape) {
  // ERT's roofline.json, the run's last product: a figure per level, no sweep.
  if (const std::size_t first = text.find_first_not_of(" \t\r\n"); first != std::string::npos && text[first] == '{')
    fail_at(path, 1 + static_cast<std::size_t>(std::count(text.begin(), text.begin() + first, '\n')),
            "a JSON document, such as ERT's roofline.json, holds a figure per level and no sweep: give ERT's max "
            "file or its try.NNN files");
  std::map<double, double> best_of_try;  // working set -> best GB/s over its trials
  std::vector<CurvePoint> rows;
  std::map<double, std::size_t> row_of_set;  // max files: working set -> its line
  std::size_t line_no = 0, columns = 0;
  for (const std::string& line : lines_of(text)) {
    ++line_no;
    std::istringstream words(line);
    std::vector<double> v;
    std::string w;
    bool text_line = false;
    while (words >> w) {
      if (v.empty() && w == "META_DATA") {
        std::string rest;
        if (!(words >> rest)) {  // ERT's run description follows
          if (shape != nullptr) {
            shape->run_description = true;
            shape->planned_bytes = ert_planned_bytes(text);
          }
          return finish_ert(best_of_try, rows);
        }
      }
      double x = 0;
      // "nan" or "inf" where a row's first number goes is a damaged row, not another program's text.
      std::string lower = csv_text::lower(w);
      if (!lower.empty() && (lower[0] == '-' || lower[0] == '+')) lower.erase(0, 1);
      const bool no_number = lower == "nan" || lower == "inf" || lower == "infinity";
      if (v.empty() && !number(w, x) && !no_number) {
        text_line = true;  // another program's output (above)
        // The first line that says something: Open MPI frames its messages in rules of dashes.
        if (first_text_line.empty() &&
            std::any_of(line.begin(), line.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)); }))
          first_text_line = one_line_message(csv_text::trim(line), 80);
        break;
      }
      if (!number(w, x)) {
        if (v.size() == 1 && columns == 0)  // "   176.44 L1": a figure and its name
          fail_at(path, line_no,
                  "'" + csv_text::trim(line) +
                      "': a figure per level, as in ERT's sum file, holds no sweep: give ERT's max "
                      "file or its try.NNN files");
        fail_at(path, line_no, "'" + w + "' is not a number (ERT rows are numbers only)");
      }
      v.push_back(x);
    }
    if (text_line || v.empty()) continue;
    if (v.size() != 5 && v.size() != 11)
      fail_at(path, line_no,
              "expected ERT's 5 columns (try files) or 11 (max/sum files), found " + std::to_string(v.size()));
    if (columns != 0 && v.size() != columns) fail_at(path, line_no, "rows of 5 and 11 columns mixed");
    columns = v.size();
    if (!(v[0] > 0)) fail_at(path, line_no, "the working set is not positive");
    for (double x : v)
      if (x < 0) fail_at(path, line_no, "a negative number: ERT writes sizes, counts, times and rates");
    if (columns == 5) {
      // working set (bytes), trials, time (microseconds), bytes moved, FLOPs
      // ERT prints microseconds to 3 decimals: a small set's single trial can read 0.000, and a
      // trial of no bytes measures nothing. Neither is a rate; the set's other trials stand.
      if (!(v[2] > 0) || !(v[3] > 0)) continue;
      const double gbs = v[3] / (v[2] * 1e3);
      check_sample(path, line_no, v[0], gbs);
      double& best = best_of_try[v[0]];
      best = std::max(best, gbs);
    } else {
      if (const auto [first, added] = row_of_set.emplace(v[0], line_no); !added)
        fail_at(path, line_no,
                "the working set " + csv_text::number_text(v[0]) + " has a row at line " +
                    std::to_string(first->second) +
                    " already: a row per trial count is ERT's pre file; give its max file (one row per working "
                    "set)");
      const double gbs = std::max({v[5], v[6], v[7]});
      check_sample(path, line_no, v[0], gbs);
      rows.push_back({v[0], gbs});
    }
  }
  return finish_ert(best_of_try, rows);
}

// gpu-benches: "     2 kB         5ms       0.4%   13646.3 GB/s ..." (gpu-cache) and
// "   128 kB       256 kB         1ms ..." (gpu-l2-cache: per-block and total data set).
// Lines before the first row without a rate or a size are the program's own output (gpu-cache
// prints the clocks it read; on ROCm, the HSA agents it found). One table per file: a second header is a second run
// (another GPU's table appended), whose sizes would be fitted as one curve with the first's. A rate in another unit or
// with a decimal comma would be read as another number.
std::vector<CurvePoint> read_gpu_benches(const std::string& path, const std::string& text, ExternalSweepShape* shape) {
  // A size is a word of its own: "7,2 kB" or "1,012 kB" is no size, not a "2 kB" or "12 kB".
  static const std::regex size_re(R"((^|\s)([0-9]+(\.[0-9]+)?)\s*(B|kB|KB|KiB|MB|MiB|GB|GiB)\b)");
  static const std::regex comma_size_re(R"((^|\s)([0-9.]*,[0-9.,]*\s*(B|kB|KB|KiB|MB|MiB|GB|GiB))\b)");
  static const std::regex time_re(R"([0-9]+(\.[0-9]+)?\s*(ns|us|ms|s)\b)");
  // The rate's whole word, whatever it holds ("-5", "inf"), so that a bad first rate is refused
  // rather than the search passing on to the next column's.
  static const std::regex rate_re(R"((\S+?)\s*([kKMGTPmgtp]?i?B/s|[kMGT]?Byte/s))");
  std::vector<CurvePoint> rows, memory_traffic;
  std::size_t line_no = 0, header_line = 0, size_columns = 0;
  // gpu-cache's header names the rates after the bandwidth: "Eff. bw  DRAM read  DRAM write  L2
  // read  L2 store". gpu-l2-cache's names only the bandwidth, so its other rates are not read.
  bool memory_columns = false;
  for (const std::string& line : lines_of(text)) {
    ++line_no;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (line.find("data set") != std::string::npos) {
      if (header_line != 0)
        fail_at(path, line_no,
                "a second table starts here (the first at line " + std::to_string(header_line) +
                    "): one gpu-benches run per file");
      header_line = line_no;
      const std::size_t bw = line.find("Eff. bw"), read = line.find("DRAM read"), write = line.find("DRAM write");
      memory_columns = bw != std::string::npos && read != std::string::npos && write != std::string::npos &&
                       bw < read && read < write && line.find("GB/s") == std::string::npos;
      continue;
    }
    std::smatch rate;
    const bool has_rate = std::regex_search(line, rate, rate_re);
    // What the program prints before its first row (gpu-cache's "clock: 1980 1980 ..." readout
    // before the header; on ROCm, "Agent 0" and "Agent 1" after it, as in gpu-benches'
    // gpu-cache/mi210.txt): neither a rate nor a size. Inside the table such a line is an error.
    if (!has_rate && rows.empty() && !std::regex_search(line, size_re)) continue;
    if (!has_rate) fail_at(path, line_no, "no '<number> GB/s' (expected gpu-benches' gpu-cache or gpu-l2-cache table)");
    if (rate[2] != "GB/s")
      fail_at(path, line_no, "the bandwidth is in '" + rate[2].str() + "': gpu-benches writes 'GB/s'");
    if (rate[1].str().find(',') != std::string::npos)
      fail_at(path, line_no, "'" + rate[1].str() + "' has a decimal comma: gpu-benches writes '13646.3'");
    if (std::smatch comma; std::regex_search(line, comma, comma_size_re))
      fail_at(path, line_no, "'" + comma[2].str() + "': a size with a comma (gpu-benches writes whole sizes: '12 kB')");
    std::smatch bw = rate, time;
    const std::size_t time_at = std::regex_search(line, time, time_re) ? static_cast<std::size_t>(time.position(0))
                                                                       : static_cast<std::size_t>(bw.position(0));
    // The data set: the last size before the time column.
    double bytes = 0;
    std::size_t sizes_here = 0;
    for (auto it = std::sregex_iterator(line.begin(), line.end(), size_re); it != std::sregex_iterator(); ++it) {
      if (static_cast<std::size_t>(it->position(0)) >= time_at) break;
      ++sizes_here;
      const std::string unit = (*it)[4];
      const double scale = unit == "B"                        ? 1
                           : unit[0] == 'k' || unit[0] == 'K' ? 1024.0
                           : unit[0] == 'M'                   ? 1048576.0
                                                              : 1073741824.0;
      bytes = std::strtod((*it)[2].str().c_str(), nullptr) * scale;
    }
    if (!(bytes > 0)) fail_at(path, line_no, "no data-set size ('<n> kB') before the time column");
    if (size_columns != 0 && sizes_here != size_columns)
      fail_at(path, line_no, "rows of gpu-cache (one size) and gpu-l2-cache (two sizes) tables mixed");
    size_columns = sizes_here;
    double gbs = 0;
    if (!number(bw[1].str(), gbs))
      fail_at(path, line_no, "'" + bw[1].str() + "' before 'GB/s' is not a number (gpu-benches writes '13646.3')");
    check_sample(path, line_no, bytes, gbs);
    rows.push_back({bytes, gbs});
    if (memory_columns) {
      // The two rates after the bandwidth; a row without them leaves the columns unread.
      std::vector<double> after;
      const std::string rest = line.substr(static_cast<std::size_t>(bw.position(0) + bw.length(0)));
      for (auto it = std::sregex_iterator(rest.begin(), rest.end(), rate_re);
           it != std::sregex_iterator() && after.size() < 2; ++it) {
        double v = 0;
        if ((*it)[2] != "GB/s" || !number((*it)[1].str(), v) || !(v >= 0) || !std::isfinite(v)) break;
        after.push_back(v);
      }
      if (after.size() == 2)
        memory_traffic.push_back({bytes, after[0] + after[1]});
      else
        memory_columns = false, memory_traffic.clear();
    }
  }
  // gpu-cache (one size column) has every multiprocessor read the same data set; gpu-l2-cache
  // gives each block its own part of the total (the second column).
  if (shape != nullptr) {
    shape->same_data_per_unit = size_columns == 1;
    const bool counted =
        std::any_of(memory_traffic.begin(), memory_traffic.end(), [](const CurvePoint& p) { return p.y > 0; });
    if (counted) shape->memory_traffic = std::move(memory_traffic);  // a value for every row, or none
  }
  return rows;
}

// likwid-bench: each run prints "Size (Byte):" and "MByte/s:" (1e6 bytes/s) once.
std::vector<CurvePoint> read_likwid(const std::string& path, const std::string& text) {
  std::vector<CurvePoint> rows;
  double size = 0;
  std::size_t line_no = 0, size_line = 0;
  const auto value_after = [&](const std::string& line, const std::string& key, double& out) {
    if (line.rfind(key, 0) != 0) return false;
    std::istringstream rest(line.substr(key.size()));
    std::string w;
    if (!(rest >> w) || !number(w, out)) fail_at(path, line_no, "'" + key + "' without a number");
    return true;
  };
  std::string test;  // the first run's "Test:": every run of a sweep is one kernel's
  for (const std::string& line : lines_of(text)) {
    ++line_no;
    double v = 0;
    if (line.rfind("Test:", 0) == 0) {
      std::istringstream rest(line.substr(5));
      std::string name;
      rest >> name;
      if (test.empty())
        test = name;
      else if (name != test)
        fail_at(path, line_no,
                "runs of two tests ('" + test + "' and '" + name + "') in one file: a sweep is one kernel's");
    } else if (value_after(line, "Size (Byte):", v)) {
      if (size > 0) fail_at(path, size_line, "a run's 'Size (Byte):' without its 'MByte/s:'");
      size = v, size_line = line_no;
    } else if (value_after(line, "MByte/s:", v)) {
      if (!(size > 0)) fail_at(path, line_no, "'MByte/s:' before its run's 'Size (Byte):'");
      check_sample(path, line_no, size, v / 1e3);
      rows.push_back({size, v / 1e3});
      size = 0;
    }
  }
  if (size > 0) fail_at(path, size_line, "the last run has 'Size (Byte):' but no 'MByte/s:' (cut short?)");
  return rows;
}

}  // namespace

std::string implausible_sample(double working_set_bytes, double gbs) {
  constexpr double kMaxWorkingSetBytes = 1125899906842624.0;  // 1 PiB
  constexpr double kMaxGbs = 1e7;                             // 10 PB/s
  std::ostringstream why;
  if (!(std::isfinite(working_set_bytes) && working_set_bytes > 0))
    why << "the working set " << working_set_bytes << " is not a positive number of bytes";
  else if (!(std::isfinite(gbs) && gbs > 0))
    why << "the rate " << gbs << " GB/s is not a positive number";
  else if (working_set_bytes > kMaxWorkingSetBytes)
    why << "a working set of " << working_set_bytes << " bytes is over 1 PiB: not a memory's";
  else if (gbs > kMaxGbs)
    why << "a rate of " << gbs << " GB/s is over 10 PB/s: not a memory's";
  return why.str();
}

SweepFormat parse_sweep_format(const std::string& name) {
  if (name == "csv") return SweepFormat::Csv;
  if (name == "ert") return SweepFormat::Ert;
  if (name == "gpu-benches") return SweepFormat::GpuBenches;
  if (name == "likwid") return SweepFormat::Likwid;
  throw InputError("fit --from: unknown format '" + name + "' (use csv, ert, gpu-benches or likwid)");
}

std::vector<CurvePoint> read_external_sweep(const std::string& path, SweepFormat format, ExternalSweepShape* shape) {
  const std::string text = read_input_file(path, kMaxCsvInputBytes, "a bandwidth sweep");
  std::vector<CurvePoint> rows;
  const char* name = "csv";
  std::string first_text_line;  // of a file whose rows are other programs' output only
  switch (format) {
    case SweepFormat::Ert:
      rows = read_ert(path, text, first_text_line, shape), name = "ERT";
      break;
    case SweepFormat::GpuBenches:
      rows = read_gpu_benches(path, text, shape), name = "gpu-benches";
      break;
    case SweepFormat::Likwid:
      rows = read_likwid(path, text), name = "likwid-bench";
      break;
    case SweepFormat::Csv:
      throw InputError("read_external_sweep: the csv format is fit's own reader");
  }
  if (rows.empty())
    throw InputError(path + ": no " + std::string(name) + " bandwidth sample in the file" +
                     (first_text_line.empty() ? "" : " (its first line of text: '" + first_text_line + "')"));
  return rows;
}

}  // namespace roofprobe
