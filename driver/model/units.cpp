#include "driver/model/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <vector>

namespace roofprobe {

std::optional<double> parse_bytes(const std::string& text) {
  const char* s = text.c_str();
  char* end = nullptr;
  double value = std::strtod(s, &end);
  if (end == s || !std::isfinite(value)) return std::nullopt;
  std::string unit(end);
  // trim spaces
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.front()))) unit.erase(0, 1);
  while (!unit.empty() && std::isspace(static_cast<unsigned char>(unit.back()))) unit.pop_back();
  struct Suffix {
    const char* name;
    double factor;
  };
  static const Suffix suffixes[] = {{"", 1},
                                    {"B", 1},
                                    {"KiB", 1024.0},
                                    {"MiB", 1048576.0},
                                    {"GiB", 1073741824.0},
                                    {"TiB", 1099511627776.0},
                                    {"KB", 1e3},
                                    {"MB", 1e6},
                                    {"GB", 1e9},
                                    {"TB", 1e12},
                                    {"K", 1024.0},
                                    {"M", 1048576.0},
                                    {"G", 1073741824.0}};
  for (const Suffix& suffix : suffixes)
    if (unit == suffix.name) return value * suffix.factor;
  return std::nullopt;
}

std::string format_bytes(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (u < 4 && std::fabs(bytes) >= 1024.0) {
    bytes /= 1024.0;
    ++u;
  }
  char buf[64];
  // From 999.5 up (1020 MiB, just short of a GiB) three significant digits would take an
  // exponent ("1.02e+03 MiB"): the whole number reads better.
  if (u == 0 || std::fabs(bytes - std::round(bytes)) < 1e-9 || std::fabs(bytes) >= 999.5)
    std::snprintf(buf, sizeof buf, "%.0f %s", bytes, units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.3g %s", bytes, units[u]);
  return buf;
}

std::string format_rate_g(double value_g, const std::string& base_unit) {
  static const char* prefixes[] = {"G", "T", "P"};
  // Round to three significant digits first, so 999.6 G becomes "1 T", not "1000 G".
  double v = value_g;
  if (v != 0) {
    double scale = std::pow(10.0, 2 - std::floor(std::log10(std::fabs(v))));
    v = std::round(v * scale) / scale;
  }
  int p = 0;
  while (p < 2 && std::fabs(v) >= 1000.0) {
    v /= 1000.0;
    ++p;
  }
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.3g %s%s", v, prefixes[p], base_unit.c_str());
  return buf;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace roofprobe
