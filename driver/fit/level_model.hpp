// The memory-hierarchy model behind the fitted levels: a bandwidth-vs-working-set curve is the
// harmonic blend of the levels that serve it.
//
// At working set w, level i serves the accesses that miss every nearer level and hit level i;
// the miss fraction of level j rises smoothly around its capacity C_j (a logistic in ln w of width
// s_j: soft knees from associativity and replacement), and the times of the accesses add:
//
//   1/rate(w) = sum_i served_i(w) / B_i  +  A / w
//   served_i  = (prod_{j<i} miss_j(w)) * (1 - miss_i(w))     (the last level serves the rest)
//   miss_j(w) = 1 / (1 + exp(-(ln w - ln C_j) / s_j))
//
// A / w is a fixed cost per launch (GPU launch latency, too little parallelism at small sizes):
// the ramp before the first level. The model is fitted to every sample in log space by robust
// nonlinear least squares (Ceres, Cauchy loss: another tenant or a clock dip makes single samples
// 10-50% low), from many starts; the number of levels (and whether a ramp is present) is chosen
// by the Bayesian information criterion. Each level's bandwidth B_i and capacity C_i come with a
// 95% confidence interval from the covariance of the fit.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "driver/model/interval.hpp"

namespace roofprobe {

// One sample of a bandwidth curve: several samples may share a size.
struct CurvePoint {
  double x = 0;  // working set, bytes
  double y = 0;  // rate (GB/s, or any rate unit)
};

struct FittedLevel {
  double rate = 0;  // B_i, the level's own bandwidth (the plateau it tends to)
  Interval rate_ci95;
  double capacity = 0;  // C_i, bytes: the knee where half the accesses miss it (0: last level)
  Interval capacity_ci95;
  double x_lo = 0, x_hi = 0;    // sampled sizes where this level serves the most accesses
  int sizes = 0;                // distinct sampled sizes in [x_lo, x_hi]
  int plateau_sizes = 0;        // ... of which the curve is at the level's own rate (its plateau)
  int reached_sizes = 0;        // ... of which the fitted curve is within 2% of its rate
  std::vector<double> samples;  // the raw rates of its plateau: the sizes in [x_lo, x_hi] where the
                                // fitted curve is its own rate within the noise (all of them when
                                // none), kPlateauAboveSigmas in level_model.cpp
};

struct LevelModelOptions {
  int max_levels = 6;
  // Capacities the topology reports (bytes, nearest first: hwloc caches, cudaDeviceProp L1/L2),
  // tried as knee positions first. Empty: knees are searched on a grid only.
  std::vector<double> capacity_hints;
  // False when the probe has already left out the launches too small to fill the machine (samples
  // flagged underfilled): nothing is left for a launch ramp to explain, and a ramp fitted anyway
  // let an H100's copy curve claim a first level 20% above every sample.
  bool allow_ramp = true;
  // True when the hints are every cache the data passes through (a CPU: hwloc lists each data
  // cache level): each knee must then lie within kKneeReach of a reported capacity, no two knees
  // at the same one, so there are at most hints + 1 levels. A Zen 4's L3 fades into DRAM over
  // 32-50 MiB, a tail the logistic knee cannot follow; a second knee at 47 MiB drew it and was
  // published as an "L3.b". Left false for GPUs, whose partitioned L2 has a far half of its own.
  bool knees_at_capacities = false;
};

// The BIC difference past which the data count as strong evidence against the fit with the higher
// BIC: the Bayes factor of two fits is about exp(-dBIC / 2), and 6 is where Kass and Raftery
// (1995) begin "strong".
inline constexpr double kStrongEvidenceBic = 6;

// A level the chosen fit leaves out but the data cannot rule out: the best fit with one more
// level is within a BIC difference the criterion does not count as strong evidence, and that
// fit's levels are told apart by their intervals; or the fit the criterion prefers has a level
// that rests on too few sampled sizes to be a plateau. Its figures are that fit's.
struct UnresolvedLevel {
  double rate = 0;  // the extra level's bandwidth in the fit with one more level
  Interval rate_ci95;
  double x_lo = 0, x_hi = 0;  // bytes: between the knees around it (a sampled end where it has none)
  double delta_bic = 0;       // that fit's BIC minus the chosen one's (>= 0, < kStrongEvidenceBic)
  int levels = 0;             // levels in that fit
  // -1: a level the criterion could not rule out (delta_bic >= 0). Otherwise the criterion
  // prefers the fit with it (delta_bic < 0), but the curve is at its rate at only this many
  // sampled sizes, too few for a plateau (LevelSupport in level_model.cpp).
  int supporting_sizes = -1;
  // True for a level the chosen fit has but whose rate the data do not locate (LevelModelFit::
  // unlocated): its interval is then the span between the levels either side, which the data do
  // bound, and delta_bic and supporting_sizes say nothing. `first`: no located level comes
  // before it (it is the curve's first); its interval reaches up to its own upper bound instead.
  bool unlocated = false;
  bool first = false;
  // For an unlocated level: the fastest sample of the sizes it serves, when its fitted rate lies
  // above every one of them by more than the noise (kMaxRateAboveSamples in level_model.cpp): the
  // rate was extrapolated by the model's shape, never read. 0 otherwise.
  double above_samples = 0;
  // True for a level that may hide inside a knee of the chosen fit (LevelModelFit::in_knees): a
  // fit with one more level there, lasting an octave or more, is not ruled out by the data. Its
  // interval is the span between the published levels either side; `chi_square` is the
  // likelihood-ratio statistic of that fit against the chosen one (below kHiddenLevelChiSquare).
  bool in_knee = false;
  double chi_square = 0;
};

// The likelihood-ratio statistic below which the data do not reject a fit against the chosen one:
// the 95% quantile of the chi-square distribution with one degree of freedom.
inline constexpr double kHiddenLevelChiSquare = 3.841;

struct LevelModelFit {
  std::vector<FittedLevel> levels;  // nearest (fastest) first
  bool ramp = false;                // a launch ramp A / w was fitted
  double noise_sigma = 0;           // noise of one sample's log rate
  double bic = 0;
  int samples = 0;
  std::string model;      // one line: levels, ramp, criterion, loss (or why there are none)
  bool rejected = false;  // no model described the curve: `model` says why
  std::optional<UnresolvedLevel> unresolved;
  // Levels of the chosen fit left out of `levels`: between two levels, and no sizes locate their
  // rate (fewer than two sampled sizes where the fitted curve reaches it, and fewer than three
  // that it serves most or a 95% interval wider than a factor kMaxLocatedRateSpan;
  // take_unlocated_levels in level_model.cpp). Only for sweeps with repetitions: with one sample per size the plateau
  // rules already refuse a level without plateau sizes (LevelSupport in level_model.cpp). Such a level lies inside a
  // knee and never shows its own rate: its fitted figure is a blend of the knee's shape and the levels beside it (a
  // partitioned L2's far half fitted at 1240 GB/s for a true 900), and it is named as a level that is there, between
  // the rates either side, not published as measured.
  std::vector<UnresolvedLevel> unlocated;
  // Knees between two published levels where a level may hide (UnresolvedLevel::in_knee). A soft
  // knee between rates far apart, sampled at a few sizes, is drawn as well by one knee as by two
  // around a level lasting an octave (an L3 just above a large aggregate L2, a partitioned L2's
  // far half): the sizes do not tell them apart, and the chosen fit, having fewer parameters,
  // leaves the level out. Knees already named by `unresolved` or `unlocated` are not repeated.
  std::vector<UnresolvedLevel> in_knees;
};

// A level's rate is located when its 95% interval spans at most this factor, +-5%: the accuracy
// a published level claims. A plateau sampled at a few sizes with 1-3% noise is known far better
// (and a short level between soft knees that never reaches its rate, an L3 of 1.3 octaves at 1%
// noise, still to +-2%); wider, the rate moves with knee shapes the fit cannot tell apart.
inline constexpr double kMaxLocatedRateSpan = 1.1;

// Fits the model to a curve. Points that are not positive and finite are ignored. Returns no
// levels when there are fewer than 3 distinct sizes.
LevelModelFit fit_level_model(const std::vector<CurvePoint>& points, const LevelModelOptions& options = {});

}  // namespace roofprobe
