// Fitting: plateaus of a bandwidth-vs-working-set curve -> memory levels; maxima of compute probes
// -> compute ceilings; external bandwidth CSVs -> memory levels.
//
// Plateau detection (find_plateaus) in short. Samples are reduced to one value per distinct size
// (the median: single-sample outliers vanish) and taken to log(rate), so noise is multiplicative
// and a step is a ratio. The noise sigma of one size comes from the MAD of successive differences.
// Dynamic programming then finds the optimal partition of the curve into *levels* (constant runs
// of >= min_sizes sizes) and *transitions* (monotone runs of any length, fitted by a line: soft
// knees, the launch ramp, a one-size spike), with penalties scaled by sigma^2. Modelling knees
// explicitly is what keeps a gradual knee from becoming a staircase of false levels, while a
// flat run of two sizes (a one-octave far-L2 plateau at 2 points per octave) remains a level.
// The levels are then cleaned up: sizes within noise of a level join it, levels that are not
// significantly different (or closer than min_step) merge, a short bump inside a plateau goes,
// levels before the fastest one are the launch ramp, short levels that are pieces of a knee go
// (on the straight line between their neighbours, or sloping like the knee around them), and
// levels must fall with size. Unlike ERT's fixed histogram rule (a level needs > 6 points within
// 5% and a 15% drop) nothing depends on the sweep's density beyond min_sizes.
#include "driver/fit.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "driver/errors.hpp"

namespace roofprobe {

// ---- statistics ------------------------------------------------------------------------------

namespace {

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double upper = v[mid];
  if (v.size() % 2 == 1) return upper;
  const double lower = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return 0.5 * (lower + upper);
}

}  // namespace

Stats compute_stats(std::vector<double> values) {
  Stats st;
  if (values.empty()) return st;
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  st.best = *hi;
  const double min_value = *lo;
  st.samples = static_cast<int>(values.size());
  st.median = median_of(std::move(values));
  st.spread = st.median != 0 ? (st.best - min_value) / std::fabs(st.median) : 0;
  return st;
}

// ---- plateau detection -----------------------------------------------------------------------

namespace {

// Tuning, in units of the noise sigma of one size's log rate unless said otherwise. Chosen on
// thousands of synthetic sweeps (CPU-like 4 levels at 2/4/8 points per octave with soft knees up to
// one octave wide, GPU-like with launch ramp and a one-octave far-L2 plateau, 2-5% noise, spikes,
// 1-3 samples per size); see tests/unit/fit_test.cpp for the cases kept as tests.
constexpr double kLevelPenaltyPerLnN = 2.0;  // a level costs 2 sigma^2 ln(n) (BIC-like)
constexpr double kTransitionPenalty = 1.5;   // a transition costs 1.5 levels ...
constexpr double kTransitionSizeCost = 4.0;  // ... plus 4 sigma^2 per size it takes from the levels
constexpr double kTransitionStep = 2.5;      // every size-to-size step inside a transition
constexpr double kNearLevel = 3.0;           // a neighbouring size this close joins the level
constexpr double kSameLevel = 5.0;           // levels closer than 5 sigma sqrt(1/n1 + 1/n2) merge
constexpr double kOnKneeLine = 2.0;          // rms distance from the knee line of a knee fragment
constexpr double kSlopeT = 2.5;              // t statistic of a significant slope
constexpr double kEdgeStepShare = 0.5;       // inside drop per size vs the smaller edge step
constexpr double kKneeOctaves = 1.5;         // a knee fragment spans at most this (octaves)
constexpr int kShortLevel = 3;               // sizes; a level this short may be a knee fragment

// All samples of one distinct working-set size (or, on a very dense sweep, of a few consecutive
// sizes: x to x_last).
struct SizeGroup {
  double x = 0, x_last = 0;
  int distinct = 1;  // distinct sizes inside
  double median = 0;
  std::vector<double> samples;
};

// The segmentation is O(n^2) in the number of sizes: a dense external sweep (every 4 KiB up to
// 1 GiB) is cut into at most this many groups of consecutive sizes.
constexpr std::size_t kMaxSizeGroups = 1024;

// Sorts by size and groups equal sizes; drops points that cannot be put on a log scale.
std::vector<SizeGroup> group_by_size(const std::vector<CurvePoint>& points) {
  std::vector<CurvePoint> valid;
  for (const CurvePoint& p : points)
    if (std::isfinite(p.x) && std::isfinite(p.y) && p.x > 0 && p.y > 0) valid.push_back(p);
  std::sort(valid.begin(), valid.end(), [](const CurvePoint& a, const CurvePoint& b) { return a.x < b.x; });
  std::vector<SizeGroup> groups;
  for (const CurvePoint& p : valid) {
    // Sizes written as text and read back can differ in the last bit; treat them as one size.
    if (groups.empty() || p.x > groups.back().x * (1 + 1e-9)) groups.push_back({p.x, p.x, 1, 0, {}});
    groups.back().samples.push_back(p.y);
  }
  if (groups.size() > kMaxSizeGroups) {
    const std::size_t per_group = (groups.size() + kMaxSizeGroups - 1) / kMaxSizeGroups;
    std::vector<SizeGroup> merged;
    for (std::size_t i = 0; i < groups.size(); ++i) {
      if (i % per_group == 0) {
        merged.push_back(std::move(groups[i]));
        continue;
      }
      SizeGroup& m = merged.back();
      m.x_last = groups[i].x;
      m.distinct += 1;
      m.samples.insert(m.samples.end(), groups[i].samples.begin(), groups[i].samples.end());
    }
    groups = std::move(merged);
  }
  for (SizeGroup& g : groups) g.median = median_of(g.samples);
  return groups;
}

// Noise of the per-size log rates: MAD of successive differences (a difference of two noisy
// sizes has variance 2 sigma^2; the level steps are few, so they do not move the median). Floored
// so that noise-free data still gets a sane penalty, capped so that a tiny sweep made of steps
// does not swallow them.
double noise_sigma(const std::vector<double>& z) {
  constexpr double kFloor = 0.0025, kCap = 0.2;
  if (z.size() < 2) return kFloor;
  std::vector<double> diffs;
  for (std::size_t i = 1; i < z.size(); ++i) diffs.push_back(std::fabs(z[i] - z[i - 1]));
  const double sigma = 1.4826 * median_of(std::move(diffs)) / std::sqrt(2.0);
  return std::clamp(sigma, kFloor, kCap);
}

// A run of sizes [lo, hi] (inclusive indices into the size groups) and its level (log rate).
struct Segment {
  int lo = 0, hi = 0;
  double level = 0;
  int sizes() const { return hi - lo + 1; }
};

// Running sums that give the least-squares fit of any run of sizes in O(1): a constant (a level)
// or a line over log2 size (a transition: a knee or the launch ramp).
class RunFits {
 public:
  RunFits(const std::vector<double>& u, const std::vector<double>& z) {
    const std::size_t n = z.size();
    for (std::vector<double>* v : {&su_, &suu_, &sz_, &szz_, &suz_}) v->assign(n + 1, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const double x = u[i] - u[0];  // shifted for accuracy
      su_[i + 1] = su_[i] + x;
      suu_[i + 1] = suu_[i] + x * x;
      sz_[i + 1] = sz_[i] + z[i];
      szz_[i + 1] = szz_[i] + z[i] * z[i];
      suz_[i + 1] = suz_[i] + x * z[i];
    }
  }
  // Squared error of values [i, j) around their mean.
  double flat_sse(int i, int j) const {
    const double len = j - i, t = sz_[j] - sz_[i];
    return std::max(0.0, szz_[j] - szz_[i] - t * t / len);
  }
  // Squared error of values [i, j) around their regression line (zero for one or two sizes).
  double line_sse(int i, int j) const {
    const double len = j - i;
    const double mu = (su_[j] - su_[i]) / len, mz = (sz_[j] - sz_[i]) / len;
    const double cuu = suu_[j] - suu_[i] - len * mu * mu;
    const double cuz = suz_[j] - suz_[i] - len * mu * mz;
    return cuu > 0 ? std::max(0.0, flat_sse(i, j) - cuz * cuz / cuu) : 0.0;
  }

