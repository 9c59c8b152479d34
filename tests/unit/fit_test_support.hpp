// Synthetic bandwidth sweeps with known levels for the fitter's tests (tests/unit/fit_test.cpp,
// fit_samples_test.cpp): portable random numbers, soft knees, noise, ramps.
#pragma once

#include <gtest/gtest.h>

#include "driver/fit/fit.hpp"
#include <unistd.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <random>
#include <utility>
#include <stdexcept>
#include <string>
#include <vector>
#include "driver/model/errors.hpp"

namespace roofprobe::fit_testing {

inline constexpr double KiB = 1024.0, MiB = 1024.0 * KiB, GiB = 1024.0 * MiB;

// ---- synthetic sweeps ------------------------------------------------------------------------

// Portable random numbers: the standard fixes std::mt19937's output but not the distributions'
// algorithms, so the test draws its own to get the same sweeps from every standard library.
class Rng {
 public:
  explicit Rng(unsigned seed) : engine_(seed) {}
  double uniform() { return (static_cast<double>(engine_()) + 0.5) / 4294967296.0; }  // (0, 1)
  double normal() {                                                                   // Box-Muller
    const double r = std::sqrt(-2 * std::log(uniform()));
    return r * std::cos(2 * 3.141592653589793 * uniform());
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(engine_() % n); }

 private:
  std::mt19937 engine_;
};

struct TrueLevel {
  double capacity;  // bytes: the knee after this level (ignored for the last level)
  double gbs;
};

// The physics the level model assumes (driver/fit/level_model.hpp): each level serves the accesses
// that miss the nearer levels and hit it, misses rise around each capacity as a logistic in
// ln w of width `knee_width`, access times add, and a launch cost A/w slows the smallest sizes.
struct SweepShape {
  std::vector<TrueLevel> levels;               // nearest first
  double knee_width = 0.15;                    // ln-size units; 0.15: the knee spans ~1 octave (10-90%)
  double launch_seconds_per_byte_x_bytes = 0;  // A: time per launch in units of (bytes / rate)
};

inline double true_rate(const SweepShape& shape, double x) {
  double time = 0, reach = 1;
  const auto& lv = shape.levels;
  for (std::size_t i = 0; i < lv.size(); ++i) {
    const double miss = i + 1 < lv.size() ? 1 / (1 + std::exp(-std::log(x / lv[i].capacity) / shape.knee_width)) : 0;
    time += reach * (1 - miss) / lv[i].gbs;
    reach *= miss;
  }
  return 1 / (time + shape.launch_seconds_per_byte_x_bytes / x);
}

inline std::vector<double> geometric_sizes(double lo, double hi, int per_octave) {
  std::vector<double> sizes;
  for (int k = 0;; ++k) {
    const double x = std::round(lo * std::exp2(static_cast<double>(k) / per_octave));
    if (x > hi * 1.0001) break;
    sizes.push_back(x);
  }
  return sizes;
}

// Samples with multiplicative (log-normal) noise; `spikes` random samples are then multiplied by
// 2, 0.3, 0.5, 2, ... (single-sample outliers). Shuffled: the fit must not rely on order.
inline std::vector<CurvePoint> synth(const SweepShape& shape, const std::vector<double>& sizes, double noise,
                                     int samples_per_size, Rng& rng, int spikes = 0) {
  std::vector<CurvePoint> points;
  for (double x : sizes)
    for (int k = 0; k < samples_per_size; ++k)
      points.push_back({x, true_rate(shape, x) * std::exp(noise * rng.normal())});
  const double spike_factor[] = {2.0, 0.3, 0.5};
  for (int k = 0; k < spikes; ++k) points[rng.below(points.size())].y *= spike_factor[k % 3];
  for (std::size_t i = points.size(); i > 1; --i) std::swap(points[i - 1], points[rng.below(i)]);
  return points;
}

// CPU: L1 32 KiB x 2 cores, L2 512 KiB x 2 (1 MiB as the run sees it), L3 32 MiB, DRAM.
inline SweepShape cpu_shape(double knee_width = 0.15) {
  return {{{64 * KiB, 180}, {1 * MiB, 90}, {32 * MiB, 45}, {0, 18}}, knee_width, 0};
}
inline const std::vector<double> kCpuTruth = {180, 90, 45, 18};
inline const std::vector<double> kCpuKnees = {64 * KiB, 1 * MiB, 32 * MiB};
inline std::vector<CacheInfo> cpu_caches() {
  return {{"L1", static_cast<std::uint64_t>(32 * KiB), 2},
          {"L2", static_cast<std::uint64_t>(512 * KiB), 2},
          {"L3", static_cast<std::uint64_t>(32 * MiB), 1}};
}
inline std::vector<double> cpu_sizes(int per_octave = 4) { return geometric_sizes(4 * KiB, 1 * GiB, per_octave); }

// GPU: a launch cost that halves the rate at 512 KiB, L1 20 TB/s (128 KiB x 32 SMs), near L2
// 10 TB/s to 25 MB, far L2 6.5 TB/s only one octave wide (25-50 MB), HBM 3.5 TB/s; sharp knees.
inline SweepShape gpu_shape(double knee_width = 0.08) {
  return {{{4 * MiB, 20000}, {25e6, 10000}, {50e6, 6500}, {0, 3500}}, knee_width, 512 * KiB / 20000};
}
inline const std::vector<double> kGpuTruth = {20000, 10000, 6500, 3500};
inline std::vector<CacheInfo> gpu_caches() {
  return {{"L1", static_cast<std::uint64_t>(128 * KiB), 32}, {"L2", 50000000, 1}};
}
inline std::vector<double> gpu_sizes(int per_octave = 4) { return geometric_sizes(64 * KiB, 2 * GiB, per_octave); }

// A Grace-like hierarchy whose L3 lasts less than an octave above a much larger L2, behind soft
// knees: at 3% noise the criterion often cannot tell whether the L3 is there
// (LevelModelFit::unresolved). Sampled 6 times per octave, 5 repetitions.
inline SweepShape squeezed_l3_shape() { return {{{8e6, 12000}, {60e6, 4000}, {110e6, 1400}, {0, 400}}, 0.3, 0}; }
inline std::vector<CurvePoint> squeezed_l3_sweep(unsigned seed) {
  Rng rng(seed);
  return synth(squeezed_l3_shape(), geometric_sizes(32 * KiB, 4 * GiB, 6), 0.03, 5, rng);
}

// The first of seeds 1..8 whose squeezed-L3 sweep the fit leaves with an unresolved level, and that
// fit; none when no seed does.
inline std::optional<std::pair<std::vector<CurvePoint>, LevelModelFit>> sweep_with_an_unresolved_level() {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    std::vector<CurvePoint> points = squeezed_l3_sweep(seed);
    LevelModelFit fit = fit_level_model(points);
    if (fit.unresolved) return std::make_pair(std::move(points), std::move(fit));
  }
  return std::nullopt;
}

