// The median of a sample: the fitter's statistics, the level model's noise estimates and the
// plots' per-size lines all take it the same way.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace roofprobe {

// The median (mean of the two middle values for an even count); 0 for no values.
inline double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  return 0.5 * (upper + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)));
}

}  // namespace roofprobe