 private:
  std::vector<double> su_, suu_, sz_, szz_, suz_;
};

// For each size i, the last size a transition starting at i may reach: every size-to-size step
// inside a transition goes the same way by at least min_step. Two sizes at one level stop a
// transition, so transitions cannot swallow a short plateau between two knees.
std::vector<int> monotone_run_ends(const std::vector<double>& z, double min_step) {
  const int n = static_cast<int>(z.size());
  std::vector<int> down(n), up(n), end(n);
  for (int i = n - 1; i >= 0; --i) {
    down[i] = i + 1 < n && z[i + 1] - z[i] <= -min_step ? down[i + 1] : i;
    up[i] = i + 1 < n && z[i + 1] - z[i] >= min_step ? up[i + 1] : i;
    end[i] = std::max(down[i], up[i]);
  }
  return end;
}

// Optimal partition of the curve into levels (constant runs of at least min_sizes sizes) and
// transitions (monotone runs of any length, fitted by a line over log size), minimising squared
// error + a penalty per run, by dynamic programming over the run boundaries. A knee of any width
// becomes one transition instead of a staircase of false levels; a transition costs more than a
// level and pays for every size it takes, so noise and short flat runs stay levels.
// Returns the levels only. O(n^2); n is ~100.
std::vector<Segment> segment_levels(const std::vector<double>& u, const std::vector<double>& z, int min_sizes,
                                    double sigma) {
  const int n = static_cast<int>(z.size());
  const double var = sigma * sigma;
  const double level_cost = kLevelPenaltyPerLnN * var * std::log(std::max(n, 3));
  const double transition_cost = kTransitionPenalty * level_cost;
  const RunFits fits(u, z);
  const std::vector<int> run_end = monotone_run_ends(z, kTransitionStep * sigma);

  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> best(n + 1, inf);  // best[j]: cost of sizes [0, j)
  std::vector<int> start(n + 1, -1);
  std::vector<char> is_level(n + 1, 0);
  best[0] = 0;
  for (int j = 1; j <= n; ++j)
    for (int i = 0; i < j; ++i) {
      if (best[i] == inf) continue;
      if (j - i >= min_sizes) {
        const double cost = best[i] + fits.flat_sse(i, j) + level_cost;
        if (cost < best[j]) best[j] = cost, start[j] = i, is_level[j] = 1;
      }
      if (j - 1 <= run_end[i]) {
        const double cost = best[i] + fits.line_sse(i, j) + transition_cost + kTransitionSizeCost * var * (j - i);
        if (cost < best[j]) best[j] = cost, start[j] = i, is_level[j] = 0;
      }
    }
  std::vector<Segment> segs;
  for (int j = n; j > 0; j = start[j])
    if (is_level[j]) segs.push_back({start[j], j - 1, 0});
  std::reverse(segs.begin(), segs.end());
  return segs;
}

// The curve the classifier works on, with its tolerances.
struct Curve {
  std::vector<double> u;  // log2 of each distinct size
  std::vector<double> z;  // log of each size's median rate
  double sigma = 0;       // noise of one size's log rate
  int min_sizes = 2;
  double step = 0;        // log(1 + min_step): the smallest ratio between two levels

  int last() const { return static_cast<int>(z.size()) - 1; }
  double level(int lo, int hi) const { return median_of(std::vector<double>(z.begin() + lo, z.begin() + hi + 1)); }
  // Two levels closer than this are one: less than a level step, or not significantly different
  // given the noise and how many sizes each rests on (a two-size level is uncertain).
  double same_level(const Segment& a, const Segment& b) const {
    return std::max(step, kSameLevel * sigma * std::sqrt(1.0 / a.sizes() + 1.0 / b.sizes()));
  }
};

// Least-squares line of z over u for sizes [lo, hi].
struct Line {
  double mean_u = 0, mean_z = 0, slope = 0, suu = 0;
  double at(double u) const { return mean_z + slope * (u - mean_u); }
};

Line fit_line(const Curve& c, int lo, int hi) {
  Line line;
  const int n = hi - lo + 1;
  for (int k = lo; k <= hi; ++k) line.mean_u += c.u[k] / n, line.mean_z += c.z[k] / n;
  double suz = 0;
  for (int k = lo; k <= hi; ++k) {
    line.suu += (c.u[k] - line.mean_u) * (c.u[k] - line.mean_u);
    suz += (c.u[k] - line.mean_u) * (c.z[k] - line.mean_z);
  }
  line.slope = line.suu > 0 ? suz / line.suu : 0;
  return line;
}

void refresh_levels(std::vector<Segment>& segs, const Curve& c) {
  for (Segment& g : segs) g.level = c.level(g.lo, g.hi);
}

// Sizes next to a level and within noise of it belong to it: those the segmentation gave to a
// transition (a two-size transition can take a knee point and the plateau's first size), and
// those of a short neighbouring level (a knee point paired with the plateau's first size). A
// short level left with fewer than min_sizes sizes is dissolved.
void extend_levels(std::vector<Segment>& segs, const Curve& c) {
  const double near = kNearLevel * c.sigma;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    Segment& g = segs[i];
    Segment* prev = i > 0 ? &segs[i - 1] : nullptr;
    Segment* next = i + 1 < segs.size() ? &segs[i + 1] : nullptr;
    while (g.lo > 0 && std::fabs(c.z[g.lo - 1] - g.level) <= near) {
      if (prev != nullptr && g.lo - 1 <= prev->hi) {  // the size belongs to the previous level
        if (prev->sizes() > kShortLevel || prev->sizes() <= 0) break;
        --prev->hi;
      }
      --g.lo;
    }
    while (g.hi < c.last() && std::fabs(c.z[g.hi + 1] - g.level) <= near) {
      if (next != nullptr && g.hi + 1 >= next->lo) {  // the size belongs to the next level
        if (next->sizes() > kShortLevel || next->sizes() <= 0) break;
        ++next->lo;
      }
      ++g.hi;
    }
  }
  segs.erase(std::remove_if(segs.begin(), segs.end(), [&](const Segment& g) { return g.sizes() < c.min_sizes; }),
             segs.end());
  refresh_levels(segs, c);
}

