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

// The smallest sizes of a sweep whose rate is bound by a fixed cost per pass over the working set
// (a kernel launch, a timer read, a loop's start) rather than by any memory. A memory level's rate
// is flat or falls with the size; a rate that grows about in proportion to the size is a constant
// time per pass. ERT's GPU driver, for one, runs a P100 at 4 GB/s at 1 KiB and 800 at 200 KiB,
// the same 255 ns per pass, before its L2 plateau near 1.6 TB/s.
struct FixedCostPrefix {
  std::size_t sizes = 0;           // how many of the smallest sizes (0: none)
  double x_first = 0, x_last = 0;  // the sizes it spans (bytes)
  double slope = 0;                // d ln rate / d ln size along them (1: a constant time per pass)
  double seconds_per_pass = 0;     // the median of size / rate along them (rates in GB/s)
  double peak = 0;                 // the curve's fastest per-size median
};

// The prefix, when the curve shows one: at least kMinFixedCostSizes sizes below half the curve's
// fastest per-size median, all before the first size that reaches that half, along which the rate
// grows at least as the square root of the size (slope >= 0.5, time per pass growing no faster
// than the square root of the bytes). Sizes past the half-peak point, still on the rise, are left
// to the model's launch ramp (A / w).
inline constexpr std::size_t kMinFixedCostSizes = 3;
FixedCostPrefix fixed_cost_prefix(const std::vector<Size>& sizes);

// The largest sizes of a sweep when their rate rises again after the curve has fallen from its
// peak: no memory hierarchy serves a larger working set faster, so such a tail measures something
// else (a buffer the tool wrapped or clipped, a kernel changed at those sizes) and says nothing
// of the level before it.
struct RisingTail {
  std::size_t sizes = 0;                   // how many of the largest sizes (0: none)
  double x_first = 0, x_last = 0;          // the sizes it spans (bytes)
  double low = 0, high = 0;                // its slowest and fastest per-size medians (GB/s)
  double before_low = 0, before_high = 0;  // the per-size medians of the kMinRisingTailSizes before it
};

// The tail, when the curve shows one: at least kMinRisingTailSizes of the largest sizes, each
// size's median at least kTailRise times each of the kMinRisingTailSizes sizes before it, which lie
// past the curve's fastest size (a level it fell to, not a launch-bound start, nor a dip of a size
// or two in a knee). Noise spreads the sizes of one level by tens of percent; half again above the
// level before it, size after size to the end of the sweep, is not noise. The longest such tail
// is taken.
inline constexpr std::size_t kMinRisingTailSizes = 3;
inline constexpr double kTailRise = 1.5;
RisingTail rising_tail(const std::vector<Size>& sizes);

}  // namespace roofprobe::curve_sizes
