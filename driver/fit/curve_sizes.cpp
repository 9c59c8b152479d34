#include "driver/fit/curve_sizes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "driver/fit/median.hpp"

namespace roofprobe::curve_sizes {
namespace {

constexpr std::size_t kMaxSizes = 400;          // distinct sizes fitted; denser sweeps are pooled
constexpr std::size_t kMaxSamplesPerSize = 15;  // samples of one size the fit sees (quantiles)

}  // namespace

std::vector<Size> group_sizes(const std::vector<CurvePoint>& points) {
  std::vector<CurvePoint> valid;
  for (const CurvePoint& p : points)
    if (std::isfinite(p.x) && std::isfinite(p.y) && p.x > 0 && p.y > 0) valid.push_back(p);
  std::sort(valid.begin(), valid.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
  std::vector<Size> sizes;
  double last_x = 0;
  for (const CurvePoint& p : valid) {
    // Sizes written as text and read back can differ in the last bit: one size.
    if (sizes.empty() || p.x > last_x * (1 + 1e-9)) sizes.push_back({std::log(p.x), p.x, p.x, {}, {}, 0}), last_x = p.x;
    sizes.back().z.push_back(std::log(p.y));
    sizes.back().y.push_back(p.y);
  }
  // A dense external sweep (every 4 KiB up to 1 GiB) would make every start cost thousands of
  // rows: neighbouring sizes closer than 1/200 of the sweep's log range are pooled.
  if (sizes.size() > kMaxSizes) {
    const double min_step = (sizes.back().lw - sizes.front().lw) / (kMaxSizes / 2);
    std::vector<Size> pooled;
    double first_lw = 0;
    int members = 0;
    for (Size& s : sizes) {
      if (pooled.empty() || s.lw - first_lw >= min_step) {
        if (!pooled.empty()) pooled.back().lw /= members;
        first_lw = s.lw, members = 0;
        pooled.push_back({0, s.x, s.x, {}, {}, 0});
      }
      pooled.back().lw += s.lw;
      pooled.back().x_last = s.x_last;
      ++members;
      pooled.back().z.insert(pooled.back().z.end(), s.z.begin(), s.z.end());
      pooled.back().y.insert(pooled.back().y.end(), s.y.begin(), s.y.end());
    }
    pooled.back().lw /= members;
    sizes = std::move(pooled);
  }
  for (Size& s : sizes) {
    s.median_z = median_of(s.z);
    // A point measured until its noise settled can hold thousands of samples: evenly spaced order
    // statistics keep its distribution (median, spread, outliers) at a bounded cost per fit.
    if (s.z.size() > kMaxSamplesPerSize) {
      std::sort(s.z.begin(), s.z.end());
      std::vector<double> kept;
      for (std::size_t k = 0; k < kMaxSamplesPerSize; ++k)
        kept.push_back(s.z[(2 * k + 1) * s.z.size() / (2 * kMaxSamplesPerSize)]);
      s.z = std::move(kept);
    }
  }
  return sizes;
}

double noise_sigma(const std::vector<Size>& sizes) {
  // Every pair of repetitions of one size differs by noise alone: |z_i - z_j| has the spread of
  // sqrt(2) sigma whatever the number of repetitions. (The deviations from each size's median do
  // not: with 3 repetitions one of them is always 0, and their MAD read 0.57 sigma, which made
  // the 95% intervals cover the truth 63 times in 71 on the public scoring set.)
  std::vector<double> pair_diffs;
  for (const Size& s : sizes)
    for (std::size_t i = 0; i < s.z.size(); ++i)
      for (std::size_t j = i + 1; j < s.z.size(); ++j) pair_diffs.push_back(std::fabs(s.z[i] - s.z[j]));
  if (pair_diffs.size() >= 6) return std::max(1.4826 * median_of(pair_diffs) / std::sqrt(2.0), kNoiseFloor);
  // One sample per size: each size against the line through its two neighbours (in ln size).
  // With z_i = a z_{i-1} + b z_{i+1} on that line, the residual has variance (1 + a^2 + b^2)
  // sigma^2 from noise alone; a trend along the sizes (a sloped level, a soft knee) cancels,
  // where successive differences counted it as noise. A knee's few sizes do not move the median.
  std::vector<double> residuals;
  for (std::size_t i = 1; i + 1 < sizes.size(); ++i) {
    const double span = sizes[i + 1].lw - sizes[i - 1].lw;
    if (!(span > 0)) continue;
    const double b = (sizes[i].lw - sizes[i - 1].lw) / span, a = 1 - b;
    const double r = sizes[i].median_z - (a * sizes[i - 1].median_z + b * sizes[i + 1].median_z);
    residuals.push_back(std::fabs(r) / std::sqrt(1 + a * a + b * b));
  }
  if (residuals.empty()) return kNoiseFloor;
  return std::max(1.4826 * median_of(residuals), kNoiseFloor);
}

FixedCostPrefix fixed_cost_prefix(const std::vector<Size>& sizes) {
  FixedCostPrefix none;
  if (sizes.size() < kMinFixedCostSizes + 3) return none;
  double peak_z = -std::numeric_limits<double>::infinity();
  for (const Size& s : sizes) peak_z = std::max(peak_z, s.median_z);
  const double half = peak_z - std::log(2.0);
  std::size_t reached = 0;  // the first size at half the peak or faster
  while (reached < sizes.size() && sizes[reached].median_z < half) ++reached;
  if (reached < kMinFixedCostSizes) return none;
  // Least-squares slope of ln rate on ln size over the prefix and the size that ends it.
  double mean_lw = 0, mean_z = 0;
  const std::size_t n = reached + 1;
  for (std::size_t i = 0; i < n; ++i) mean_lw += sizes[i].lw, mean_z += sizes[i].median_z;
  mean_lw /= static_cast<double>(n), mean_z /= static_cast<double>(n);
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < n; ++i) {
    sxy += (sizes[i].lw - mean_lw) * (sizes[i].median_z - mean_z);
    sxx += (sizes[i].lw - mean_lw) * (sizes[i].lw - mean_lw);
  }
  if (!(sxx > 0) || sxy / sxx < 0.5) return none;
  std::vector<double> seconds;
  for (std::size_t i = 0; i < reached; ++i) seconds.push_back(sizes[i].x / (std::exp(sizes[i].median_z) * 1e9));
  return {reached, sizes.front().x, sizes[reached - 1].x_last, sxy / sxx, median_of(seconds), std::exp(peak_z)};
}

RisingTail rising_tail(const std::vector<Size>& sizes) {
  RisingTail none;
  const std::size_t n = sizes.size(), k = kMinRisingTailSizes;
  if (n < 2 * k + 1) return none;
  const std::size_t peak =
      static_cast<std::size_t>(std::max_element(sizes.begin(), sizes.end(),
                                                [](const Size& a, const Size& b) { return a.median_z < b.median_z; }) -
                               sizes.begin());
  // suffix_low[j]: the slowest median from size j to the end.
  std::vector<double> suffix_low(n + 1, std::numeric_limits<double>::infinity());
  for (std::size_t j = n; j-- > 0;) suffix_low[j] = std::min(suffix_low[j + 1], sizes[j].median_z);
  // The tail starting at j holds when the k sizes before it, all past the peak, are each slower by
  // kTailRise than every size of the tail. The first j that holds is the longest tail.
  for (std::size_t j = peak + 1 + k; j + k <= n; ++j) {
    double before_low = std::numeric_limits<double>::infinity(), before_high = -before_low;
    for (std::size_t i = j - k; i < j; ++i)
      before_low = std::min(before_low, sizes[i].median_z), before_high = std::max(before_high, sizes[i].median_z);
    if (suffix_low[j] - before_high < std::log(kTailRise)) continue;
    double high = -std::numeric_limits<double>::infinity();
    for (std::size_t i = j; i < n; ++i) high = std::max(high, sizes[i].median_z);
    RisingTail tail;
    tail.sizes = n - j;
    tail.x_first = sizes[j].x, tail.x_last = sizes.back().x_last;
    tail.low = std::exp(suffix_low[j]), tail.high = std::exp(high);
    tail.before_low = std::exp(before_low), tail.before_high = std::exp(before_high);
    return tail;
  }
  return none;
}

}  // namespace roofprobe::curve_sizes
