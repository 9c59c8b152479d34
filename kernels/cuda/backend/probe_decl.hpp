// Host-side helpers the CUDA probes use to declare their axes and to read the DeviceInfo the
// backend filled.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/contract/probe.hpp"

namespace roofprobe::cuda {

// A Choice axis whose defaults are all its choices.
inline Axis choice_axis(const char* name, const char* help, std::vector<std::string> choices) {
  Axis a;
  a.name = name;
  a.type = AxisType::Choice;
  a.help = help;
  a.choices = choices;
  a.defaults = std::move(choices);
  return a;
}

inline Axis numeric_axis(const char* name, AxisType type, const char* help, double min, double max,
                         std::vector<std::string> defaults) {
  Axis a;
  a.name = name;
  a.type = type;
  a.help = help;
  a.min = min;
  a.max = max;
  a.defaults = std::move(defaults);
  return a;
}

// Sizes lo * 2^(i / points_per_octave) up to hi, each rounded to a multiple of `align` bytes, as
// the canonical integer text of a Bytes axis ("16384", "23552", ...).
inline std::vector<std::string> geometric_bytes(std::uint64_t lo, std::uint64_t hi, int points_per_octave,
                                                std::uint64_t align) {
  std::vector<std::string> out;
  for (int i = 0;; ++i) {
    const double x = static_cast<double>(lo) * std::exp2(static_cast<double>(i) / points_per_octave);
    if (x > static_cast<double>(hi) * (1 + 1e-12)) break;
    const auto rounded = static_cast<std::uint64_t>(std::llround(x / align)) * align;
    out.push_back(std::to_string(rounded));
  }
  return out;
}

// A number the backend put in DeviceInfo::extra, or `fallback` when absent or malformed.
inline double extra_number(const DeviceInfo& dev, const char* key, double fallback) {
  auto it = dev.extra.find(key);
  if (it == dev.extra.end()) return fallback;
  try {
    return std::stod(it->second);
  } catch (const std::exception&) {
    return fallback;
  }
}

}  // namespace roofprobe::cuda
