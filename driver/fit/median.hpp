// The 95% interval of a sample's median (median_of is in driver/model, where the plots reach it).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "driver/fit/student_t.hpp"
#include "driver/model/interval.hpp"
#include "driver/model/median_of.hpp"

namespace roofprobe {

// A 95% interval of the median of `v` (unknown for fewer than 2 values). From 6 values on it is
// distribution-free: the order statistics x(k) and x(n+1-k) with the largest k for which the
// binomial chance that the median lies outside is at most 5% (n = 6: the smallest and largest;
// n = 20: the 6th and 15th). Fewer values cannot give one at 95% without assuming a shape: there
// the noise is taken as normal, and the median's standard error is sqrt(pi/2) that of the mean,
// with Student's t for the few values. A rate is positive: where normal noise would put the lower
// bound at or below 0 (a spread as wide as the rate, as when another process slowed some
// launches), the noise is taken as log-normal instead, the same interval of the logarithms.
inline Interval median_interval95(std::vector<double> v) {
  const std::size_t n = v.size();
  if (n < 2) return {};
  std::sort(v.begin(), v.end());
  if (n >= 6) {
    // P(Binomial(n, 1/2) <= k - 1) <= 0.025 for the largest k (k >= 1: P(X = 0) <= 1/64). The
    // terms are carried as logarithms: 0.5^n underflows past n = 1074 (a CPU point of 8070
    // samples), which made every term 0 and the interval [largest, smallest].
    double below = 0, log_term = static_cast<double>(n) * std::log(0.5);  // ln P(X = 0)
    std::size_t k = 0;
    for (std::size_t j = 0; j < n; ++j) {
      below += std::exp(log_term);
      if (below > 0.025) break;
      k = j + 1;
      log_term += std::log(static_cast<double>(n - j) / static_cast<double>(j + 1));
    }
    return {v[k - 1], v[n - k]};
  }
  const double median_to_mean = std::sqrt(std::acos(-1.0) / 2);  // ratio of the standard errors
  Interval i = t_interval95(v, median_of(v), median_to_mean);
  i.lo = std::max(0.0, i.lo);  // reached only with values at or below 0
  return i;
}

}  // namespace roofprobe
