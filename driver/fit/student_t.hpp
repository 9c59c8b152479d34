// Student's t quantile for 95% intervals, shared by the level model (a level's rate from its
// plateau sizes), the energy model (coefficients from the robust covariance), the median of few
// samples and the sustained figures.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "driver/model/interval.hpp"

namespace roofprobe {

// The 0.975 quantile of Student's t with `dof` degrees of freedom. Below 5 the exact values (a
// plateau of two or three sizes needs them: the normal quantile would claim a 6x narrower
// interval at one degree of freedom); from 5 on the Cornish-Fisher expansion around the normal
// quantile (Abramowitz & Stegun 26.7.5), within 0.1%.
inline double t975(double dof) {
  static constexpr double kExact[] = {12.7062047, 4.30265273, 3.18244631, 2.77644511};
  if (dof < 5) return kExact[dof < 1 ? 0 : static_cast<int>(dof) - 1];
  const double z = 1.959963984540054;
  const double z3 = z * z * z, z5 = z3 * z * z, z7 = z5 * z * z;
  return z + (z3 + z) / (4 * dof) + (5 * z5 + 16 * z3 + 3 * z) / (96 * dof * dof) +
         (3 * z7 + 19 * z5 + 17 * z3 - 15 * z) / (384 * dof * dof * dof);
}

// Half the width of the 95% interval of the mean of `values` about `mean`: Student's t with
// n - 1 degrees of freedom times the standard error. At least 2 values.
inline double t_half_width95(const std::vector<double>& values, double mean) {
  double m2 = 0;
  for (const double v : values) m2 += (v - mean) * (v - mean);
  const double n = static_cast<double>(values.size());
  return t975(n - 1) * std::sqrt(m2 / (n - 1)) / std::sqrt(n);
}

// A 95% interval about `center` (the mean of `values`, or a statistic whose standard error is
// `scale` times the mean's): center +- scale x Student's t half width. A rate or an energy is
// positive: where that lower bound would be at or below 0 (a spread as wide as the value, as when
// another process slowed some launches) and every value is positive, the noise is taken as
// log-normal instead, center x exp(+- the same half width of the logarithms).
inline Interval t_interval95(const std::vector<double>& values, double center, double scale = 1) {
  const double n = static_cast<double>(values.size());
  double mean = 0;
  for (const double v : values) mean += v;
  mean /= n;
  const double half = scale * t_half_width95(values, mean);
  if (center - half > 0 || *std::min_element(values.begin(), values.end()) <= 0) return {center - half, center + half};
  std::vector<double> logs;
  double log_mean = 0;
  for (const double v : values) {
    logs.push_back(std::log(v));
    log_mean += logs.back();
  }
  const double log_half = scale * t_half_width95(logs, log_mean / n);
  return {center * std::exp(-log_half), center * std::exp(log_half)};
}

}  // namespace roofprobe
