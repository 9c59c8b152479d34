#include "driver/report/points.hpp"

#include "driver/model/atomic_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "driver/model/errors.hpp"
#include "driver/model/csv_text.hpp"

namespace roofprobe {

using namespace csv_text;  // trim, lower, lines_of, strict_number, number_text

namespace {

std::string read_text_file(const std::string& path) { return read_input_file(path, kMaxCsvInputBytes, "a CSV file"); }

std::string csv_field(const std::string& text) {
  const bool quote = text.find_first_of(",\"\n") != std::string::npos || text != trim(text);
  if (!quote) return text;
  std::string out = "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::vector<KernelPoint> parse_points_csv(const std::string& text, const std::string& source,
                                          std::vector<std::string>* unused_columns) {
  // A spreadsheet's UTF-8 export starts with a byte order mark: part of no column name.
  const bool bom = text.rfind("\xEF\xBB\xBF", 0) == 0;
  const std::vector<std::string> lines = lines_of(bom ? text.substr(3) : text);
  std::size_t line_no = 0;
  auto where = [&] { return source + ":" + std::to_string(line_no) + ": "; };

  int kernel_col = -1, level_col = -1, intensity_col = -1, performance_col = -1, kind_col = -1;
  bool have_header = false;
  std::vector<KernelPoint> out;
  for (const std::string& raw : lines) {
    ++line_no;
    const std::string line = trim(raw);
    if (line.empty() || line[0] == '#') continue;
    const std::vector<std::string> fields = split_csv_record(raw);
    if (!have_header) {
      for (std::size_t c = 0; c < fields.size(); ++c) {
        const std::string name = lower(trim(fields[c]));
        int* slot = name == "kernel"        ? &kernel_col
                    : name == "level"       ? &level_col
                    : name == "intensity"   ? &intensity_col
                    : name == "performance" ? &performance_col
                    : name == "kind"        ? &kind_col
                                            : nullptr;
        if (slot && *slot >= 0)
          throw InputError(where() + "two '" + name + "' columns: which one is the kernel's is not clear");
        if (slot)
          *slot = int(c);
        else if (unused_columns)
          unused_columns->push_back(trim(fields[c]).empty() ? "column " + std::to_string(c + 1) : trim(fields[c]));
      }
      for (auto [col, name] : {std::pair<int, const char*>{kernel_col, "kernel"},
                               {level_col, "level"},
                               {intensity_col, "intensity"},
                               {performance_col, "performance"}})
        if (col < 0)
          throw InputError(where() + "the header has no '" + name +
                           "' column (a points file starts with the header "
                           "kernel,level,intensity,performance[,kind])");
      have_header = true;
      continue;
    }
    // The optional kind may be left off a row's end (it defaults to flop).
    const int needed = std::max({kernel_col, level_col, intensity_col, performance_col}) + 1;
    if (int(fields.size()) < needed)
      throw InputError(where() + "expected " + std::to_string(needed) + " fields, found " +
                       std::to_string(fields.size()));
    KernelPoint p;
    p.kernel = trim(fields[kernel_col]);
    p.level = trim(fields[level_col]);
    if (p.kernel.empty()) throw InputError(where() + "empty kernel name");
    if (p.level.empty()) throw InputError(where() + "empty level for kernel '" + p.kernel + "'");
    auto positive = [&](int col, const char* what) {
      const std::optional<double> v = strict_number(fields[col]);
      if (!v || !std::isfinite(*v) || *v <= 0)
        throw InputError(where() + what + " must be a positive number, got '" + trim(fields[col]) + "'");
      return *v;
    };
    p.intensity = positive(intensity_col, "intensity");
    p.performance = positive(performance_col, "performance");
    if (kind_col >= 0 && kind_col < int(fields.size())) {
      const std::string kind = lower(trim(fields[kind_col]));
      if (!kind.empty()) p.kind = kind;
      if (p.kind != "flop" && p.kind != "instruction")
        throw InputError(where() + "kind must be flop or instruction, got '" + trim(fields[kind_col]) + "'");
    }
    out.push_back(std::move(p));
  }
  if (!have_header)
    throw InputError(source + ": empty points file (expected the header kernel,level,intensity,performance[,kind])");
  if (out.empty()) throw InputError(source + ": no points under the header");
  return out;
}

std::vector<KernelPoint> read_points_csv(const std::string& path, std::vector<std::string>* unused_columns) {
  return parse_points_csv(read_text_file(path), path, unused_columns);
}

std::string points_to_csv(const std::vector<KernelPoint>& points) {
  std::string out = "kernel,level,intensity,performance,kind\n";
  for (const KernelPoint& p : points)
    out += csv_field(p.kernel) + "," + csv_field(p.level) + "," + number_text(p.intensity) + "," +
           number_text(p.performance) + "," + p.kind + "\n";
  return out;
}

}  // namespace roofprobe
