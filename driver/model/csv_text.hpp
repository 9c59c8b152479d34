// Text helpers of the CSV readers: report/ (points files, Nsight Compute exports) and fit/
// (external bandwidth sweeps).
#pragma once

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace roofprobe::csv_text {

inline std::string trim(const std::string& s) {
  const std::size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string::npos) return {};
  const std::size_t b = s.find_last_not_of(" \t\r\n");
  return s.substr(a, b - a + 1);
}

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    out.push_back(line);
  }
  return out;
}

// A number as a user or a tool writes it: surrounding blanks allowed, nothing else after it.
inline std::optional<double> strict_number(const std::string& text) {
  const std::string t = trim(text);
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size()) return std::nullopt;
  return v;
}

// One CSV record split into fields: double-quoted fields may hold commas and doubled quotes.
std::vector<std::string> split_csv_record(const std::string& line);

// A number as text with `digits` significant digits, shortest form ("%g"): CSV cells keep 8, so
// a rate read back is the rate written; messages and device notes keep 6.
inline std::string number_text(double v, int digits = 8) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

}  // namespace roofprobe::csv_text