// Merges the closest pair of adjacent levels while they are the same level (see same_level):
// noise split into two, or a plateau split around a knee fragment. The merged level spans both
// and any sizes between them; its level is a median, so those barely count.
bool merge_similar(std::vector<Segment>& segs, const Curve& c) {
  bool changed = false;
  while (segs.size() > 1) {
    std::size_t best = 0;
    double best_ratio = std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
      const double ratio = std::fabs(segs[i].level - segs[i + 1].level) / c.same_level(segs[i], segs[i + 1]);
      if (ratio < best_ratio) best_ratio = ratio, best = i;
    }
    if (best_ratio >= 1) break;
    segs[best].hi = segs[best + 1].hi;
    segs[best].level = c.level(segs[best].lo, segs[best].hi);
    segs.erase(segs.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    changed = true;
  }
  return changed;
}

// A short fast level inside one plateau (the levels on both sides are the same level) is a bump
// (a burst of fast samples, a clock excursion), not a level; left in place it would pass for the
// end of the launch ramp.
bool drop_bumps(std::vector<Segment>& segs, const Curve& c) {
  for (std::size_t i = 1; i + 1 < segs.size(); ++i) {
    const Segment &prev = segs[i - 1], &g = segs[i], &next = segs[i + 1];
    const bool inside_one_plateau = std::fabs(prev.level - next.level) < c.same_level(prev, next);
    if (inside_one_plateau && g.level > prev.level && g.sizes() < prev.sizes() + next.sizes()) {
      segs.erase(segs.begin() + static_cast<std::ptrdiff_t>(i));
      return true;
    }
  }
  return false;
}

// The launch-overhead ramp: at small sizes a GPU (or a CPU loop with overheads) has not reached
// its rate yet, so every level before the fastest one is part of the ramp, not a memory level.
void drop_ramp(std::vector<Segment>& segs) {
  if (segs.empty()) return;
  auto fastest = std::max_element(segs.begin(), segs.end(),
                                  [](const Segment& a, const Segment& b) { return a.level < b.level; });
  segs.erase(segs.begin(), fastest);
}

// A short level on the straight line from the previous level's last size to the next level's
// first size is a fragment of a gradual knee (flat by chance); a plateau, however short, stands
// off that line. Returns how far inside the noise band it lies (> 0: a fragment).
double on_knee_line(const std::vector<Segment>& segs, std::size_t i, const Curve& c) {
  const Segment& g = segs[i];
  if (g.sizes() > kShortLevel) return 0;
  const Line knee = fit_line(c, segs[i - 1].hi, segs[i + 1].lo);
  double sq = 0;
  for (int k = g.lo; k <= g.hi; ++k) sq += (c.z[k] - knee.at(c.u[k])) * (c.z[k] - knee.at(c.u[k]));
  const double rms = std::sqrt(sq / g.sizes());
  const double limit = kOnKneeLine * c.sigma;
  return rms <= limit ? 1 + (limit - rms) / limit : 0;
}

// A short level that slopes down significantly and falls inside by at least half as much per
// size as at its smaller edge step is part of a knee: a plateau, however short, is flat inside
// with big steps at both edges. Returns the inside/edge ratio (> 0: part of a knee).
double slopes_like_knee(const Segment& g, const Curve& c) {
  const double span = c.u[g.hi] - c.u[g.lo];
  if (span > kKneeOctaves) return 0;  // knees are short; a long level may drift
  const Line inside = fit_line(c, g.lo, g.hi);
  if (-inside.slope * std::sqrt(inside.suu) < kSlopeT * c.sigma) return 0;  // flat within noise
  const double drop_per_size = -inside.slope * span / (g.sizes() - 1);
  const double edge_step = std::min(c.z[g.lo - 1] - c.z[g.lo], c.z[g.hi] - c.z[g.hi + 1]);
  if (edge_step <= 0) return std::numeric_limits<double>::max();
  return drop_per_size >= kEdgeStepShare * edge_step ? drop_per_size / edge_step : 0;
}

// How much level i looks like a piece of a knee between a faster and a slower level (0: not).
double knee_score(const std::vector<Segment>& segs, std::size_t i, const Curve& c) {
  if (i == 0 || i + 1 >= segs.size()) return 0;
  const Segment& g = segs[i];
  if (!(segs[i - 1].level > g.level && g.level > segs[i + 1].level)) return 0;
  if (g.lo == 0 || g.hi == c.last()) return 0;
  return std::max(on_knee_line(segs, i, c), slopes_like_knee(g, c));
}

// Drops the most knee-like level, if any (one at a time: removing it changes its neighbours).
bool drop_knee_fragment(std::vector<Segment>& segs, const Curve& c) {
  std::size_t worst = 0;
  double worst_score = 0;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    const double score = knee_score(segs, i, c);
    if (score > worst_score) worst_score = score, worst = i;
  }
  if (worst_score <= 0) return false;
  segs.erase(segs.begin() + static_cast<std::ptrdiff_t>(worst));
  return true;
}

// Levels must decrease with working set. Where one is faster than the level before it (a dip of
// outliers inside a plateau, or a bump), the one with fewer sizes is the artefact.
bool enforce_decreasing(std::vector<Segment>& segs) {
  for (std::size_t i = 0; i + 1 < segs.size(); ++i) {
    if (segs[i + 1].level < segs[i].level) continue;
    const std::size_t victim = segs[i + 1].sizes() <= segs[i].sizes() ? i + 1 : i;
    segs.erase(segs.begin() + static_cast<std::ptrdiff_t>(victim));
    return true;
  }
  return false;
}

Plateau make_plateau(const Segment& g, const std::vector<SizeGroup>& groups) {
  Plateau p;
  p.x_lo = groups[g.lo].x;
  p.x_hi = groups[g.hi].x_last;
  std::vector<double> per_size, all;
  for (int k = g.lo; k <= g.hi; ++k) {
    p.sizes += groups[k].distinct;
    per_size.push_back(groups[k].median);
    all.insert(all.end(), groups[k].samples.begin(), groups[k].samples.end());
  }
  p.value = median_of(per_size);
  p.stats = compute_stats(std::move(all));
  return p;
}

}  // namespace

