// The sizes of a bandwidth curve as the level model fits them (level_model.cpp): samples grouped
// by size, dense sweeps pooled, each size's samples thinned to quantiles, and the noise of one
// sample's log rate.
#pragma once

#include <vector>

#include "driver/fit/level_model.hpp"

namespace roofprobe::curve_sizes {

// The least noise a curve is given: noise-free data still gets a sane scale (0.3%).
inline constexpr double kNoiseFloor = 0.003;

// The samples of one distinct size.
struct Size {
  double lw = 0;             // ln working set
  double x = 0, x_last = 0;  // the sizes as given (a pooled group spans x .. x_last)
  std::vector<double> z;     // ln rate of each sample the fit sees
  std::vector<double> y;     // every sample's rate, as given (for the statistics)
  double median_z = 0;
};

// The valid points (finite, positive) grouped by size, in increasing size.
std::vector<Size> group_sizes(const std::vector<CurvePoint>& points);

// Noise of one sample's log rate: from the repetitions at each size (MAD of the differences between
// any two repetitions of one size, variance 2 sigma^2), or, with one sample per size, from each
// size's distance to the line through its two neighbouring sizes (a trend along the sizes is not
// noise; the few sizes in knees do not move the median).
double noise_sigma(const std::vector<Size>& sizes);

}  // namespace roofprobe::curve_sizes
