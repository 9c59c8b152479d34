// Fitting the harmonic-blend level model (level_model.hpp) with Ceres Solver.
//
// Search. For each number of levels L (1..max) and with and without a launch ramp, starts are
// built greedily: the knees of the best (L-1)-level fit plus one new knee at every point of a
// grid (a third of an octave apart over the sampled sizes), and the knees the topology reports.
// Given the knees, the model is linear in the inverse bandwidths (1/B_i, A), so each start is
// scored by a linear least-squares solve on the per-size medians; the best few are refined by
// the full robust fit. The criterion then picks (L, ramp). Fits whose levels do not fall with size,
// whose knees are out of order or outside the sampled sizes, are not physical and are skipped.
#include "driver/fit/level_model.hpp"
#include "driver/fit/curve_sizes.hpp"
#include "driver/fit/median.hpp"
#include "driver/fit/student_t.hpp"

#include <ceres/ceres.h>
#include <glog/logging.h>

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace roofprobe {
namespace {

using curve_sizes::group_sizes;
using curve_sizes::kNoiseFloor;
using curve_sizes::noise_sigma;
using curve_sizes::Size;

constexpr double kMinWidth = 0.03, kMaxWidth = 1.0;  // knee widths s (ln w units): sharp .. ~6 octaves 10-90%
constexpr double kCauchyScale = 2.0;                 // residuals beyond ~2 sigma are down-weighted
constexpr double kGridStep = 0.2310490601866484;     // ln(2) / 3: a third of an octave
constexpr int kRefinedStarts = 2;                    // screened starts refined per model
constexpr double kMinLevelRatio = 1.02;              // adjacent levels differ by more than 2%
// A fit describes its curve when the median size lies within 4 noise widths of it (a good fit:
// ~0.7) or within 5%, whichever is larger (a shape the logistic knee follows only roughly).
constexpr double kMaxTypicalMisfitSigmas = 4.0;
constexpr double kMaxTypicalMisfit = 0.05;
// ... and misses at most a tenth of the sizes by more than a factor 1.25 (and 4 noise widths).
constexpr double kGrossMisfit = 1.25;
constexpr double kMaxGrossMissFraction = 0.1;

// How a cache's miss fraction rises with ln size around its knee: the logistic the search fits,
// symmetric about the half-miss point, and the two asymmetric shapes of binary regression (the
// complementary log-log and log-log links), used only to ask whether a rate depends on which
// (take_unlocated_levels). `late_sharp`: misses creep in well below the capacity and complete
// quickly past it; `early_sharp`: the mirror, a sharp onset and a long tail of hits. Each is
// at one half at the knee, so a knee means the same capacity in every shape.
enum class KneeShape { logistic, late_sharp, early_sharp };

// Parameter layout: ln B_0..L-1, ln C_0..L-2, ln s_0..L-2 (or one ln s shared by every knee),
// [ln A]. A shared width is the simpler model (one sweep kernel, one replacement behaviour at
// every level); the criterion decides whether the knees need widths of their own.
struct Layout {
  int levels = 1;
  bool ramp = false;
  bool shared_width = false;
  std::array<KneeShape, 15> shapes{};  // per knee; logistic (the search's) unless asked otherwise
  int widths() const { return levels == 1 ? 0 : shared_width ? 1 : levels - 1; }
  int b(int i) const { return i; }
  int c(int i) const { return levels + i; }
  int s(int i) const { return 2 * levels - 1 + (shared_width ? 0 : i); }
  int a() const { return 2 * levels - 1 + widths(); }
  int size() const { return a() + (ramp ? 1 : 0); }
};

// The fraction of accesses that miss a cache at u = (ln size - ln knee) / width.
template <typename T>
T miss_fraction(KneeShape shape, const T& u) {
  if (shape == KneeShape::logistic) return T(1) / (T(1) + exp(-u));
  // Past |u| = 30 either asymmetric shape is 0 or 1 to double precision; clamped there, the
  // inner exp stays finite, and so does the derivative Ceres takes through it.
  const T v = u > T(30) ? T(30) : u < T(-30) ? T(-30) : u;
  constexpr double ln2 = 0.6931471805599453;
  return shape == KneeShape::late_sharp ? T(1) - exp(-ln2 * exp(v)) : exp(-ln2 * exp(-v));
}

// Fraction of the accesses at ln size lw that each level serves (the product form of the header).
template <typename T>
void served_fractions(const Layout& lay, const T* p, double lw, T* served) {
  T reach = T(1);
  for (int i = 0; i + 1 < lay.levels; ++i) {
    const T miss = miss_fraction(lay.shapes[i], (T(lw) - p[lay.c(i)]) / exp(p[lay.s(i)]));
    served[i] = reach * (T(1) - miss);
    reach = reach * miss;
  }
  served[lay.levels - 1] = reach;
}

// ln rate of the model at ln size lw.
template <typename T>
T model_log_rate(const Layout& lay, const T* p, double lw) {
  T served[16];
  served_fractions(lay, p, lw, served);
  T time = T(0);
  for (int i = 0; i < lay.levels; ++i) time += served[i] * exp(-p[lay.b(i)]);
  if (lay.ramp) time += exp(p[lay.a()] - T(lw));
  return -log(time);
}

// The model's ln rate at one size, with its gradient by automatic differentiation.
struct SizeModel {
  Layout lay;
  double lw;
  template <typename T>
  bool operator()(T const* const* params, T* log_rate) const {
    log_rate[0] = model_log_rate(lay, params[0], lw);
    return true;
  }
};

// The model at one size, evaluated once per parameter vector and shared by every sample of that
// size: a sweep repeats each size, and evaluating the model, not reading the samples, is what a
// fit costs. Ceres evaluates the residual blocks of a problem one after another (one thread),
// each with the same parameters, so the last evaluation per size is the one to keep. A value
// alone and a value with its gradient are kept apart: the two are computed in other arithmetic
// (doubles, jets), and a sample's residual is then exactly what its own evaluation would give.
class SizeModelCache {
 public:
  SizeModelCache(const Layout& lay, double lw) : model_(new SizeModel{lay, lw}), n_(lay.size()) {
    model_.AddParameterBlock(n_);
    model_.SetNumResiduals(1);
    with_gradient_.gradient.resize(static_cast<std::size_t>(n_));
  }
  // The model's ln rate at `p` (and its gradient, when `gradient` is given); false when it
  // cannot be evaluated there.
  bool evaluate(const double* p, double* log_rate, const double** gradient) {
    Entry& e = gradient ? with_gradient_ : value_only_;
    if (!e.known || !std::equal(p, p + n_, e.p.begin())) {
      e.p.assign(p, p + n_);
      double* jacobian[1] = {e.gradient.data()};
      e.ok = model_.Evaluate(&p, &e.log_rate, gradient ? jacobian : nullptr);
      e.known = true;
    }
    *log_rate = e.log_rate;
    if (gradient) *gradient = e.gradient.data();
    return e.ok;
  }

 private:
  struct Entry {
    bool known = false, ok = false;
    std::vector<double> p;
    double log_rate = 0;
    std::vector<double> gradient;
  };
  ceres::DynamicAutoDiffCostFunction<SizeModel, 8> model_;
  int n_;
  Entry value_only_, with_gradient_;
};

// One sample's residual, (ln rate of the model - ln rate measured) / sigma.
class SampleResidual : public ceres::CostFunction {
 public:
  SampleResidual(std::shared_ptr<SizeModelCache> size, int parameters, double z, double inv_sigma)
      : size_(std::move(size)), z_(z), inv_sigma_(inv_sigma) {
    set_num_residuals(1);
    mutable_parameter_block_sizes()->push_back(parameters);
  }
  bool Evaluate(double const* const* parameters, double* residuals, double** jacobians) const override {
    const bool want_gradient = jacobians != nullptr && jacobians[0] != nullptr;
    double log_rate = 0;
    const double* gradient = nullptr;
    if (!size_->evaluate(parameters[0], &log_rate, want_gradient ? &gradient : nullptr)) return false;
    residuals[0] = (log_rate - z_) * inv_sigma_;
    if (want_gradient)
      for (int j = 0; j < parameter_block_sizes()[0]; ++j) jacobians[0][j] = gradient[j] * inv_sigma_;
    return true;
  }

 private:
  std::shared_ptr<SizeModelCache> size_;
  double z_, inv_sigma_;
};

// One candidate fit.
struct Candidate {
  Layout lay;
  std::vector<double> p;
  double cost = std::numeric_limits<double>::infinity();  // 1/2 sum rho(r^2)
  double bic = std::numeric_limits<double>::infinity();
};

// The data of one fit: every sample, the distinct sizes and the bounds of the search.
struct Data {
  std::vector<Size> sizes;
  std::vector<std::pair<double, double>> samples;  // (ln w, ln rate)
  double sigma = kNoiseFloor;
  double lw_min = 0, lw_max = 0, z_min = 0, z_max = 0;
  std::vector<double> bound_capacities;  // ln bytes, ascending: knees must each sit at one (options)
  bool one_sample_per_size = false;      // no repetitions: the noise comes from neighbouring sizes
};

// Starting point for the given knees: the inverse bandwidths (and ramp) by linear least squares
// of the relative time residuals on the per-size medians. Returns the squared residual norm.
double linear_start(const Data& d, const Layout& lay, const std::vector<double>& knees,
                    const std::vector<double>& widths, std::vector<double>& p) {
  if (static_cast<int>(knees.size()) != lay.levels - 1 || widths.size() != knees.size())
    throw std::logic_error("level model: a start has " + std::to_string(knees.size()) + " knees for " +
                           std::to_string(lay.levels) + " levels");
  p.assign(lay.size(), 0.0);
  double log_width_sum = 0;
  for (int i = 0; i + 1 < lay.levels; ++i) p[lay.c(i)] = knees[i], log_width_sum += std::log(widths[i]);
  for (int i = 0; i + 1 < lay.levels; ++i)
    p[lay.s(i)] = lay.shared_width ? log_width_sum / (lay.levels - 1) : std::log(widths[i]);
  const int cols = lay.levels + (lay.ramp ? 1 : 0);
  Eigen::MatrixXd a(d.sizes.size(), cols);
  for (std::size_t r = 0; r < d.sizes.size(); ++r) {
    double served[16];
    served_fractions(lay, p.data(), d.sizes[r].lw, served);
    const double rate = std::exp(d.sizes[r].median_z);  // row scaled by 1/t_observed
    for (int i = 0; i < lay.levels; ++i) a(r, i) = served[i] * rate;
    if (lay.ramp) a(r, lay.levels) = std::exp(-d.sizes[r].lw) * rate;
  }
  const Eigen::VectorXd ones = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(d.sizes.size()));
  const Eigen::VectorXd u = a.colPivHouseholderQr().solve(ones);
  const double biggest = std::max(u.head(lay.levels).maxCoeff(), 1e-300);
  for (int i = 0; i < lay.levels; ++i) p[lay.b(i)] = -std::log(std::max(u(i), 1e-6 * biggest));
  if (lay.ramp) p[lay.a()] = std::log(std::max(lay.ramp ? u(lay.levels) : 0.0, 1e-12 * biggest * std::exp(d.lw_min)));
  // Evaluate the clamped start, not the unconstrained solve.
  double sse = 0;
  for (const Size& s : d.sizes) {
    const double r = model_log_rate(lay, p.data(), s.lw) - s.median_z;
    sse += r * r;
  }
  return std::isfinite(sse) ? sse : std::numeric_limits<double>::infinity();
}

void set_bounds(ceres::Problem& problem, const Data& d, const Layout& lay, double* p) {
  for (int i = 0; i < lay.levels; ++i) {
    problem.SetParameterLowerBound(p, lay.b(i), d.z_min - 3);
    problem.SetParameterUpperBound(p, lay.b(i), d.z_max + 3);
  }
  for (int i = 0; i + 1 < lay.levels; ++i) {
    problem.SetParameterLowerBound(p, lay.c(i), d.lw_min - 1);
    problem.SetParameterUpperBound(p, lay.c(i), d.lw_max + 1);
    problem.SetParameterLowerBound(p, lay.s(i), std::log(kMinWidth));
    problem.SetParameterUpperBound(p, lay.s(i), std::log(kMaxWidth));
  }
  if (lay.ramp) {
    problem.SetParameterLowerBound(p, lay.a(), -d.z_max + d.lw_min - 40);
    problem.SetParameterUpperBound(p, lay.a(), -d.z_min + d.lw_max + 5);
  }
}

void build_problem(ceres::Problem& problem, const Data& d, const Layout& lay, double* p) {
  std::map<double, std::shared_ptr<SizeModelCache>> by_size;
  for (const auto& [lw, z] : d.samples) {
    std::shared_ptr<SizeModelCache>& size = by_size[lw];
    if (!size) size = std::make_shared<SizeModelCache>(lay, lw);
    problem.AddResidualBlock(new SampleResidual(size, lay.size(), z, 1 / d.sigma), new ceres::CauchyLoss(kCauchyScale),
                             p);
  }
  set_bounds(problem, d, lay, p);
}

// Clamps a start into the bounds (Ceres requires a feasible start).
void clamp_start(const Data& d, const Layout& lay, std::vector<double>& p) {
  for (int i = 0; i < lay.levels; ++i) p[lay.b(i)] = std::clamp(p[lay.b(i)], d.z_min - 2.9, d.z_max + 2.9);
  for (int i = 0; i + 1 < lay.levels; ++i) {
    p[lay.c(i)] = std::clamp(p[lay.c(i)], d.lw_min - 0.9, d.lw_max + 0.9);
    p[lay.s(i)] = std::clamp(p[lay.s(i)], std::log(kMinWidth) + 1e-6, std::log(kMaxWidth) - 1e-6);
  }
  if (lay.ramp) p[lay.a()] = std::clamp(p[lay.a()], -d.z_max + d.lw_min - 39.9, -d.z_min + d.lw_max + 4.9);
}

// A parameter's bounds narrower than the search's (set_bounds): index, lower, upper.
struct Bound {
  int index = 0;
  double lo = 0, hi = 0;
};

Candidate refine(const Data& d, const Layout& lay, std::vector<double> p, const std::vector<Bound>& bounds = {}) {
  clamp_start(d, lay, p);
  for (const Bound& b : bounds) p[b.index] = std::clamp(p[b.index], b.lo, b.hi);
  ceres::Problem problem;
  build_problem(problem, d, lay, p.data());
  for (const Bound& b : bounds) {
    problem.SetParameterLowerBound(p.data(), b.index, b.lo);
    problem.SetParameterUpperBound(p.data(), b.index, b.hi);
  }
  ceres::Solver::Options options;
  options.linear_solver_type = ceres::DENSE_QR;
  options.max_num_iterations = 200;
  options.logging_type = ceres::SILENT;
  options.num_threads = 1;
  ceres::Solver::Summary summary;
  ceres::Solve(options, &problem, &summary);
  Candidate c;
  c.lay = lay;
  c.p = std::move(p);
  if (summary.IsSolutionUsable() && std::isfinite(summary.final_cost)) {
    c.cost = summary.final_cost;
    c.bic = 2 * c.cost + lay.size() * std::log(static_cast<double>(d.samples.size()));
  }
  return c;
}

// How far above the fastest per-size median an observed first level may lie: noise and the blend
// of a soft knee, not a level of its own.
constexpr double kFirstLevelReach = 1.05;
// How far above the fastest size a first level hidden by a launch ramp may be published: the ramp
// may cost the fastest size at most a fifth of its time. Beyond that the level was not measured,
// it was guessed from the ramp's shape.
constexpr double kRampedFirstLevelReach = 1.25;

// How far (a factor) a knee may lie from the capacity it belongs to: exclusive caches add the
// nearer levels' capacity, a shared cache seen by fewer cores holds less, replacement moves the
// half-miss point; a factor of 2.5 holds all of these and still tells apart L2 from L3. The last
// cache fades into memory more slowly (non-inclusive L3, prefetchers, a copy's two streams): a
// Zen 4's copy curve falls from 26 to 270 MB with its half-miss point at 90 MB, 2.8x its 32 MiB
// L3. Its knee may lie up to 4x past it, the factor past which fit.cpp names a knee memory.
const double kKneeReach = std::log(2.5);
const double kLastKneeReach = std::log(4.0);

// With bound capacities, each knee belongs to a cache of its own, in order (a cache may show no
// knee): within kKneeReach of a nearer cache's capacity. The last cache's window is wider. Its
// lower edge reaches down to the nearer cache's reach, not only a factor of its own capacity: the share of a
// last-level cache a run gets depends on what else runs on the socket (a VM host's other
// tenants, sub-NUMA clustering, cache allocation), which the topology does not report. hwloc gave
// a 2-core VM on a Xeon a 480 MiB L3 whose knee was at ~110 MB. Its upper edge is kLastKneeReach.
bool knees_at_capacities(const Data& d, const Candidate& c) {
  const std::vector<double>& caps = d.bound_capacities;
  if (caps.empty()) return true;
  std::size_t next = 0;  // the first cache the next knee may belong to
  for (int i = 0; i + 1 < c.lay.levels; ++i) {
    const double knee = c.p[c.lay.c(i)];
    bool placed = false;
    for (std::size_t h = next; h < caps.size() && !placed; ++h) {
      const bool last = h + 1 == caps.size();
      // Never narrower than the inner caches' window: where the nearer cache's total is close to
      // the last one's (a Skylake-SP socket: 28 MiB of L2, 38.5 MB of L3) its reach passes the
      // last cache's own capacity.
      const double lo = last && h > 0 ? std::min(caps[h] - kKneeReach, caps[h - 1] + kKneeReach) : caps[h] - kKneeReach;
      const double hi = caps[h] + (last ? kLastKneeReach : kKneeReach);
      if (knee >= lo && knee <= hi) placed = true, next = h + 1;
    }
    if (!placed) return false;
  }
  return true;
}

// A fit is physical when its levels fall with size, its knees are in order and inside the
// sampled sizes, and every level lies within reach of the data.
bool physical(const Data& d, const Candidate& c) {
  const Layout& lay = c.lay;
  if (!knees_at_capacities(d, c)) return false;
  for (int i = 0; i + 1 < lay.levels; ++i) {
    if (c.p[lay.b(i)] - c.p[lay.b(i + 1)] < std::log(kMinLevelRatio)) return false;
    if (c.p[lay.c(i)] < d.lw_min - 0.7 || c.p[lay.c(i)] > d.lw_max + 0.7) return false;
    if (i > 0 && c.p[lay.c(i)] <= c.p[lay.c(i - 1)]) return false;
  }
  // A level is a rate that was observed. Without a ramp the nearest level may not lie above the
  // fastest size: a two-size "level" 20% above every sample of an H100's copy curve was the
  // blend's way to bend into the next knee. With a ramp it is extrapolated through the ramp, but
  // only as far as kRampedFirstLevelReach: A / w once let a Zen 4 read curve claim an 839 GB/s L1
  // above every sample (<= 450) and above the cores' 473 GB/s load peak.
  const bool first_seen = !lay.ramp && (lay.levels == 1 || c.p[lay.c(0)] > d.lw_min);
  if (first_seen && c.p[lay.b(0)] > d.z_max + std::log(kFirstLevelReach)) return false;
  if (c.p[lay.b(0)] > d.z_max + std::log(kRampedFirstLevelReach)) return false;
  return c.p[lay.b(lay.levels - 1)] >= d.z_min - std::log(2.0);
}

struct Start {
  std::vector<double> knees, widths;
};

// Starts for L levels: the previous best knees plus one grid knee; the topology's capacities.
std::vector<Start> starts_for(const Data& d, int levels, const Candidate* previous, const std::vector<double>& hints) {
  std::vector<Start> starts;
  if (levels == 1) return {Start{}};
  std::vector<double> base_knees, base_widths;
  if (previous != nullptr)
    for (int i = 0; i + 1 < previous->lay.levels; ++i)
      base_knees.push_back(previous->p[previous->lay.c(i)]),
          base_widths.push_back(std::exp(previous->p[previous->lay.s(i)]));
  // The previous fit may have fewer levels than one less (a count with no physical fit was
  // skipped): its knees are completed in the middle of the widest gaps.
  while (static_cast<int>(base_knees.size()) < levels - 2) {
    double widest = -1, at = 0;
    for (std::size_t k = 0; k <= base_knees.size(); ++k) {
      const double lo = k == 0 ? d.lw_min : base_knees[k - 1];
      const double hi = k == base_knees.size() ? d.lw_max : base_knees[k];
      if (hi - lo > widest) widest = hi - lo, at = (lo + hi) / 2;
    }
    const auto pos = std::lower_bound(base_knees.begin(), base_knees.end(), at) - base_knees.begin();
    base_knees.insert(base_knees.begin() + pos, at);
    base_widths.insert(base_widths.begin() + pos, 0.25);
  }
  for (double g = d.lw_min + 0.2; g < d.lw_max - 0.1; g += kGridStep) {
    if (std::any_of(base_knees.begin(), base_knees.end(), [&](double k) { return std::fabs(k - g) < 0.15; })) continue;
    for (double width : {0.15, 0.4}) {
      Start s{base_knees, base_widths};
      const auto at = std::lower_bound(s.knees.begin(), s.knees.end(), g) - s.knees.begin();
      s.knees.insert(s.knees.begin() + at, g);
      s.widths.insert(s.widths.begin() + at, width);
      starts.push_back(std::move(s));
    }
  }
  std::vector<double> inside;
  for (double h : hints)
    if (h > 0 && std::log(h) > d.lw_min - 0.5 && std::log(h) < d.lw_max + 0.5) inside.push_back(std::log(h));
  if (static_cast<int>(inside.size()) == levels - 1)
    starts.push_back({inside, std::vector<double>(inside.size(), 0.25)});
  return starts;
}

// Improves a start's knees one at a time over the grid (positions and a few widths), scored by the
// linear solve: greedy starts inherit the knees of a fit with fewer levels, which a soft knee
// standing in for two levels has pulled out of place.
Start descend(const Data& d, const Layout& lay, Start start, double& score) {
  std::vector<double> p;
  score = linear_start(d, lay, start.knees, start.widths, p);
  for (int round = 0; round < 2; ++round) {
    bool moved = false;
    for (std::size_t k = 0; k < start.knees.size(); ++k) {
      const double lo = k > 0 ? start.knees[k - 1] + 0.1 : d.lw_min - 0.5;
      const double hi = k + 1 < start.knees.size() ? start.knees[k + 1] - 0.1 : d.lw_max + 0.5;
      for (double g = d.lw_min - 0.5; g <= d.lw_max + 0.5; g += kGridStep / 2) {
        if (g <= lo || g >= hi) continue;
        for (double width : {0.08, 0.2, 0.4}) {
          Start trial = start;
          trial.knees[k] = g;
          trial.widths[k] = width;
          const double sse = linear_start(d, lay, trial.knees, trial.widths, p);
          if (sse < score * (1 - 1e-9)) score = sse, start = std::move(trial), moved = true;
        }
      }
    }
    if (!moved) break;
  }
  return start;
}

// Starts that split one knee of the fit with a level fewer into two, around a level between
// them. A level squeezed between two soft knees (a partitioned L2's far half, one octave long; an
// L3 just above a large L2) is drawn by the fewer-level fit as one wide knee from the level before
// it to the level after it; one grid knee added beside that wide knee does not find it (the
// screening prefers a knee that splits a noisy plateau), two narrower knees either side of the
// wide knee's centre do.
std::vector<Start> split_starts(const Data& d, int levels, const Candidate* previous) {
  std::vector<Start> starts;
  if (previous == nullptr || previous->lay.levels + 1 != levels || levels < 3) return starts;
  const Layout& lay = previous->lay;
  for (int k = 0; k + 1 < lay.levels; ++k) {
    const double centre = previous->p[lay.c(k)];
    const double width = std::exp(previous->p[lay.s(k)]);
    for (double half : {0.25, 0.45, 0.7}) {
      Start s;
      for (int i = 0; i + 1 < lay.levels; ++i) {
        const double w = std::exp(previous->p[lay.s(i)]);
        if (i != k) {
          s.knees.push_back(previous->p[lay.c(i)]), s.widths.push_back(w);
          continue;
        }
        const double narrower = std::clamp(std::min(width, half) * 0.6, 0.08, 0.3);
        s.knees.push_back(centre - half), s.widths.push_back(narrower);
        s.knees.push_back(centre + half), s.widths.push_back(narrower);
      }
      const bool inside = s.knees.front() > d.lw_min - 0.5 && s.knees.back() < d.lw_max + 0.5 &&
                          std::is_sorted(s.knees.begin(), s.knees.end());
      if (inside) starts.push_back(std::move(s));
    }
  }
  return starts;
}

// The start a fit nests: the knees and widths of a fit of a simpler model with the same levels
// (one width shared by every knee), from which the model with widths of their own can only
// improve. The grid's starts, made from the fit with a level fewer, need not reach it: a CPU's L3
// before a slow fade into DRAM (4 levels, one knee twice as wide as the others) was found with a
// shared width and missed with widths of their own.
Start nested_start(const Candidate& simpler) {
  Start s;
  for (int i = 0; i + 1 < simpler.lay.levels; ++i)
    s.knees.push_back(simpler.p[simpler.lay.c(i)]), s.widths.push_back(std::exp(simpler.p[simpler.lay.s(i)]));
  return s;
}

Candidate best_fit(const Data& d, const Layout& lay, const Candidate* previous, const std::vector<double>& hints,
                   const Candidate* simpler = nullptr) {
  std::vector<std::pair<double, Start>> screened;
  for (Start& s : starts_for(d, lay.levels, previous, hints)) {
    std::vector<double> p;
    const double sse = linear_start(d, lay, s.knees, s.widths, p);
    screened.emplace_back(sse, std::move(s));
  }
  std::sort(screened.begin(), screened.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  // Refined: the best screened starts, each also after descending its knees over the grid, and
  // the topology's start (the last one starts_for makes) however it screens.
  std::vector<Start> refined;
  for (std::size_t k = 0; k < screened.size() && k < static_cast<std::size_t>(kRefinedStarts); ++k)
    refined.push_back(screened[k].second);
  double score = 0;
  if (lay.levels > 1 && !screened.empty()) refined.push_back(descend(d, lay, screened.front().second, score));
  if (!hints.empty() && lay.levels > 1) {
    const std::vector<Start> all = starts_for(d, lay.levels, previous, hints);
    if (!all.empty() && all.back().knees.size() + 1 == static_cast<std::size_t>(lay.levels))
      refined.push_back(all.back());
  }
  // The split starts are refined by their own ranking: the grid's best starts are the ones
  // the screening prefers, which is not where a squeezed level is found.
  std::vector<std::pair<double, Start>> splits;
  for (Start& s : split_starts(d, lay.levels, previous)) {
    std::vector<double> p;
    const double sse = linear_start(d, lay, s.knees, s.widths, p);
    splits.emplace_back(sse, std::move(s));
  }
  std::sort(splits.begin(), splits.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t k = 0; k < splits.size() && k < static_cast<std::size_t>(kRefinedStarts); ++k)
    refined.push_back(splits[k].second);
  if (simpler != nullptr && std::isfinite(simpler->cost) && simpler->lay.levels == lay.levels)
    refined.push_back(nested_start(*simpler));
  Candidate best;
  best.lay = lay;
  for (const Start& s : refined) {
    std::vector<double> p;
    linear_start(d, lay, s.knees, s.widths, p);
    Candidate c = refine(d, lay, p);
    if (std::isfinite(c.cost) && physical(d, c) && c.cost < best.cost) best = std::move(c);
  }
  return best;
}

// An interval is published only where the data locates the parameter: a rate known to within a
// factor kLocatedSpan either side, a knee between kLocatedSpan below the smallest and above the
// largest size sampled. Beyond that the covariance is finite but says nothing (an H200's L1
// knee, never sampled between its plateau and memory's, came out as [3e-6, 1e20] bytes).
constexpr double kLocatedSpan = 2;
Interval located(const Interval& ci, double lo, double hi) {
  return ci.known() && ci.lo >= lo && ci.hi <= hi ? ci : Interval{};
}

// A sampled size is on a level's plateau where the fitted curve there is the level's own rate to
// within the noise (kPlateauAboveSigmas noise sigmas, kPlateauAboveFloor at least) and its median
// is not above the curve by more than that. Near a knee the curve is a blend with the next level
// (an H200's ca read at 64 MiB: 8% of the accesses from the 60 MiB L2 by the fit, 4.97 TB/s
// against HBM's 4.81 peak), and a size faster than the curve is a mixture the knee does not
// draw; sizes slower than it stay, since that is noise (another tenant, a clock dip) which the
// spread must show. The level's statistics (best, median, spread) are its plateau's samples; a
// level with no plateau size (a short one between soft knees) keeps every size it serves most.
constexpr double kPlateauAboveSigmas = 3;
constexpr double kPlateauAboveFloor = 0.02;  // ln rate: 2%
// A sampled size reaches a level where the fitted curve there is within this of the level's
// rate (ln rate: 2%), whatever the noise: the rate is then read off the data, not extrapolated
// through a knee's shape, which a fit only approximates (take_unlocated_levels).
constexpr double kReachedSpan = 0.02;

// The residuals are scaled by the noise sigma measured from the repetitions; where a fit's own
// scatter is larger, its covariances and likelihood ratios are scaled by that excess.
double scatter_scale(const Data& d, const Candidate& c) {
  const double dof = std::max(1.0, static_cast<double>(d.samples.size()) - c.lay.size());
  return std::max(1.0, 2 * c.cost / dof);
}

// 95% intervals of exp(parameter) from the covariance of the fit; unknown when it is singular.
std::vector<Interval> intervals(const Data& d, const Candidate& c) {
  std::vector<double> p = c.p;
  ceres::Problem problem;
  build_problem(problem, d, c.lay, p.data());
  ceres::Covariance::Options options;
  options.algorithm_type = ceres::DENSE_SVD;
  ceres::Covariance covariance(options);
  std::vector<Interval> out(p.size());
  const std::vector<std::pair<const double*, const double*>> blocks = {{p.data(), p.data()}};
  if (!covariance.Compute(blocks, &problem)) return out;
  const int n = c.lay.size();
  std::vector<double> cov(static_cast<std::size_t>(n) * n);
  if (!covariance.GetCovarianceBlock(p.data(), p.data(), cov.data())) return out;
  // The covariance is already in parameter units (scatter_scale).
  const double scale = scatter_scale(d, c);
  for (int i = 0; i < n; ++i) {
    const double sd = std::sqrt(std::max(0.0, cov[static_cast<std::size_t>(i) * n + i] * scale));
    const Interval ci{std::exp(p[i] - 1.96 * sd), std::exp(p[i] + 1.96 * sd)};
    // A parameter the data barely constrains gives an interval beyond any number: unknown.
    if (std::isfinite(ci.lo) && std::isfinite(ci.hi) && ci.lo > 0) out[i] = ci;
  }
  return out;
}

// Whether sampled size k is on the plateau of the level that serves it most (`owner`): the fitted
// curve there is that level's own rate within the noise and the size's median is not above the
// curve by more (kPlateauAboveSigmas; describe() says why).
bool on_plateau(const Data& d, const Candidate& c, std::size_t k, int* owner) {
  const Layout& lay = c.lay;
  double served[16];
  served_fractions(lay, c.p.data(), d.sizes[k].lw, served);
  *owner = static_cast<int>(std::max_element(served, served + lay.levels) - served);
  const double above = std::max(kPlateauAboveSigmas * d.sigma, kPlateauAboveFloor);
  const double model_z = model_log_rate(lay, c.p.data(), d.sizes[k].lw);
  return std::fabs(model_z - c.p[lay.b(*owner)]) <= above && d.sizes[k].median_z - model_z <= above;
}

LevelModelFit describe(const Data& d, const Candidate& c) {
  const Layout& lay = c.lay;
  LevelModelFit fit;
  fit.ramp = lay.ramp;
  fit.noise_sigma = d.sigma;
  fit.bic = c.bic;
  fit.samples = static_cast<int>(d.samples.size());
  const std::vector<Interval> ci = intervals(d, c);
  fit.levels.resize(lay.levels);
  for (int i = 0; i < lay.levels; ++i) {
    FittedLevel& level = fit.levels[i];
    level.rate = std::exp(c.p[lay.b(i)]);
    // B = exp(ln B): the interval of ln B maps directly.
    level.rate_ci95 = located(ci[lay.b(i)], level.rate / kLocatedSpan, level.rate * kLocatedSpan);
    if (i + 1 < lay.levels) {
      level.capacity = std::exp(c.p[lay.c(i)]);
      level.capacity_ci95 =
          located(ci[lay.c(i)], d.sizes.front().x / kLocatedSpan, d.sizes.back().x_last * kLocatedSpan);
    }
  }
  // Each sampled size belongs to the level that serves most of its accesses; whether it is on
  // the level's plateau decides whether its samples count in the level's statistics.
  std::vector<int> owner(d.sizes.size());
  std::vector<bool> plateau(d.sizes.size());
  for (std::size_t k = 0; k < d.sizes.size(); ++k) plateau[k] = on_plateau(d, c, k, &owner[k]);
  for (int i = 0; i < lay.levels; ++i) {
    FittedLevel& level = fit.levels[i];
    bool has_plateau = false;
    for (std::size_t k = 0; k < d.sizes.size(); ++k) has_plateau |= owner[k] == i && plateau[k];
    std::vector<double> plateau_median_z;
    for (std::size_t k = 0; k < d.sizes.size(); ++k) {
      if (owner[k] != i) continue;
      if (level.sizes == 0) level.x_lo = d.sizes[k].x;
      level.x_hi = d.sizes[k].x_last;
      ++level.sizes;
      if (std::fabs(model_log_rate(lay, c.p.data(), d.sizes[k].lw) - c.p[lay.b(i)]) <= kReachedSpan)
        ++level.reached_sizes;
      if (plateau[k]) {
        ++level.plateau_sizes;
        plateau_median_z.push_back(d.sizes[k].median_z);
      }
      if (!has_plateau || plateau[k])
        level.samples.insert(level.samples.end(), d.sizes[k].y.begin(), d.sizes[k].y.end());
    }
    if (level.sizes == 0) {
      // A level that never serves most accesses (a short one between soft knees): its span is
      // between its knees.
      const double lo = i > 0 ? fit.levels[i - 1].capacity : d.sizes.front().x;
      const double hi = level.capacity > 0 ? level.capacity : d.sizes.back().x_last;
      level.x_lo = std::min(lo, hi);
      level.x_hi = std::max(lo, hi);
    }
    // A sweep with one sample per size often leaves the covariance singular (a knee width at its
    // bound, a parameter the data barely move), and no interval. Its rate is still measured by its
    // plateau: each size's log rate scatters by the noise sigma estimated from neighbouring sizes
    // (curve_sizes::noise_sigma), so over n plateau sizes the rate is known to 1.96 sigma / sqrt(n).
    if (!level.rate_ci95.known() && d.one_sample_per_size && level.samples.size() >= 2) {
      const double half = 1.96 * d.sigma / std::sqrt(static_cast<double>(level.samples.size()));
      level.rate_ci95 = {level.rate * std::exp(-half), level.rate * std::exp(half)};
    }
    // With repetitions the covariance is singular for the same reasons (a noisy VM's sweep, every
    // point flagged noisy, left a Zen 4's four levels without one). The plateau still measures
    // the rate: each plateau size's median is one reading of it, and the sizes scatter about it
    // by more than the repetitions do (the clock and the neighbours move between sizes), so the
    // scatter between sizes, never less than the repetitions' noise, sets the interval, with
    // Student's t for the few sizes a plateau has.
    if (!level.rate_ci95.known() && !d.one_sample_per_size && plateau_median_z.size() >= 2) {
      const double n = static_cast<double>(plateau_median_z.size());
      const double z = std::log(level.rate);
      double sum_sq = 0;
      for (const double m : plateau_median_z) sum_sq += (m - z) * (m - z);
      const double scatter = std::max(d.sigma, std::sqrt(sum_sq / (n - 1)));
      const double half = t975(n - 1) * scatter / std::sqrt(n);
      level.rate_ci95 = {level.rate * std::exp(-half), level.rate * std::exp(half)};
    }
  }
  std::ostringstream text;
  text << "harmonic blend of " << lay.levels << " level" << (lay.levels == 1 ? "" : "s")
       << (lay.ramp ? " with a launch ramp" : "") << ", robust (Cauchy) least squares in log rate, levels by BIC";
  fit.model = text.str();
  return fit;
}

// The curve's sizes and samples, their noise, and the knee capacities a CPU's topology binds;
// `max_levels` is the most levels the data can support.
Data prepare_data(const std::vector<CurvePoint>& points, const LevelModelOptions& options, int* max_levels) {
  Data d;
  d.sizes = group_sizes(points);
  if (d.sizes.size() < 3) return d;
  for (const Size& s : d.sizes)
    for (double z : s.z) d.samples.emplace_back(s.lw, z);
  d.sigma = noise_sigma(d.sizes);
  d.one_sample_per_size = std::all_of(d.sizes.begin(), d.sizes.end(), [](const Size& s) { return s.z.size() == 1; });
  d.lw_min = d.sizes.front().lw;
  d.lw_max = d.sizes.back().lw;
  d.z_min = d.z_max = d.sizes.front().median_z;
  for (const Size& s : d.sizes) d.z_min = std::min(d.z_min, s.median_z), d.z_max = std::max(d.z_max, s.median_z);

  int most_levels = std::min(options.max_levels, 15);
  if (options.knees_at_capacities && !options.capacity_hints.empty()) {
    for (double h : options.capacity_hints)
      if (h > 0) d.bound_capacities.push_back(std::log(h));
    std::sort(d.bound_capacities.begin(), d.bound_capacities.end());
    most_levels = std::min(most_levels, static_cast<int>(d.bound_capacities.size()) + 1);
  }
  // At least two sizes per level on average: a level needs a rate, a knee and a width.
  *max_levels = std::clamp(static_cast<int>(d.sizes.size()) / 2, 1, most_levels);
  return d;
}

// The best physical fit of each level count tried, over the variants (with and without a launch
// ramp, knee widths shared or of their own); empty when no count gives one. The criterion's pick
// is the one with the least BIC (chosen_model).
bool levels_are_plateaus(const Data& d, const Candidate& c);
bool knee_falls_like_a_level(const Candidate& c, int knee);
bool sizes_fall_like_a_level_across(const Data& d, double at);

// `least`, when given, receives the fit with the least BIC of all, whether its levels are
// plateaus or not (unsupported_level).
std::map<int, Candidate> best_fits_by_levels(const Data& d, const LevelModelOptions& options, int max_levels,
                                             Candidate* least = nullptr) {
  // Per count, the fits whose levels are plateaus: a variant (a launch ramp, widths of their own)
  // may pass where the count's least-BIC fit does not.
  std::map<int, std::vector<Candidate>> passing;
  // The shared-width fits by levels and ramp: the nested starts of the fits with widths of their
  // own, whose 3-level fits start from a 2-level one (with a ramp where one was fitted).
  std::map<std::pair<int, bool>, Candidate> shared_fits, own_fits;
  for (int variant : {2, 3, 0, 1}) {
    const bool ramp = variant & 1, shared_width = variant & 2;
    if (ramp && !options.allow_ramp) continue;
    Candidate previous;
    double best_bic = std::numeric_limits<double>::infinity();
    int since_best = 0;
    // Levels are added until two more in a row do not improve the criterion.
    for (int levels = 1; levels <= max_levels && since_best < 2; ++levels) {
      Layout lay{levels, ramp, shared_width};
      // With one knee a shared width is the same model: fitted once.
      if (!shared_width && levels <= 2) continue;
      if (lay.size() >= static_cast<int>(d.samples.size())) break;
      const Candidate* seed = std::isfinite(previous.cost) ? &previous : nullptr;
      if (!shared_width && levels == 3) {
        auto two = shared_fits.find({2, true});
        if (two == shared_fits.end()) two = shared_fits.find({2, false});
        if (two != shared_fits.end()) seed = &two->second;
      }
      const auto nested = shared_fits.find({levels, ramp});
      Candidate c = best_fit(d, lay, seed, options.capacity_hints,
                             shared_width || nested == shared_fits.end() ? nullptr : &nested->second);
      ++since_best;
      if (!std::isfinite(c.cost)) continue;  // no physical fit with this many levels; try more
      if (c.bic < best_bic) best_bic = c.bic, since_best = 0;
      if (least != nullptr && c.bic < least->bic) *least = c;
      if (levels_are_plateaus(d, c)) passing[levels].push_back(c);
      (shared_width ? shared_fits : own_fits)[{levels, ramp}] = c;
      previous = std::move(c);
    }
  }
  // A knee drawn sharp only because its width is shared with a sharp one is no evidence of a
  // step. Where the same levels with widths of their own fit better and draw that knee as a
  // level's decline (knee_falls_like_a_level), and the sampled sizes either side of the shared
  // fit's knee do not fall as a knee does either, the step is that decline. An older gpu-benches
  // L40 table falls evenly from 743 GB/s at 113 MB to 661 at 834 MB; sharing the narrowest width
  // with the L2's knee, a knee at 428 MB split it into 732 and 666, where the sizes either side
  // read 709 and 703, and its own width, 0.34, made it a gentle decline. (An H200's gpu-cache
  // table, whose L2 declines before a drop from 9880 to 7785 GB/s between two sizes, keeps its
  // knee: its sizes fall as a knee does, though a wide knee of its own also draws the decline.)
  const auto decline_drawn_as_a_step = [&](const Candidate& c) {
    if (!c.lay.shared_width) return false;
    const auto own = own_fits.find({c.lay.levels, c.lay.ramp});
    if (own == own_fits.end() || !std::isfinite(own->second.cost) || own->second.cost > c.cost) return false;
    for (int i = 0; i + 1 < c.lay.levels; ++i)
      if (knee_falls_like_a_level(own->second, i) && sizes_fall_like_a_level_across(d, c.p[c.lay.c(i)])) return true;
    return false;
  };
  std::map<int, Candidate> best;
  for (const auto& [levels, fits] : passing)
    for (const Candidate& c : fits) {
      if (decline_drawn_as_a_step(c)) continue;
      if (auto [at, fresh] = best.try_emplace(levels, c); !fresh && c.bic < at->second.bic) at->second = c;
    }
  return best;
}

// A level is a plateau, resting on several sampled sizes: it serves the most accesses at
// kMinServedSizes sizes or more, and the curve is at its own rate at kMinPlateauSizes of them.
// A level adds a rate, a knee and (with widths of their own) a knee width to the model: on fewer
// distinct sizes than that its parameters pass through its samples whatever they are. And one
// size at the level's rate is a point the curve passes through on its way down: a sample inside
// a knee (a V100's one size at 7.9 TB/s between its L1 at 13.9 and its L2 at 2.4 TB/s; an H100
// PCIe's 19.2 at 280 kB between 25.2 and 8.3) or the first size of a decline.
// These rules (and the steps' below) hold for sweeps with one sample per size, whose noise is estimated from
// neighbouring sizes: only the neighbours tell a level from a knee. With repetitions the noise is measured at every
// size and the criterion weighs each size's samples against it; a short level between soft knees may then never reach
// its own rate at any size and still be measured (an L3 of one octave between an L2 and DRAM whose knees overlap).
constexpr int kMinServedSizes = 3;
constexpr int kMinPlateauSizes = 2;

struct LevelSupport {
  int served = 0;   // sizes where the level serves the most accesses
  int plateau = 0;  // ... of which the curve is at the level's own rate (on_plateau)
  bool enough() const { return served >= kMinServedSizes && plateau >= kMinPlateauSizes; }
};

std::vector<LevelSupport> level_support(const Data& d, const Candidate& c) {
  std::vector<LevelSupport> support(c.lay.levels);
  for (std::size_t k = 0; k < d.sizes.size(); ++k) {
    int owner = 0;
    const bool flat = on_plateau(d, c, k, &owner);
    ++support[static_cast<std::size_t>(owner)].served;
    if (flat) ++support[static_cast<std::size_t>(owner)].plateau;
  }
  return support;
}

// A level falls no faster along its own sizes than kMaxLevelFall per octave. A cache's plateau
// is flat or declines gently as conflicts grow (an H100 PCIe's L2: 12% over 5 octaves); a knee
// falls by its whole step within an octave or two. Four sizes down an H200's L1 knee (18.4, 15.2,
// 13.8, 11.0 TB/s from 224 to 358 kB) fitted as a level of their own, with two of them at its
// rate within a noise inflated by the L2's alternating sizes, fail here: along its sizes the rate
// falls ~50% per octave. The slope is the median of the slopes of ln rate on ln size between every
// two sizes the level serves, and it must be steeper than the bound by more than its 95%
// uncertainty under the curve's noise (the least-squares slope's, which the median's is close
// to): a short plateau's few noisy sizes are not a knee for their scatter.
// Of the sizes the level serves most, those whose time it takes most are the ones that show its
// rate. Before a wide knee to a much slower level, a level still serves most accesses where the
// slower one already takes most of the time: a CPU's L3, flat at 290-320 GB/s over 12-33 MB,
// fades into 65 GB/s DRAM over 33-140 MB, and at 65 MB, with 58% of the accesses served by the L3,
// the rate is 120 GB/s. Along those sizes the rate falls as the knee falls, not as the level does.
// Those sizes are taken where kMinServedSizes of them are on the level's plateau; otherwise (a
// level squeezed into a knee, such as the H200's four sizes, is at its own rate at one or two)
// the slope is taken over every size it serves most.
constexpr double kMaxLevelFall = 0.25;                                           // fraction of the rate lost per octave
const double kSteepestLevelSlope = std::log(1 - kMaxLevelFall) / std::log(2.0);  // ln rate per ln size

bool falls_like_a_knee(const Data& d, const Candidate& c, int level) {
  std::vector<std::pair<double, double>> along, by_time;  // (ln size, median ln rate)
  int flat_by_time = 0;
  for (std::size_t k = 0; k < d.sizes.size(); ++k) {
    int owner = 0;
    const bool flat = on_plateau(d, c, k, &owner);
    if (owner != level) continue;
    along.emplace_back(d.sizes[k].lw, d.sizes[k].median_z);
    double served[16];
    served_fractions(c.lay, c.p.data(), d.sizes[k].lw, served);
    double time = 0;
    for (int i = 0; i < c.lay.levels; ++i) time += served[i] * std::exp(-c.p[c.lay.b(i)]);
    if (served[level] * std::exp(-c.p[c.lay.b(level)]) >= 0.5 * time) {
      by_time.emplace_back(d.sizes[k].lw, d.sizes[k].median_z);
      flat_by_time += flat ? 1 : 0;
    }
  }
  if (flat_by_time >= kMinServedSizes) along = std::move(by_time);
  if (along.size() < 3) return false;
  double mean_x = 0, mean_y = 0;
  for (const auto& [x, y] : along) mean_x += x, mean_y += y;
  mean_x /= static_cast<double>(along.size()), mean_y /= static_cast<double>(along.size());
  double sxx = 0, sxy = 0;
  for (const auto& [x, y] : along) sxx += (x - mean_x) * (x - mean_x), sxy += (x - mean_x) * (y - mean_y);
  if (!(sxx > 0)) return false;
  // The median of the slopes between every two sizes (Theil and Sen): one or two sizes the
  // fitted knee places on the wrong side (a DRAM stretch at 65 GB/s just past the knee the fit put
  // at 470 MB, before the curve's drop to 32 at 560 MB) do not make a flat level fall.
  std::vector<double> pair_slopes;
  for (std::size_t i = 0; i < along.size(); ++i)
    for (std::size_t j = i + 1; j < along.size(); ++j)
      pair_slopes.push_back((along[j].second - along[i].second) / (along[j].first - along[i].first));
  const double slope = median_of(pair_slopes);  // ln rate per ln size
  // sigma comes from every size of the curve, not from these few: a normal quantile, not Student's.
  return slope + 1.96 * d.sigma / std::sqrt(sxx) < kSteepestLevelSlope;
}

// The converse: a knee falls faster than a level may. Where the fitted curve is no steeper than
// kMaxLevelFall at a knee's centre, the "knee" is a gentle decline, and its two levels are one
// sloped level: memory whose rate drifts down with the set (gpu-benches' L40 gpu-l2-cache from
// 845 GB/s at 130 MB to 796 at 1.3 GB, fitted as 845 and 795 with a knee 3 octaves wide at
// 750 MB; its RX 6900 XT from 504 to 450, fitted as 513 and 442).
bool knee_falls_like_a_level(const Candidate& c, int knee) {
  constexpr double h = 0.01;  // ln size
  const double at = c.p[c.lay.c(knee)];
  const double slope =
      (model_log_rate(c.lay, c.p.data(), at + h) - model_log_rate(c.lay, c.p.data(), at - h)) / (2 * h);
  return slope > kSteepestLevelSlope;
}

// Whether the sampled sizes nearest ln size `at` on either side fall no faster than a level may
// (kMaxLevelFall), even at the steepest slope their noise allows: 1.96 sqrt(2) sigma over the
// distance between them.
bool sizes_fall_like_a_level_across(const Data& d, double at) {
  const auto after = std::find_if(d.sizes.begin(), d.sizes.end(), [&](const Size& s) { return s.lw > at; });
  if (after == d.sizes.begin() || after == d.sizes.end()) return false;
  const Size& before = *(after - 1);
  const double run = after->lw - before.lw;
  if (!(run > 0)) return false;
  const double slope = (after->median_z - before.median_z) / run;
  return slope - 1.96 * std::sqrt(2.0) * d.sigma / run > kSteepestLevelSlope;
}

// Levels are plateaus: each rests on enough sizes (LevelSupport), falls no faster than a plateau
// (falls_like_a_knee) and no slower at its knee (knee_falls_like_a_level), and each
// step to the next level is larger than the rates vary along the two plateaus it separates (the
// range of their sizes' medians, in log): a step smaller than that does not separate the rates
// of one plateau from the other's. A gradual decline fitted
// as a staircase fails the second: its steps are no larger than the decline inside each step (an H100 PCIe's L2
// from 7.8 TB/s at 1 MB to 6.9 at 37 MB came out as levels of 7762, 7240 and 6983), and the fit with fewer levels,
// whose knees are real, is chosen instead.
bool levels_are_plateaus(const Data& d, const Candidate& c) {
  if (!d.one_sample_per_size) return true;
  const std::vector<LevelSupport> support = level_support(d, c);
  if (!std::all_of(support.begin(), support.end(), [](const LevelSupport& l) { return l.enough(); })) return false;
  const int levels = c.lay.levels;
  for (int i = 0; i < levels; ++i)
    if (falls_like_a_knee(d, c, i)) return false;
  for (int i = 0; i + 1 < levels; ++i)
    if (knee_falls_like_a_level(c, i)) return false;
  std::vector<double> lo(levels, std::numeric_limits<double>::infinity());
  std::vector<double> hi(levels, -std::numeric_limits<double>::infinity());
  for (std::size_t k = 0; k < d.sizes.size(); ++k) {
    int owner = 0;
    if (!on_plateau(d, c, k, &owner)) continue;
    lo[owner] = std::min(lo[owner], d.sizes[k].median_z);
    hi[owner] = std::max(hi[owner], d.sizes[k].median_z);
  }
  // Two noisy medians differ by up to 1.96 sqrt(2) sigma by chance (95%): only the variation
  // beyond that is the plateau's own (a noisy VM's L2 and L3 are not merged for their noise).
  const double by_chance = 1.96 * std::sqrt(2.0) * d.sigma;
  const auto range = [&](int i) { return hi[i] >= lo[i] ? std::max(0.0, hi[i] - lo[i] - by_chance) : 0.0; };
  for (int i = 0; i + 1 < levels; ++i)
    if (c.p[c.lay.b(i)] - c.p[c.lay.b(i + 1)] <= range(i) + range(i + 1)) return false;
  return true;
}

// The fit the criterion picks: the least BIC among the fits whose levels are plateaus (the only
// ones best_fits_by_levels keeps); an infinite cost when there is none.
Candidate chosen_model(const std::map<int, Candidate>& best_by_levels) {
  Candidate chosen;
  for (const auto& [levels, c] : best_by_levels)
    if (c.bic < chosen.bic) chosen = c;
  return chosen;
}

// The chosen model must describe the curve: a fit whose typical size sits many noise widths off,
// or a single level that misses a tenth of the sizes by more than a quarter (one "level" across
// a curve that falls 9x once every capacity-bound knee was non-physical: the robust loss takes
// the sizes past the knee for outliers), would publish a rate no kernel ran at. Such a curve
// gets no levels, and says so: empty when the model describes it, otherwise why not.
std::string misfit_reason(const Data& d, const Candidate& chosen) {
  std::vector<double> misfit;
  int gross = 0;
  for (const Size& sz : d.sizes) {
    misfit.push_back(std::fabs(model_log_rate(chosen.lay, chosen.p.data(), sz.lw) - sz.median_z));
    if (misfit.back() > std::max(kMaxTypicalMisfitSigmas * d.sigma, std::log(kGrossMisfit))) ++gross;
  }
  const double typical = median_of(misfit);
  const bool off = typical > std::max(kMaxTypicalMisfitSigmas * d.sigma, kMaxTypicalMisfit);
  // Gross misses disqualify one level only: with several, a stretch the model misses is the data's
  // (a VM's rmw curve at 62 GB/s from 85 to 106 MB and 100-113 GB/s from 134 to 430 MB), and the
  // levels the fit did find are still measured.
  const bool gross_misses =
      chosen.lay.levels == 1 && gross >= 2 && gross > kMaxGrossMissFraction * static_cast<double>(d.sizes.size());
  if (!off && !gross_misses) return {};
  char why[240];
  std::snprintf(why, sizeof why,
                "no level model describes the curve: the best (%d level%s) misses the typical size by %.0f%% and "
                "%d of %zu sizes by more than %.0f%% (noise %.1f%%)",
                chosen.lay.levels, chosen.lay.levels == 1 ? "" : "s", 100 * (std::exp(typical) - 1), gross,
                d.sizes.size(), 100 * (kGrossMisfit - 1), 100 * d.sigma);
  return why;
}

// Where the fit with one more level has its extra one: the level whose removal leaves the rates
// closest (in log) to the chosen fit's, in order.
int extra_level(const Candidate& more, const Candidate& chosen) {
  int extra = 0;
  double best = std::numeric_limits<double>::infinity();
  for (int skip = 0; skip < more.lay.levels; ++skip) {
    double distance = 0;
    for (int i = 0, j = 0; i < more.lay.levels; ++i) {
      if (i == skip) continue;
      distance += std::fabs(more.p[more.lay.b(i)] - chosen.p[chosen.lay.b(j++)]);
    }
    if (distance < best) best = distance, extra = skip;
  }
  return extra;
}

// How much wider than the chosen fit's sharpest other knee a knee must be to be evidence of a
// level inside it: one cache's misses rise over a width its replacement sets, alike at every
// level of one sweep; a knee that also passes through a level squeezed inside it is wider.
constexpr double kSqueezedKneeWidening = 1.5;

// Whether knee `knee` of the chosen fit (between its levels knee and knee + 1) is wider than its
// other knees by kSqueezedKneeWidening: the data's evidence that a level may hide in it. A fit
// with one knee, or one width shared by every knee, has nothing to compare.
bool knee_wider_than_the_others(const Candidate& chosen, int knee) {
  const Layout& lay = chosen.lay;
  if (lay.shared_width || lay.levels < 3) return false;
  double sharpest = std::numeric_limits<double>::infinity();
  for (int i = 0; i + 1 < lay.levels; ++i)
    if (i != knee) sharpest = std::min(sharpest, chosen.p[lay.s(i)]);
  return chosen.p[lay.s(knee)] - sharpest >= std::log(kSqueezedKneeWidening);
}

// A level the data cannot rule out (kStrongEvidenceBic). On realistic synthetic sweeps a level
// that lasts one octave between soft knees (an H100's L2 between its 33 MB of L1 and HBM, a
// Grace's L3 right above its L2) is often that close: the chosen fit leaves it out, and the user
// must learn that it may be there, where, and how fast, instead of reading the blend across its
// sizes as the levels beside it.
std::optional<UnresolvedLevel> unresolved_level(const Data& d, const Candidate& chosen,
                                                const std::map<int, Candidate>& best_by_levels) {
  const auto it = best_by_levels.find(chosen.lay.levels + 1);
  // A fit with a lower BIC than the chosen one was passed over because its levels are not
  // plateaus (levels_are_plateaus): not a level the data cannot rule out.
  if (it == best_by_levels.end()) return std::nullopt;
  const double delta_bic = it->second.bic - chosen.bic;
  if (!(delta_bic >= 0 && delta_bic < kStrongEvidenceBic)) return std::nullopt;
  const Candidate& more = it->second;
  const int k = extra_level(more, chosen);
  // Its levels must be told apart from each other (disjoint 95% intervals): two rates within each
  // other's noise are one level the fit split (a launch ramp's bend, a soft knee), not a level
  // the chosen fit missed. The extra level itself is exempt when it lies between two levels of
  // the chosen fit and the data do not locate its rate (kMaxLocatedRateSpan): a level squeezed
  // into the knee between them has a wide interval that may reach a neighbour's, but it is
  // bounded by them, and that span is its interval. A located rate within a neighbour's interval
  // is that neighbour split in two; a first or last extra level has no bound either side.
  const std::vector<Interval> ci = intervals(d, more);
  const Interval& own = ci[more.lay.b(k)];
  const bool own_located = own.known() && own.hi <= own.lo * kMaxLocatedRateSpan;
  const bool bounded = k > 0 && k + 1 < more.lay.levels && !own_located && knee_wider_than_the_others(chosen, k - 1);
  for (int i = 0; i + 1 < more.lay.levels; ++i) {
    const Interval& faster = ci[more.lay.b(i)];
    const Interval& slower = ci[more.lay.b(i + 1)];
    const bool told = faster.known() && slower.known() && faster.lo > slower.hi;
    if (!told && !(bounded && (i == k || i + 1 == k))) return std::nullopt;
  }
  UnresolvedLevel u;
  u.rate = std::exp(more.p[more.lay.b(k)]);
  // A level between two of the chosen fit's: its own interval is conditional on knee shapes the
  // criterion did not choose (a squeezed L3 at 1400 came out as 1100 - 1250), and the rates
  // either side bound it whatever they are.
  if (k > 0 && k + 1 < more.lay.levels) {
    // Levels fall with size: the chosen fit's rates either side bound it.
    u.rate_ci95 = {std::exp(chosen.p[chosen.lay.b(k)]), std::exp(chosen.p[chosen.lay.b(k - 1)])};
  } else {
    u.rate_ci95 = located(own, u.rate / kLocatedSpan, u.rate * kLocatedSpan);
  }
  u.x_lo = k > 0 ? std::exp(more.p[more.lay.c(k - 1)]) : d.sizes.front().x;
  u.x_hi = k + 1 < more.lay.levels ? std::exp(more.p[more.lay.c(k)]) : d.sizes.back().x_last;
  u.delta_bic = more.bic - chosen.bic;
  u.levels = more.lay.levels;
  return u;
}

// A level the criterion prefers but too few sizes support (LevelSupport): the fit with the
// least BIC has more levels than the chosen one, and the extra level rests on fewer sizes. It may
// be a level the sampling is too coarse to show (one octave between soft knees at 1.6x steps),
// or a sample inside a knee: the user is told where and how fast, and that it is not a plateau.
std::optional<UnresolvedLevel> unsupported_level(const Data& d, const Candidate& chosen, const Candidate& best) {
  if (!d.one_sample_per_size || !std::isfinite(best.cost) || best.lay.levels <= chosen.lay.levels) return std::nullopt;
  const std::vector<LevelSupport> support = level_support(d, best);
  const auto weakest =
      std::min_element(support.begin(), support.end(), [](const LevelSupport& a, const LevelSupport& b) {
        return a.plateau != b.plateau ? a.plateau < b.plateau : a.served < b.served;
      });
  if (weakest->enough()) return std::nullopt;
  const int k = static_cast<int>(weakest - support.begin());
  const std::vector<Interval> ci = intervals(d, best);
  UnresolvedLevel u;
  u.rate = std::exp(best.p[best.lay.b(k)]);
  u.rate_ci95 = located(ci[best.lay.b(k)], u.rate / kLocatedSpan, u.rate * kLocatedSpan);
  u.x_lo = k > 0 ? std::exp(best.p[best.lay.c(k - 1)]) : d.sizes.front().x;
  u.x_hi = k + 1 < best.lay.levels ? std::exp(best.p[best.lay.c(k)]) : d.sizes.back().x_last;
  // A last level whose knee lies past the largest size (or a first one before the smallest) has
  // no sampled size in its span: the fit's tail bending, nothing the sweep saw to name.
  if (u.x_lo >= u.x_hi) return std::nullopt;
  u.delta_bic = best.bic - chosen.bic;
  u.levels = best.lay.levels;
  u.supporting_sizes = weakest->plateau;
  return u;
}

// The span of the rate of the chosen fit's level `level` over the knee models the data do not
// reject: the chosen fit's own interval (its noise, given its knee model), widened to hold the
// level's rate in the same levels refitted from the chosen parameters with a width of each knee's
// own (where the chosen fit shares one) and with other shapes (KneeShape) of the two knees around
// the level. A cache's knee has a width and a shape of its own (replacement, prefetchers,
// hashing), which the criterion's simpler fit need not draw. A refit is rejected when its
// likelihood-ratio statistic against the chosen fit, 2 (cost - chosen cost) in units of the fit's
// noise (scaled as levels_in_knees scales it), is kHiddenLevelChiSquare or more. A rate these
// fits move is a rate the knee model sets, not the data.
Interval rate_over_knee_models(const Data& d, const Candidate& chosen, int level, Interval span) {
  const double scale = scatter_scale(d, chosen);
  Layout own = chosen.lay;
  own.shared_width = false;
  std::vector<double> start(own.size());
  for (int i = 0; i < own.levels; ++i) start[own.b(i)] = chosen.p[chosen.lay.b(i)];
  for (int i = 0; i + 1 < own.levels; ++i) {
    start[own.c(i)] = chosen.p[chosen.lay.c(i)];
    start[own.s(i)] = chosen.p[chosen.lay.s(i)];
  }
  if (own.ramp) start[own.a()] = chosen.p[chosen.lay.a()];
  constexpr KneeShape kShapes[] = {KneeShape::logistic, KneeShape::late_sharp, KneeShape::early_sharp};
  const int before = level - 1, after = level;  // the knees into and out of the level
  for (const KneeShape into : kShapes)
    for (const KneeShape out_of : kShapes) {
      if (before < 0 && into != KneeShape::logistic) continue;
      const bool same_model = !chosen.lay.shared_width && into == KneeShape::logistic && out_of == KneeShape::logistic;
      if (same_model) continue;
      Layout lay = own;
      if (before >= 0) lay.shapes[before] = into;
      lay.shapes[after] = out_of;
      const Candidate c = refine(d, lay, start);
      if (!std::isfinite(c.cost) || !physical(d, c) || 2 * (c.cost - chosen.cost) / scale >= kHiddenLevelChiSquare)
        continue;
      const double rate = std::exp(c.p[c.lay.b(level)]);
      span = {std::min(span.lo, rate), std::max(span.hi, rate)};
    }
  return span;
}

// A published level claims its rate to +-5% (kMaxLocatedRateSpan): one further above its fastest
// sample than that, and than the noise could carry a sample below it, was never reached.
constexpr double kMaxRateAboveSamples = 0.05;  // ln rate

// The fastest raw sample of the sizes in a level's span (its x_lo to x_hi); 0 when it has none.
double fastest_sample_served(const Data& d, const FittedLevel& level) {
  double best = 0;
  if (level.sizes == 0) return best;
  for (const Size& s : d.sizes)
    if (s.x >= level.x_lo && s.x_last <= level.x_hi)
      for (double y : s.y) best = std::max(best, y);
  return best;
}

// Moves out of fit.levels the levels whose rate the data do not locate (LevelModelFit::
// unlocated). The last level is never moved: it extends to the end of the sweep, where the curve
// stays at its rate. The first needs two sampled sizes: a first level of one (an H200's L2 read,
// whose smaller sets were underfilled and left out, read 11.2 TB/s at its first size and 8.9-10.6
// at the next four) is that size's figure, not a plateau. The span between the located
// neighbours is the interval: levels fall with size, so a level between two others is slower
// than the one and faster than the other, whatever the knees' shapes; a level with no located
// level before it has its own interval's upper bound instead.
std::vector<UnresolvedLevel> take_unlocated_levels(const Data& d, const Candidate& chosen, LevelModelFit& fit,
                                                   std::vector<bool>& located) {
  std::vector<UnresolvedLevel> out;
  const int chosen_levels = static_cast<int>(fit.levels.size());
  located.assign(chosen_levels, false);
  std::vector<double> above_samples(chosen_levels, 0.0);
  for (int i = 0; i < chosen_levels; ++i) {
    FittedLevel& level = fit.levels[i];
    const bool before_last = i + 1 < chosen_levels;
    // A rate above every sample of the sizes a level serves was read through the model's shape,
    // not off the data. A launch ramp that the sizes follow pins it (a cost per launch that
    // halves the rate at 512 KiB keeps every size of a 4 MiB L1 at least 11% below its rate,
    // and the fit still finds it within 3%); where the fit cannot pin it either (an interval wider than a
    // published level's +-5%, or none), nothing measured it, whatever the sampling. (The last
    // level runs to the end of the sweep, where the curve settles at its rate.)
    if (const double best = fastest_sample_served(d, level);
        before_last && best > 0 &&
        std::log(level.rate / best) > std::max(kPlateauAboveSigmas * d.sigma, kMaxRateAboveSamples) &&
        !(level.rate_ci95.known() && level.rate_ci95.hi <= level.rate_ci95.lo * kMaxLocatedRateSpan)) {
      above_samples[i] = best;
      continue;
    }
    // A first level extends to the smallest size, where nothing before it blends in: the sizes
    // it serves most locate it, if there are two (a loaded VM's L1, scattered at every size, has
    // them; one size alone is only that size's figure).
    if (!before_last || d.one_sample_per_size || level.reached_sizes >= kMinPlateauSizes ||
        (i == 0 && level.sizes >= kMinPlateauSizes)) {
      located[i] = true;
      continue;
    }
    // Otherwise a level is located by sizes that read its rate off the data: two where the fitted
    // curve comes within kReachedSpan of it, which no knee shape can move far; or, with its rate
    // pinned by the fit, kMinServedSizes that it serves most (a Skylake-SP's L3 squeezed between
    // its L2's reach and its own capacity is never reached, but four sizes pin it). One or two
    // sizes are a knee's: a long-tailed knee drawn as a shoulder gave a level of two sizes with
    // an interval of 3%, 13% above the truth. A rate never reached is read through the knees
    // either side, so it is pinned only when the knee models the data do not reject keep it
    // within that span too (rate_over_knee_models; a squeezed level fitted at 1916 GB/s,
    // interval 1835 - 2001, with one width shared by every knee, is at 1809 with widths of their
    // own, and its truth is 1708), and its interval then holds their rates.
    if (!level.rate_ci95.known() || level.sizes < kMinServedSizes) continue;
    const Interval span = rate_over_knee_models(d, chosen, i, level.rate_ci95);
    located[i] = span.known() && span.hi <= span.lo * kMaxLocatedRateSpan;
    if (located[i]) level.rate_ci95 = span;
  }
  std::vector<FittedLevel> kept;
  for (int i = 0; i < chosen_levels; ++i) {
    const FittedLevel& level = fit.levels[i];
    if (located[i]) {
      kept.push_back(level);
      continue;
    }
    // The bounds are the nearest located levels: a neighbour that is itself unlocated bounds
    // nothing.
    int faster = i - 1, slower = i + 1;
    while (faster >= 0 && !located[faster]) --faster;
    while (!located[slower]) ++slower;
    UnresolvedLevel u;
    u.rate = level.rate;
    const double above = faster >= 0               ? fit.levels[faster].rate
                         : level.rate_ci95.known() ? std::max(level.rate_ci95.hi, level.rate)
                                                   : level.rate * kLocatedSpan;
    u.rate_ci95 = {fit.levels[slower].rate, above};
    u.x_lo = i > 0 && fit.levels[i - 1].capacity > 0 ? fit.levels[i - 1].capacity
             : i > 0                                 ? d.sizes.front().x
                                                     : level.x_lo;
    u.x_hi = level.capacity > 0 ? level.capacity : d.sizes.back().x_last;
    u.levels = chosen_levels;
    u.unlocated = true;
    u.first = faster < 0;
    u.above_samples = above_samples[i];
    out.push_back(u);
  }
  // The level before a removed one keeps its own knee: the rates either side are measured, and
  // the published spans stay where the fit put them.
  fit.levels = std::move(kept);
  return out;
}

// A level hiding in a knee lasts an octave at least: a cache holds at least twice the one before
// it (a partitioned L2's far half is its second half), or it is not worth its latency.
constexpr double kMinHiddenLevelSpan = 0.6931471805599453;  // ln 2

// Whether level `level` of a fit serves the most accesses at ln size lw: where a level is a level
// (describe() gives each size to the level that serves it most).
bool serves_most_at(const Candidate& c, int level, double lw) {
  double served[16];
  served_fractions(c.lay, c.p.data(), lw, served);
  return std::max_element(served, served + c.lay.levels) - served == level;
}

// The best fit with a level hidden in knee `knee` of `chosen` (between its levels knee and knee +
// 1): the knee is split in two, at least kMinHiddenLevelSpan apart, around a level that serves the
// most accesses between them. The two knees are held where they are placed (a profile over a grid
// of placements): left free, they close up and the level vanishes into one knee again, which is
// the chosen fit, not the alternative. Everything else is refitted. An infinite cost: no such fit.
Candidate hidden_level_fit(const Data& d, const Candidate& chosen, int knee) {
  const Layout& lay = chosen.lay;
  const Layout alt{lay.levels + 1, lay.ramp, false};
  Candidate best;
  best.lay = alt;
  if (alt.levels > 16 || alt.size() >= static_cast<int>(d.samples.size())) return best;
  const double centre = chosen.p[lay.c(knee)];
  // A level told apart from the levels either side: a rate within kMaxLocatedRateSpan of a
  // neighbour is that neighbour at the accuracy a level is published with, its knee moved (a
  // long-tailed knee drawn as a shoulder), not a level of its own.
  const double fastest = chosen.p[lay.b(knee)] - std::log(kMaxLocatedRateSpan);
  const double slowest = chosen.p[lay.b(knee + 1)] + std::log(kMaxLocatedRateSpan);
  if (slowest >= fastest) return best;
  std::vector<std::pair<double, Start>> screened;
  for (double span : {1.0, 1.5, 2.0})
    for (double offset = -0.5; offset <= 0.5 + 1e-9; offset += kGridStep / 2)
      for (double width : {0.1, 0.2, 0.35}) {
        Start s;
        for (int i = 0; i + 1 < lay.levels; ++i) {
          const double w = std::exp(chosen.p[lay.s(i)]);
          if (i != knee) {
            s.knees.push_back(chosen.p[lay.c(i)]), s.widths.push_back(w);
            continue;
          }
          const double half = span * kMinHiddenLevelSpan / 2;
          s.knees.push_back(centre + offset - half), s.widths.push_back(width);
          s.knees.push_back(centre + offset + half), s.widths.push_back(width);
        }
        if (!std::is_sorted(s.knees.begin(), s.knees.end()) ||
            std::adjacent_find(s.knees.begin(), s.knees.end()) != s.knees.end())
          continue;
        Candidate c;
        c.lay = alt;
        const double sse = linear_start(d, alt, s.knees, s.widths, c.p);
        const double mid = centre + offset;
        const double hidden = c.p[alt.b(knee + 1)];
        if (std::isfinite(sse) && physical(d, c) && serves_most_at(c, knee + 1, mid) && hidden > slowest &&
            hidden < fastest)
          screened.emplace_back(sse, std::move(s));
      }
  std::sort(screened.begin(), screened.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t k = 0; k < screened.size() && k < 3; ++k) {
    const Start& s = screened[k].second;
    std::vector<double> p;
    linear_start(d, alt, s.knees, s.widths, p);
    const double mid = (s.knees[knee] + s.knees[knee + 1]) / 2;
    const double pinned = 1e-9;
    Candidate c = refine(d, alt, p,
                         {{alt.c(knee), s.knees[knee] - pinned, s.knees[knee] + pinned},
                          {alt.c(knee + 1), s.knees[knee + 1] - pinned, s.knees[knee + 1] + pinned},
                          {alt.b(knee + 1), slowest, fastest}});
    if (std::isfinite(c.cost) && physical(d, c) && serves_most_at(c, knee + 1, mid) && c.cost < best.cost)
      best = std::move(c);
  }
  return best;
}

// The knees between two published levels where the data do not reject a level hidden inside
// (LevelModelFit::in_knees): the likelihood-ratio statistic of the best such fit against the
// chosen one, 2 (cost - chosen cost) in units of the fit's noise, is below kHiddenLevelChiSquare.
// The residuals are scaled by the noise measured from the repetitions; where the chosen fit's own
// scatter is larger, the statistic is scaled down by it as the intervals are.
std::vector<UnresolvedLevel> levels_in_knees(const Data& d, const Candidate& chosen, const LevelModelFit& fit,
                                             const std::vector<bool>& located) {
  std::vector<UnresolvedLevel> out;
  // With one sample per size the noise is estimated from neighbouring sizes, which a knee's slope
  // inflates: the statistic has no calibrated scale there.
  if (d.one_sample_per_size) return out;
  const Layout& lay = chosen.lay;
  const double scale = scatter_scale(d, chosen);
  const auto named = [&](double x) {
    const auto holds = [&](const UnresolvedLevel& u) { return u.x_lo <= x && x <= u.x_hi; };
    return std::any_of(fit.unlocated.begin(), fit.unlocated.end(), holds) || (fit.unresolved && holds(*fit.unresolved));
  };
  for (int k = 0; k + 1 < lay.levels; ++k) {
    if (!located[k] || !located[k + 1] || named(std::exp(chosen.p[lay.c(k)]))) continue;
    const Candidate alt = hidden_level_fit(d, chosen, k);
    if (!std::isfinite(alt.cost)) continue;
    const double chi_square = 2 * (alt.cost - chosen.cost) / scale;
    if (chi_square >= kHiddenLevelChiSquare) continue;
    UnresolvedLevel u;
    u.rate = std::exp(alt.p[alt.lay.b(k + 1)]);
    // Levels fall with size: the published rates either side bound it.
    u.rate_ci95 = {std::exp(chosen.p[lay.b(k + 1)]), std::exp(chosen.p[lay.b(k)])};
    u.x_lo = std::exp(alt.p[alt.lay.c(k)]);
    u.x_hi = std::exp(alt.p[alt.lay.c(k + 1)]);
    u.levels = alt.lay.levels;
    u.in_knee = true;
    u.chi_square = chi_square;
    out.push_back(u);
  }
  return out;
}

}  // namespace

LevelModelFit fit_level_model(const std::vector<CurvePoint>& points, const LevelModelOptions& options) {
  // Ceres reports through glog: a singular covariance (a level the data cannot pin down) is an
  // expected outcome here, reported as an unknown interval, not as an error line on stderr.
  static const bool quiet_glog = [] {
    FLAGS_minloglevel = google::GLOG_FATAL;
    return true;
  }();
  (void)quiet_glog;
  int max_levels = 0;
  const Data d = prepare_data(points, options, &max_levels);
  if (d.sizes.size() < 3) return {};
  Candidate least;
  const std::map<int, Candidate> best_by_levels = best_fits_by_levels(d, options, max_levels, &least);
  Candidate chosen = chosen_model(best_by_levels);
  // The plateau rules choose among fits that describe the curve. When the only fits that meet
  // them do not (a VM's sweep whose noise hides where its plateaus end), no reading meets them,
  // and the criterion's own choice stands, subject to the same test.
  if (std::isfinite(least.cost) && (!std::isfinite(chosen.cost) || !misfit_reason(d, chosen).empty())) chosen = least;
  if (!std::isfinite(chosen.cost)) {
    // Every fit failed: rates beyond what the fit's arithmetic holds (1e200 GB/s), or none that
    // the model can take. Said so, not taken for too few sizes.
    const auto [lo, hi] = std::minmax_element(points.begin(), points.end(),
                                              [](const CurvePoint& a, const CurvePoint& b) { return a.y < b.y; });
    char why[200];
    std::snprintf(why, sizeof why, "no level model could be fitted to the curve (rates %.3g to %.3g GB/s)", lo->y,
                  hi->y);
    LevelModelFit none;
    none.model = why;
    none.rejected = true;
    return none;
  }
  if (std::string why = misfit_reason(d, chosen); !why.empty()) {
    LevelModelFit none;
    none.model = std::move(why);
    none.rejected = true;
    return none;
  }
  LevelModelFit fit = describe(d, chosen);
  std::vector<bool> located;
  fit.unlocated = take_unlocated_levels(d, chosen, fit, located);
  // A level published beside an unlocated one may have no interval of its own: in the fit with
  // the unlocated level, its rate trades off against that level's (an H200's L2 next to an
  // unlocated level in its HBM knee had none). Where the best fit without it has the same level
  // (the same count, and an interval holding this rate), that interval is the level's.
  if (!fit.unlocated.empty()) {
    const auto fewer = best_by_levels.find(static_cast<int>(fit.levels.size()));
    if (fewer != best_by_levels.end() && misfit_reason(d, fewer->second).empty()) {
      const LevelModelFit plain = describe(d, fewer->second);
      if (plain.levels.size() == fit.levels.size())
        for (std::size_t i = 0; i < fit.levels.size(); ++i) {
          FittedLevel& level = fit.levels[i];
          const Interval& other = plain.levels[i].rate_ci95;
          if (!level.rate_ci95.known() && other.known() && other.lo <= level.rate && level.rate <= other.hi)
            level.rate_ci95 = other;
        }
    }
  }
  fit.unresolved = unsupported_level(d, chosen, least);
  if (!fit.unresolved) fit.unresolved = unresolved_level(d, chosen, best_by_levels);
  fit.in_knees = levels_in_knees(d, chosen, fit, located);
  return fit;
}

}  // namespace roofprobe