std::vector<Plateau> find_plateaus(const std::vector<CurvePoint>& points, const PlateauOptions& options) {
  const std::vector<SizeGroup> groups = group_by_size(points);
  Curve c;
  c.min_sizes = std::max(1, options.min_sizes);
  c.step = std::log1p(std::max(0.0, options.min_step));
  if (static_cast<int>(groups.size()) < c.min_sizes) return {};
  for (const SizeGroup& g : groups) {
    c.u.push_back(std::log2(g.x));
    c.z.push_back(std::log(g.median));
  }
  c.sigma = noise_sigma(c.z);

  std::vector<Segment> segs = segment_levels(c.u, c.z, c.min_sizes, c.sigma);
  refresh_levels(segs, c);
  extend_levels(segs, c);
  merge_similar(segs, c);
  while (drop_bumps(segs, c)) merge_similar(segs, c);
  drop_ramp(segs);
  // Each step can give the others new neighbours; every change removes a level, so this ends.
  for (bool changed = true; changed;) {
    changed = drop_knee_fragment(segs, c);
    changed |= merge_similar(segs, c);
    changed |= enforce_decreasing(segs);
  }

  std::vector<Plateau> plateaus;
  for (const Segment& g : segs) plateaus.push_back(make_plateau(g, groups));
  return plateaus;
}

// ---- naming ----------------------------------------------------------------------------------

namespace {

// "L2", "L2.b", "L2.c", ...: later plateaus that land on a name already used.
void suffix_duplicates(std::vector<std::string>& names) {
  std::map<std::string, int> seen;
  for (std::string& name : names) {
    const int count = seen[name]++;
    if (count > 0) name += "." + std::string(1, static_cast<char>('a' + std::min(count, 25)));
  }
}

}  // namespace

std::vector<std::string> name_levels(const std::vector<Plateau>& plateaus, const std::vector<CacheInfo>& caches,
                                     const std::string& memory_name) {
  std::vector<std::string> names;
  if (caches.empty()) {
    for (std::size_t i = 0; i < plateaus.size(); ++i)
      names.push_back(i + 1 == plateaus.size() ? memory_name : "L" + std::to_string(i + 1));
    return names;
  }
  // A plateau belongs to the first level that holds its geometric centre: the centre sits well
  // inside the plateau, so soft knees at either end (which stretch or shorten the plateau) do not
  // move it past a capacity. Levels never go back to a nearer cache.
  std::size_t floor_level = 0;
  for (const Plateau& p : plateaus) {
    const double centre = std::sqrt(p.x_lo * p.x_hi);
    std::size_t level = caches.size();  // past the last cache: memory
    for (std::size_t k = 0; k < caches.size(); ++k) {
      const double capacity = static_cast<double>(caches[k].bytes) * std::max(1, caches[k].instances);
      if (capacity >= centre) {
        level = k;
        break;
      }
    }
    level = std::max(level, floor_level);
    floor_level = level;
    names.push_back(level < caches.size() ? caches[level].name : memory_name);
  }
  suffix_duplicates(names);
  return names;
}

// ---- fitting samples -------------------------------------------------------------------------