inline void expect_levels(const std::vector<Plateau>& found, const std::vector<double>& truth, double tolerance,
                          const std::string& context) {
  ASSERT_EQ(found.size(), truth.size()) << context;
  for (std::size_t i = 0; i < truth.size(); ++i)
    EXPECT_NEAR(found[i].value / truth[i], 1.0, tolerance) << context << " level " << i;
}

// Runs sweeps with seeds 1..seeds and counts those where find_plateaus does not find exactly the
// true levels (their number, and each value within `tolerance`). For the hard cases, where a rare
// noise draw may fool any method, tests bound this count instead of betting on one seed.
inline int count_misses(const SweepShape& shape, const std::vector<double>& sizes, double noise, int samples_per_size,
                        const std::vector<double>& truth, int seeds, int spikes = 0, double tolerance = 0.03) {
  int misses = 0;
  for (int seed = 1; seed <= seeds; ++seed) {
    Rng rng(static_cast<unsigned>(seed));
    const auto found = find_plateaus(synth(shape, sizes, noise, samples_per_size, rng, spikes));
    bool ok = found.size() == truth.size();
    for (std::size_t i = 0; ok && i < truth.size(); ++i) ok = std::fabs(found[i].value / truth[i] - 1) <= tolerance;
    misses += ok ? 0 : 1;
  }
  return misses;
}

// ERT's rule, as a reference to beat: walk the sizes; a level is a run of more than 6 sizes
// within 5% of the run's first value, accepted only if at least 15% below the previous level.
inline std::vector<double> ert_levels(const std::vector<CurvePoint>& points) {
  std::vector<CurvePoint> sorted = points;
  std::sort(sorted.begin(), sorted.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
  std::vector<double> per_size;  // ERT keeps the best sample of each size
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i == 0 || sorted[i].x != sorted[i - 1].x)
      per_size.push_back(sorted[i].y);
    else
      per_size.back() = std::max(per_size.back(), sorted[i].y);
  }
  std::vector<double> levels;
  for (std::size_t i = 0; i < per_size.size();) {
    std::size_t j = i;
    while (j < per_size.size() && std::fabs(per_size[j] / per_size[i] - 1) <= 0.05) ++j;
    if (j - i > 6) {
      const double level = *std::max_element(per_size.begin() + i, per_size.begin() + j);
      if (levels.empty() || level <= 0.85 * levels.back()) levels.push_back(level);
      i = j;
    } else {
      ++i;
    }
  }
  return levels;
}

inline bool has_level_near(const std::vector<double>& levels, double value, double tolerance) {
  return std::any_of(levels.begin(), levels.end(), [&](double v) { return std::fabs(v / value - 1) <= tolerance; });
}

// ---- find_plateaus (the level model) -----------------------------------------------------------

}  // namespace roofprobe::fit_testing
