// What the exporters share (export.cpp, export_nersc.cpp, export_rocprof.cpp).
#pragma once

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "driver/model/units.hpp"

namespace roofprobe {

// ASCII upper case, for matching level and ceiling names ("l2" and "L2", "fma" and "FMA").
inline std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::toupper(c)); });
  return s;
}

}  // namespace roofprobe