namespace {

// Samples of one (backend, probe), in the order they first appear.
struct ProbeSamples {
  std::string backend, probe;
  std::vector<const Sample*> samples;
};

std::vector<ProbeSamples> group_by_probe(const std::vector<Sample>& samples) {
  std::vector<ProbeSamples> groups;
  std::map<std::pair<std::string, std::string>, std::size_t> index;
  for (const Sample& s : samples) {
    auto [it, inserted] = index.try_emplace({s.backend, s.probe}, groups.size());
    if (inserted) groups.push_back({s.backend, s.probe, {}});
    groups[it->second].samples.push_back(&s);
  }
  return groups;
}

// "axis=value;axis=value" of the series axes a sample has (sorted, params_to_string).
std::string series_key(const Params& params, const std::vector<std::string>& axes) {
  Params sub;
  for (const std::string& axis : axes) {
    auto it = params.find(axis);
    if (it != params.end()) sub.insert(*it);
  }
  return params_to_string(sub);
}

// Canonical form of a series written by hand ("b=1;a=2" -> "a=2;b=1").
std::string canonical_series(const std::string& text) {
  try {
    return params_to_string(params_from_string(text));
  } catch (const std::exception&) {
    return text;
  }
}

using Series = std::vector<std::pair<std::string, std::vector<const Sample*>>>;

// Splits samples into series, in the order the series first appear.
Series split_series(const std::vector<const Sample*>& samples, const std::vector<std::string>& axes) {
  Series series;
  std::map<std::string, std::size_t> index;
  for (const Sample* s : samples) {
    const std::string key = series_key(s->params, axes);
    auto [it, inserted] = index.try_emplace(key, series.size());
    if (inserted) series.push_back({key, {}});
    series[it->second].second.push_back(s);
  }
  return series;
}

std::optional<double> x_value(const Sample& s, const std::string& x_axis) {
  if (s.params.count(x_axis) != 0) {
    try {
      return param_real(s.params, x_axis);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  if (x_axis == "working_set_bytes" && s.working_set_bytes > 0) return s.working_set_bytes;
  return std::nullopt;
}

// The samples of one point (one full parameter set) and their median rate.
struct PointSamples {
  const Params* params = nullptr;
  std::vector<double> values;
  double median = 0;
};

// Groups samples by point (params_to_string of all parameters), median per point.
std::map<std::string, PointSamples> group_by_point(const std::vector<const Sample*>& samples,
                                                   const std::string& metric) {
  std::map<std::string, PointSamples> points;
  for (const Sample* s : samples) {
    const double value = s->metric(metric);
    if (!std::isfinite(value)) continue;  // a failed or zero-time sample carries no rate
    PointSamples& p = points[params_to_string(s->params)];
    p.params = &s->params;
    p.values.push_back(value);
  }
  for (auto& [key, p] : points) p.median = median_of(p.values);
  return points;
}

const PointSamples* best_point(const std::map<std::string, PointSamples>& points) {
  const PointSamples* best = nullptr;
  for (const auto& [key, p] : points)
    if (best == nullptr || p.median > best->median) best = &p;
  return best;
}

// A pointer into a temporary map would dangle: callers keep the map, or use best_of.
const PointSamples* best_point(std::map<std::string, PointSamples>&&) = delete;

// The best point of `samples` by `metric`, copied out of the grouping (its params still point
// into `samples`).
std::optional<PointSamples> best_of(const std::vector<const Sample*>& samples, const std::string& metric) {
  const auto points = group_by_point(samples, metric);
  if (const PointSamples* best = best_point(points)) return *best;
  return std::nullopt;
}

// Median clock of the point's samples (each measured during or right after its launch); 0 when
// none carries one.
double median_clock_of(const std::vector<const Sample*>& samples, const Params& params) {
  std::vector<double> mhz;
  for (const Sample* s : samples)
    if (s->params == params && s->clock_mhz > 0 && std::isfinite(s->clock_mhz)) mhz.push_back(s->clock_mhz);
  return mhz.empty() ? 0 : median_of(mhz);
}

// A sample of the point with these parameters (its work counts are the point's).
const Sample* first_sample_of(const std::vector<const Sample*>& samples, const Params& params) {
  for (const Sample* s : samples)
    if (s->params == params) return s;
  return nullptr;
}

// One series as a curve over the size axis. Where a size has several points (axes that are
// neither the size nor a series axis, e.g. an occupancy sweep), the best point is the one the
// hardware can reach, so its samples represent that size; repetitions are kept as samples.
struct SizeCurve {
  std::vector<CurvePoint> points;
  std::map<double, Params> params_at;  // size -> the chosen point's parameters
  std::map<double, double> median_at;  // size -> the chosen point's median
};

SizeCurve series_curve(const std::vector<const Sample*>& samples, const FeedSpec& spec) {
  std::map<double, std::vector<const Sample*>> by_size;
  for (const Sample* s : samples)
    if (auto x = x_value(*s, spec.x_axis)) by_size[*x].push_back(s);
  SizeCurve curve;
  for (const auto& [x, at_size] : by_size) {
    const auto points = group_by_point(at_size, spec.metric);
    const PointSamples* best = best_point(points);
    curve.params_at[x] = *best->params;
    curve.median_at[x] = best->median;
    for (double v : best->values) curve.points.push_back({x, v});
  }
  return curve;
}

// Median over the sizes of `curve` that fall inside [lo, hi]; nullopt when none do.
std::optional<double> median_inside(const SizeCurve& curve, double lo, double hi) {
  std::vector<double> values;
  for (const auto& [x, m] : curve.median_at)
    if (x >= lo * (1 - 1e-9) && x <= hi * (1 + 1e-9)) values.push_back(m);
  if (values.empty()) return std::nullopt;
  return median_of(std::move(values));
}

// The rate figures every memory level carries, from its plateau and the device.
MemoryLevel make_level(const Plateau& p, const std::string& name, const std::string& metric,
                       const DeviceInfo& device) {
  MemoryLevel level;
  level.level = name;
  level.source = "empirical";
  if (metric == "gtxn_s") {
    level.gtxn_s = p.value;
    level.gbs = p.value * 32;
  } else {
    level.gbs = p.value;
    level.gtxn_s = p.value / 32;
  }
  if (device.clock_measured_mhz > 0 && device.compute_units > 0)
    level.bytes_per_clk_per_unit = level.gbs * 1e9 / (device.clock_measured_mhz * 1e6) / device.compute_units;
  level.working_set_lo = p.x_lo;
  level.working_set_hi = p.x_hi;
  level.stats = p.stats;
  return level;
}

void fit_memory_levels(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  const Series series = split_series(group.samples, spec.series_axes);
  if (series.empty()) return;
  const std::string wanted = canonical_series(spec.primary_series);
  auto primary = series.begin();
  if (!spec.primary_series.empty()) {
    primary = std::find_if(series.begin(), series.end(), [&](const auto& s) { return s.first == wanted; });
    if (primary == series.end()) {
      machine.missing.push_back("memory levels of probe '" + group.probe + "' (" + group.backend +
                                "): no samples of the primary series '" + spec.primary_series + "'");
      return;
    }
  }
  const SizeCurve curve = series_curve(primary->second, spec);
  const std::vector<Plateau> plateaus = find_plateaus(curve.points);
  if (plateaus.empty()) {
    machine.missing.push_back("memory levels of probe '" + group.probe + "' (" + group.backend + ", " +
                              primary->first + "): too few working-set sizes to find a plateau");
    return;
  }
  std::vector<SizeCurve> others;
  for (auto it = series.begin(); it != series.end(); ++it)
    if (it != primary) others.push_back(series_curve(it->second, spec));

  std::vector<std::string> names = name_levels(plateaus, machine.device.caches, machine.device.memory_name);
  // Past the last cache there is no further level: plateaus there before the last are the
  // drawn-out transition into memory (a victim L3 still hitting part of the set), so memory
  // is the plateau at the largest working sets. Cache duplicates (a GPU's near and far L2
  // partitions) stay.
  const std::string& memory = machine.device.memory_name;
  auto is_memory = [&](const std::string& n) { return n == memory || n.rfind(memory + ".", 0) == 0; };
  std::vector<bool> keep(plateaus.size(), true);
  if (!machine.device.caches.empty())
    for (std::size_t i = 0; i + 1 < plateaus.size(); ++i)
      if (is_memory(names[i])) keep[i] = false;
  if (!names.empty() && is_memory(names.back())) names.back() = memory;
  for (std::size_t i = 0; i < plateaus.size(); ++i) {
    if (!keep[i]) continue;
    const Plateau& p = plateaus[i];
    MemoryLevel level = make_level(p, names[i], spec.metric, machine.device);
    level.probe = group.probe;
    auto at = curve.params_at.lower_bound(p.x_lo * (1 - 1e-9));
    if (at != curve.params_at.end()) level.params = at->second;
    level.params.erase(spec.x_axis);
    std::size_t k = 0;
    for (auto it = series.begin(); it != series.end(); ++it) {
      if (it == primary) continue;
      if (auto v = median_inside(others[k++], p.x_lo, p.x_hi)) level.by_series[it->first] = *v;
    }
    machine.memory.push_back(std::move(level));
  }
}

// Upper-cases a parameter value for a ceiling name; "nofma" keeps the lower-case "no".
std::string name_token(const std::string& value) {
  if (value == "nofma") return "noFMA";
  std::string out = value;
  for (char& ch : out) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return out;
}

// "{precision}.{form}" with each {axis} replaced by its rendered value (upper-cased for ceiling
// names, as written for wall patterns: "stride-8", "conflict-broadcast"); unknown axes stay as
// written.
std::string render_name(const std::string& pattern, const Params& params, const std::string& fallback,
                        bool upper = true) {
  if (pattern.empty()) return fallback;
  std::string out;
  for (std::size_t pos = 0; pos < pattern.size();) {
    const std::size_t open = pattern.find('{', pos);
    const std::size_t close = open == std::string::npos ? std::string::npos : pattern.find('}', open);
    if (close == std::string::npos) {
      out += pattern.substr(pos);
      break;
    }
    out += pattern.substr(pos, open - pos);
    const std::string axis = pattern.substr(open + 1, close - open - 1);
    auto it = params.find(axis);
    out += it != params.end() ? (upper ? name_token(it->second) : it->second)
                              : pattern.substr(open, close - open + 1);
    pos = close + 1;
  }
  return out;
}

void fit_compute_ceilings(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  for (const auto& [key, samples] : split_series(group.samples, spec.series_axes)) {
    const auto points = group_by_point(samples, spec.metric);
    const PointSamples* best = best_point(points);
    if (best == nullptr) continue;
    ComputeCeiling c;
    const std::string fallback = key.empty() ? group.probe : group.probe + "[" + key + "]";
    c.name = render_name(spec.name_pattern, *best->params, fallback);
    c.source = "empirical";
    c.gflops = best->median;
    // The theoretical peak at the clock measured with this ceiling's own samples: the device's
    // figure is at its start-up clock and peaks scale with the clock.
    const DeviceInfo& dev = machine.device;
    const double own_clock = median_clock_of(samples, *best->params);
    c.clock_mhz = own_clock > 0 ? own_clock : dev.clock_measured_mhz;
    auto theo = dev.theoretical_gflops.find(c.name);
    c.theoretical_gflops = theo == dev.theoretical_gflops.end() ? 0
                           : own_clock > 0 && dev.clock_measured_mhz > 0 ? theo->second * own_clock / dev.clock_measured_mhz
                                                                          : theo->second;
    c.fraction_of_theoretical = c.theoretical_gflops > 0 ? c.gflops / c.theoretical_gflops : 0;
    auto unknown = dev.extra.find("theoretical_unknown");
    if (theo == dev.theoretical_gflops.end() && unknown != dev.extra.end())
      machine.missing.push_back(c.name + ": no theoretical peak: " + unknown->second);
    c.stats = compute_stats(best->values);
    c.probe = group.probe;
    c.params = *best->params;
    // Probes that count their instructions (tensor MMAs) give the instruction ceiling too: the
    // same point's rate in warp instructions, and the FLOPs one instruction does.
    const Sample* first = first_sample_of(samples, *best->params);
    if (first != nullptr && first->warp_instructions > 0 && first->flops > 0) {
      c.flops_per_instruction = first->flops / first->warp_instructions;
      c.instructions_gips = c.gflops / c.flops_per_instruction;
    }
    machine.compute.push_back(std::move(c));
  }
}

// ---- instruction-roofline feeds -------------------------------------------------------------

// Warp instructions per clock the device can issue: SMs x schedulers (one instruction per
// scheduler per clock; ARCHITECTURE.md). 0 when the device does not say how many schedulers.
double theoretical_warp_gips(const DeviceInfo& device) {
  auto it = device.extra.find("schedulers_per_sm");
  if (it == device.extra.end() || device.compute_units <= 0 || device.clock_measured_mhz <= 0) return 0;
  double schedulers = 0;
  try {
    schedulers = std::stod(it->second);
  } catch (const std::exception&) {
    return 0;
  }
  return device.compute_units * schedulers * device.clock_measured_mhz * 1e-3;
}

void fit_warp_gips(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  const auto points = group_by_point(group.samples, spec.metric);
  const PointSamples* best = best_point(points);
  if (best == nullptr) return;
  InstructionCeiling w;
  w.measured_gips = best->median;
  w.theoretical_gips = theoretical_warp_gips(machine.device);
  w.clock_mhz = machine.device.clock_measured_mhz;
  w.stats = compute_stats(best->values);
  w.probe = group.probe;
  // Two probes may feed warp GIPS; the machine keeps the highest.
  if (!machine.warp_gips || machine.warp_gips->measured_gips < w.measured_gips) machine.warp_gips = w;
}

// Integer value of `axis` in a point's parameters; nullopt when absent or not an integer.
std::optional<int> int_param(const Params& params, const std::string& axis) {
  if (params.count(axis) == 0) return std::nullopt;
  try {
    return static_cast<int>(param_int(params, axis));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void fit_predication(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  std::map<int, std::vector<const Sample*>> by_lanes;
  for (const Sample* s : group.samples)
    if (auto lanes = int_param(s->params, spec.x_axis)) by_lanes[*lanes].push_back(s);
  std::vector<PredicationPoint> table;
  for (const auto& [lanes, samples] : by_lanes) {
    const std::optional<PointSamples> best = best_of(samples, spec.metric);
    if (!best) continue;
    PredicationPoint p;
    p.active_lanes = lanes;
    p.warp_gips = best->median;
    p.thread_gips = best->median * lanes / 32.0;  // thread instructions / 32, per ARCHITECTURE.md
    table.push_back(p);
  }
  // Most active lanes first, as the instruction roofline lists them.
  std::sort(table.begin(), table.end(), [](const auto& a, const auto& b) { return a.active_lanes > b.active_lanes; });
  if (!table.empty()) machine.predication = std::move(table);
}

void fit_walls(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  const bool shared = spec.wall_set == "shared";
  if (!shared && spec.wall_set != "global")
    throw std::invalid_argument("wall_set '" + spec.wall_set + "' is not global or shared");
  std::vector<Wall>& walls = shared ? machine.shared_walls : machine.global_walls;
  for (const auto& [key, samples] : split_series(group.samples, spec.series_axes)) {
    const std::optional<PointSamples> best = best_of(samples, spec.metric);
    if (!best) continue;
    const Sample* first = first_sample_of(samples, *best->params);
    const double per = shared ? first->shared_wavefronts : first->transactions;
    if (!(per > 0) || !(first->warp_instructions > 0)) continue;  // nothing counted: no wall
    Wall w;
    w.pattern = render_name(spec.name_pattern, *best->params, key, /*upper=*/false);
    if (auto bytes = int_param(*best->params, "word_bytes")) w.word_bytes = *bytes;
    if (shared) w.conflict_degree = int_param(*best->params, "conflict_degree").value_or(0);
    // Warp instructions per transaction from the probe's accounting (its address model counts
    // the sectors or wavefronts of each request); the rates are what the device did with them.
    w.instruction_intensity = first->warp_instructions / per;
    w.gtxn_s = best->median;
    const std::optional<PointSamples> by_gips = best_of(samples, "gips");
    w.warp_gips = by_gips ? by_gips->median : 0;
    w.measured_intensity = w.gtxn_s > 0 ? w.warp_gips / w.gtxn_s : 0;
    walls.push_back(std::move(w));
  }
  // Highest intensity first: stride-0 / broadcast, then the wider and wider patterns.
  std::stable_sort(walls.begin(), walls.end(),
                   [](const Wall& a, const Wall& b) { return a.instruction_intensity > b.instruction_intensity; });
}

void fit_scaling(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  for (const auto& [key, samples] : split_series(group.samples, spec.series_axes)) {
    std::map<int, std::vector<const Sample*>> by_units;
    bool has_flops = false;
    for (const Sample* s : samples) {
      has_flops = has_flops || s->flops > 0;
      if (auto units = int_param(s->params, spec.x_axis))
        by_units[*units > 0 ? *units : machine.device.compute_units].push_back(s);  // 0: all of them
    }
    const std::string metric = !spec.metric.empty() ? spec.metric : has_flops ? "gflops" : "gbs";
    for (const auto& [units, at] : by_units) {
      const std::optional<PointSamples> best = best_of(at, metric);
      if (!best) continue;
      auto it = std::find_if(machine.scaling.begin(), machine.scaling.end(),
                             [&](const ScalingPoint& p) { return p.units == units; });
      if (it == machine.scaling.end()) {
        machine.scaling.push_back({units, {}});
        it = machine.scaling.end() - 1;
      }
      // A bandwidth series is named after the memory level it streams from (HBM, DRAM), as the
      // plots and comparisons name levels; a FLOP series by the feed's pattern.
      const std::string name = has_flops || machine.device.memory_name.empty()
                                   ? render_name(spec.name_pattern, *best->params, key)
                                   : machine.device.memory_name;
      it->ceilings[name] = best->median;
    }
  }
  std::sort(machine.scaling.begin(), machine.scaling.end(),
            [](const ScalingPoint& a, const ScalingPoint& b) { return a.units < b.units; });
}

void fit_clocks(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  for (const auto& [key, samples] : split_series(group.samples, spec.series_axes)) {
    std::vector<double> mhz;
    for (const Sample* s : samples)
      if (s->clock_mhz > 0 && std::isfinite(s->clock_mhz)) mhz.push_back(s->clock_mhz);
    if (mhz.empty()) continue;
    ClockReading c;
    c.load = render_name(spec.name_pattern, samples.front()->params, key.empty() ? "load" : key, /*upper=*/false);
    c.median_mhz = median_of(mhz);
    c.min_mhz = *std::min_element(mhz.begin(), mhz.end());
    c.max_mhz = *std::max_element(mhz.begin(), mhz.end());
    c.samples = static_cast<int>(mhz.size());
    c.probe = group.probe;
    machine.clocks.push_back(std::move(c));
  }
}

// One memory level with a fixed name (shared memory, the host link) from the best point of the
// primary series; the other series' bests go to by_series.
void fit_named_level(const ProbeSamples& group, const FeedSpec& spec, Machine& machine) {
  if (spec.level_name.empty()) throw std::invalid_argument("a NamedLevel feed needs level_name");
  const Series series = split_series(group.samples, spec.series_axes);
  const std::string wanted = canonical_series(spec.primary_series);
  auto primary = series.begin();
  if (!spec.primary_series.empty())
    primary = std::find_if(series.begin(), series.end(), [&](const auto& s) { return s.first == wanted; });
  if (primary == series.end()) {
    machine.missing.push_back("level '" + spec.level_name + "' of probe '" + group.probe +
                              "': no samples of the primary series '" + spec.primary_series + "'");
    return;
  }
  const std::optional<PointSamples> best = best_of(primary->second, spec.metric);
  if (!best) return;
  Plateau p;
  p.value = best->median;
  p.stats = compute_stats(best->values);
  p.sizes = 1;
  const Sample* first = first_sample_of(primary->second, *best->params);
  p.x_lo = p.x_hi = first != nullptr ? first->working_set_bytes : 0;
  MemoryLevel level = make_level(p, spec.level_name, spec.metric, machine.device);
  if (spec.level_name == "shared") level.gtxn_s = level.gbs / 128;  // wavefronts, not sectors
  level.probe = group.probe;
  level.params = *best->params;
  for (const auto& [key, samples] : series) {
    if (key == primary->first) continue;
    if (const auto b = best_of(samples, spec.metric)) level.by_series[key] = b->median;
  }
  machine.memory.push_back(std::move(level));
}

}  // namespace

namespace {

// Samples flagged while measuring (noisy: the point hit its time budget before its spread fell
// under max_noise) are left out when clean points remain for at least half of the probe's
// points; otherwise they are all kept, and the machine file says the ceilings rest on noisy data.
ProbeSamples without_flagged(const ProbeSamples& group, Machine& machine) {
  std::set<int> points, clean_points;
  for (const Sample* s : group.samples) {
    points.insert(s->point);
    if (s->flags.empty()) clean_points.insert(s->point);
  }
  if (clean_points.size() == points.size()) return group;
  if (2 * clean_points.size() < points.size()) {
    machine.missing.push_back("probe '" + group.probe + "': " + std::to_string(points.size() - clean_points.size()) +
                              " of " + std::to_string(points.size()) +
                              " points are flagged noisy; ceilings include them (too few clean points)");
    return group;
  }
  ProbeSamples clean = group;
  clean.samples.clear();
  for (const Sample* s : group.samples)
    if (s->flags.empty()) clean.samples.push_back(s);
  return clean;
}

// Nearest level first: levels from different probes arrive in probe order, so shared memory
// (beside L1 on NVIDIA GPUs) goes right after L1 and the host link ("system") last.
void order_memory_levels(Machine& machine) {
  auto rank = [](const MemoryLevel& l) {
    if (l.level == "system") return 3;
    if (l.level == "shared" || l.level == "L1" || l.level.rfind("L1.", 0) == 0) return l.level == "shared" ? 1 : 0;
    return 2;
  };
  std::stable_sort(machine.memory.begin(), machine.memory.end(),
                   [&](const MemoryLevel& a, const MemoryLevel& b) { return rank(a) < rank(b); });
}

// A ceiling above the theoretical peak at the measured clock cannot be real: report it as a
// probable probe bug instead of publishing it. 3% allows for clock drift between the
// measurement of the clock and of the ceiling.
void reject_above_theory(Machine& machine) {
  constexpr double kTolerance = 1.03;
  auto& compute = machine.compute;
  for (auto it = compute.begin(); it != compute.end();) {
    if (it->theoretical_gflops > 0 && it->gflops > kTolerance * it->theoretical_gflops) {
      std::ostringstream why;
      why.precision(4);
      why << it->name << ": rejected: " << it->gflops << " GFLOP/s is above the theoretical "
          << it->theoretical_gflops << " GFLOP/s at " << it->clock_mhz << " MHz by more than 3% (probable probe bug)";
      machine.missing.push_back(why.str());
      it = compute.erase(it);
    } else {
      ++it;
    }
  }
  if (machine.warp_gips && machine.warp_gips->theoretical_gips > 0 &&
      machine.warp_gips->measured_gips > kTolerance * machine.warp_gips->theoretical_gips) {
    std::ostringstream why;
    why.precision(4);
    why << "instructions.warp_gips: rejected: " << machine.warp_gips->measured_gips
        << " GIPS is above the theoretical " << machine.warp_gips->theoretical_gips
        << " GIPS by more than 3% (probable probe bug)";
    machine.missing.push_back(why.str());
    machine.warp_gips.reset();
  }
}

}  // namespace

void fit_samples(const std::vector<Sample>& samples, Machine& machine) {
  for (const ProbeSamples& all_samples : group_by_probe(samples)) {
    const Probe* probe = Registry::instance().probe_any_backend(all_samples.probe);
    // Flagged points are left out of maxima (one noisy spike must not become a peak), but not out
    // of memory-level curves: the segmentation is robust to noise by design, and dropping every
    // noisy size would leave gaps exactly where a shared machine is busiest (DRAM sizes on a
    // loaded VM are mostly noisy, and DRAM would vanish from the fit).
    bool only_curves = probe != nullptr;
    if (probe != nullptr)
      for (const FeedSpec& spec : probe->info().feeds) only_curves = only_curves && spec.kind == FeedKind::MemoryLevels;
    const ProbeSamples group = only_curves ? all_samples : without_flagged(all_samples, machine);
    if (probe == nullptr) {
      machine.missing.push_back("probe '" + group.probe + "' (" + group.backend + "): not known to this build; " +
                                std::to_string(group.samples.size()) + " samples not fitted");
      continue;
    }
    for (const FeedSpec& spec : probe->info().feeds) {
      // One feed that cannot be fitted (a metric the samples do not carry) must not cost the
      // others: it is reported with the levels and ceilings that were fitted.
      try {
        switch (spec.kind) {
          case FeedKind::MemoryLevels: fit_memory_levels(all_samples, spec, machine); break;
          case FeedKind::ComputeCeiling: fit_compute_ceilings(group, spec, machine); break;
          case FeedKind::NamedLevel: fit_named_level(group, spec, machine); break;
          case FeedKind::WarpGips: fit_warp_gips(group, spec, machine); break;
          case FeedKind::Predication: fit_predication(group, spec, machine); break;
          case FeedKind::Walls: fit_walls(group, spec, machine); break;
          case FeedKind::Scaling: fit_scaling(group, spec, machine); break;
          case FeedKind::Clock: fit_clocks(group, spec, machine); break;
        }
      } catch (const std::exception& e) {
        machine.missing.push_back("probe '" + group.probe + "' (" + group.backend + "), metric '" + spec.metric +
                                  "': not fitted: " + e.what());
      }
    }
  }
  std::stable_sort(machine.compute.begin(), machine.compute.end(),
                   [](const ComputeCeiling& a, const ComputeCeiling& b) { return a.name < b.name; });
  order_memory_levels(machine);
  reject_above_theory(machine);
}

// ---- external bandwidth CSV ------------------------------------------------------------------

namespace {

std::string trim(const std::string& text) {
  std::size_t b = 0, e = text.size();
  while (b < e && std::isspace(static_cast<unsigned char>(text[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(text[e - 1]))) --e;
  std::string out = text.substr(b, e - b);
  if (out.size() >= 2 && out.front() == '"' && out.back() == '"') out = out.substr(1, out.size() - 2);
  return out;
}

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::size_t pos = 0;
  while (true) {
    const std::size_t comma = line.find(',', pos);
    fields.push_back(trim(line.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return fields;
}

std::string lower(std::string text) {
  for (char& ch : text) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return text;
}

class CsvError {
 public:
  CsvError(const std::string& path, int line) : prefix_(path + ":" + std::to_string(line) + ": ") {}
  [[noreturn]] void fail(const std::string& what) const { throw InputError(prefix_ + what); }

 private:
  std::string prefix_;
};

// A positive finite number, or InputError naming the file, line and column.
double parse_positive(const std::string& field, const std::string& column, const CsvError& err) {
  if (field.empty()) err.fail("column '" + column + "' is empty");
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(field.c_str(), &end);
  if (end == field.c_str() || *end != '\0' || errno == EINVAL)
    err.fail("column '" + column + "': '" + field + "' is not a number");
  if (!std::isfinite(v)) err.fail("column '" + column + "': '" + field + "' is not finite");
  if (v <= 0) err.fail("column '" + column + "': '" + field + "' must be positive");
  return v;
}

// Reads (working_set_bytes, gbs) rows; '#' lines and blank lines are skipped, columns found by
// header name in any order.
std::vector<CurvePoint> read_bandwidth_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the file");
  std::vector<CurvePoint> points;
  std::string line;
  int line_no = 0;
  std::optional<std::size_t> x_col, y_col;
  std::size_t needed = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line_no == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // UTF-8 BOM
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    const CsvError err(path, line_no);
    const std::vector<std::string> fields = split_csv_line(line);
    if (!x_col) {  // the header
      for (std::size_t i = 0; i < fields.size(); ++i) {
        const std::string name = lower(fields[i]);
        if (name == "working_set_bytes" && !x_col) x_col = i;
        if (name == "gbs" && !y_col) y_col = i;
      }
      if (!x_col || !y_col)
        err.fail(std::string("header has no '") + (!x_col ? "working_set_bytes" : "gbs") +
                 "' column (expected columns working_set_bytes and gbs)");
      needed = std::max(*x_col, *y_col) + 1;
      continue;
    }
    if (fields.size() < needed)
      err.fail("expected at least " + std::to_string(needed) + " fields, found " + std::to_string(fields.size()));
    const double x = parse_positive(fields[*x_col], "working_set_bytes", err);
    const double y = parse_positive(fields[*y_col], "gbs", err);
    points.push_back({x, y});
  }
  const CsvError at_end(path, std::max(1, line_no));
  if (!x_col) at_end.fail("empty file: expected a header with columns working_set_bytes and gbs");
  if (points.empty()) at_end.fail("no data rows after the header");
  return points;
}

}  // namespace

void fit_bandwidth_csv(const std::string& path, Machine& machine) {
  const std::vector<CurvePoint> points = read_bandwidth_csv(path);
  const PlateauOptions options;
  const std::vector<Plateau> plateaus = find_plateaus(points, options);
  if (plateaus.empty())
    throw InputError(path + ": need at least " + std::to_string(options.min_sizes) +
                     " distinct working-set sizes to find a plateau");
  const std::string memory_name = machine.device.memory_name.empty() ? "DRAM" : machine.device.memory_name;
  const std::vector<std::string> names = name_levels(plateaus, {}, memory_name);
  for (std::size_t i = 0; i < plateaus.size(); ++i) {
    MemoryLevel level = make_level(plateaus[i], names[i], "gbs", machine.device);
    level.probe = "external";
    machine.memory.push_back(std::move(level));
  }
}

}  // namespace roofprobe
