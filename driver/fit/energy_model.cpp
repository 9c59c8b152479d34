#include "driver/fit/energy_model.hpp"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>
#include <utility>

#include "driver/fit/energy.hpp"
#include "driver/fit/median.hpp"
#include "driver/fit/student_t.hpp"

namespace roofprobe {

namespace {

// Huber's tuning constant and Tukey's bisquare's: 95% efficiency at Gaussian residuals.
constexpr double kHuberK = 1.345;
constexpr double kBisquareC = 4.685;
// Above this condition number of the column-scaled design the coefficients are not identified:
// a relative error of 1e-6 in the energies moves them by their own size.
constexpr double kMaxCondition = 1e6;
constexpr int kMaxIterations = 200;
// The check of the model against each launch.
constexpr double kReproduceWithin = 0.05;
// A robust relative scale of the residuals below this is rounding, and the model holds exactly (a
// modelled counter): the energies and works summed over a run's launches carry relative rounding
// errors of 1e-14 and more (2.1e-14 seen in an ASan build), against which the bisquare weighs most
// points out and calls the fit scattered. A real counter's scatter is 1e-3 or more.
constexpr double kExactScale = 1e-12;

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Weighted least squares: minimizes sum w_i (y_i - a_i b)^2.
Eigen::VectorXd weighted_solve(const Eigen::MatrixXd& a, const Eigen::VectorXd& y, const Eigen::VectorXd& w) {
  const Eigen::VectorXd sw = w.array().sqrt().matrix();
  return (sw.asDiagonal() * a).colPivHouseholderQr().solve(sw.asDiagonal() * y);
}

// Robust scale of residuals: the median absolute residual, consistent with sigma for Gaussians.
double robust_scale(const Eigen::VectorXd& r) {
  std::vector<double> abs(static_cast<std::size_t>(r.size()));
  for (Eigen::Index i = 0; i < r.size(); ++i) abs[static_cast<std::size_t>(i)] = std::abs(r[i]);
  return 1.4826 * median_of(std::move(abs));
}

bool converged(const Eigen::VectorXd& before, const Eigen::VectorXd& after) {
  return (after - before).cwiseAbs().maxCoeff() <= 1e-10 * std::max(1.0, after.cwiseAbs().maxCoeff());
}

}  // namespace

EnergyModelSolution solve_energy_model(const std::vector<EnergyPoint>& points,
                                       const std::vector<std::string>& level_order) {
  EnergyModelSolution out;
  // The columns: FLOP types, memory levels (nearest first where the order is known), constant power.
  std::set<std::string> types, levels;
  for (const EnergyPoint& p : points) {
    for (const auto& [t, w] : p.flops)
      if (w > 0) types.insert(t);
    for (const auto& [l, q] : p.bytes)
      if (q > 0) levels.insert(l);
  }
  std::vector<std::string> level_names;
  for (const std::string& l : level_order)
    if (levels.erase(l) > 0) level_names.push_back(l);
  level_names.insert(level_names.end(), levels.begin(), levels.end());
  std::vector<std::string> names(types.begin(), types.end());
  const std::size_t n_types = names.size();
  names.insert(names.end(), level_names.begin(), level_names.end());
  names.push_back("constant power");
  const auto n = static_cast<Eigen::Index>(points.size());
  const auto p = static_cast<Eigen::Index>(names.size());

  auto list = [&](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
    return s;
  };
  if (n < kEnergyPointsPerCoefficient * p) {
    out.not_fitted = std::to_string(n) + " points with energy for " + std::to_string(p) + " coefficients (" +
                     list(names) + "); at least " + std::to_string(kEnergyPointsPerCoefficient) +
                     " points per coefficient are needed: the energy phase measures each ceiling and level on "
                     "part of the device (docs/ENERGY.md); for probes that cannot run on part of it, raise "
                     "measurement.min_seconds so that more points last long enough for the counter";
    return out;
  }

  // Each point's equation divided by its measured energy: the residuals are relative.
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, p);
  std::vector<int> uses(names.size(), 0);
  for (Eigen::Index i = 0; i < n; ++i) {
    const EnergyPoint& pt = points[static_cast<std::size_t>(i)];
    for (Eigen::Index j = 0; j + 1 < p; ++j) {
      const std::string& name = names[static_cast<std::size_t>(j)];
      const auto& work = static_cast<std::size_t>(j) < n_types ? pt.flops : pt.bytes;
      auto it = work.find(name);
      if (it != work.end() && it->second > 0) {
        a(i, j) = it->second / pt.energy_j;
        ++uses[static_cast<std::size_t>(j)];
      }
    }
    a(i, p - 1) = pt.seconds / pt.energy_j;
    ++uses.back();
  }
  // Columns scaled to unit length: FLOPs (1e12), bytes and seconds differ by orders of magnitude.
  const Eigen::VectorXd col_norm = a.colwise().norm().transpose();
  const Eigen::MatrixXd as = a * col_norm.cwiseInverse().asDiagonal();
  const Eigen::VectorXd y = Eigen::VectorXd::Ones(n);

  Eigen::JacobiSVD<Eigen::MatrixXd> svd(as, Eigen::ComputeThinV);
  const Eigen::VectorXd sv = svd.singularValues();
  const double condition = sv[p - 1] > 0 ? sv[0] / sv[p - 1] : INFINITY;
  if (!(condition <= kMaxCondition)) {
    // The right singular vector of the smallest singular value is the combination of
    // coefficients the data leave free.
    const Eigen::VectorXd v = svd.matrixV().col(p - 1);
    std::vector<std::string> tied;
    for (Eigen::Index j = 0; j < p; ++j)
      if (std::abs(v[j]) >= 0.2) tied.push_back(names[static_cast<std::size_t>(j)]);
    out.not_fitted = "the points cannot tell apart " + list(tied) + " (condition number " +
                     (std::isfinite(condition) ? fmt("%.3g", condition) : std::string("infinite")) +
                     "): their work and time grow in the same proportion from point to point; points at other "
                     "intensities or rates (a FLOP sweep across the ridge, several working sets) separate them";
    return out;
  }

  // Least squares, then Huber's weights until they settle.
  Eigen::VectorXd b = as.colPivHouseholderQr().solve(y);
  Eigen::VectorXd w = Eigen::VectorXd::Ones(n);
  double scale = 0;
  for (int it = 0; it < kMaxIterations; ++it) {
    scale = robust_scale(y - as * b);
    if (scale <= kExactScale) break;  // the model holds exactly
    const Eigen::VectorXd r = y - as * b;
    for (Eigen::Index i = 0; i < n; ++i) {
      const double u = std::abs(r[i]) / scale;
      w[i] = u <= kHuberK ? 1 : kHuberK / u;
    }
    const Eigen::VectorXd next = weighted_solve(as, y, w);
    const bool done = converged(b, next);
    b = next;
    if (done) break;
  }
  // Bisquare at the Huber scale: a point far outside it gets no weight.
  auto bisquare = [&](double u) {
    const double t = u / kBisquareC;
    return std::abs(t) < 1 ? (1 - t * t) * (1 - t * t) : 0.0;
  };
  if (scale > kExactScale) {
    for (int it = 0; it < kMaxIterations; ++it) {
      const Eigen::VectorXd r = y - as * b;
      Eigen::VectorXd wb(n);
      for (Eigen::Index i = 0; i < n; ++i) wb[i] = bisquare(r[i] / scale);
      if ((wb.array() > 0).count() < 2 * p) break;  // too few points left to trust: keep Huber's
      w = wb;
      const Eigen::VectorXd next = weighted_solve(as, y, w);
      const bool done = converged(b, next);
      b = next;
      if (done) break;
    }
    Eigen::VectorXd r = y - as * b;
    for (Eigen::Index i = 0; i < n; ++i) w[i] = bisquare(r[i] / scale);
  }

  // Covariance of an M-estimate (Huber 1981, 7.6): K^2 [sum psi^2 / (n - p)] / [mean psi']^2
  // s^2 (A'A)^-1, with psi the bisquare's; K corrects for the spread of psi' in small samples.
  Eigen::MatrixXd cov = Eigen::MatrixXd::Zero(p, p);
  if (scale > kExactScale) {
    const Eigen::VectorXd r = y - as * b;
    double sum_psi2 = 0, sum_dpsi = 0, sum_dpsi2 = 0;
    for (Eigen::Index i = 0; i < n; ++i) {
      const double u = r[i] / scale, t = u / kBisquareC;
      if (std::abs(t) >= 1) continue;
      const double psi = u * (1 - t * t) * (1 - t * t);
      const double dpsi = (1 - t * t) * (1 - 5 * t * t);
      sum_psi2 += psi * psi;
      sum_dpsi += dpsi;
      sum_dpsi2 += dpsi * dpsi;
    }
    const double m = sum_dpsi / static_cast<double>(n);
    // Most points far out on the bisquare's falling flank: no sound interval comes from them.
    if (!(m > 0.1)) {
      out.not_fitted = "the points scatter too widely about any fit for intervals (robust relative scale " +
                       fmt("%.3g", scale) + ")";
      return out;
    }
    const double var_dpsi = sum_dpsi2 / static_cast<double>(n) - m * m;
    const double k = 1 + static_cast<double>(p) / static_cast<double>(n) * var_dpsi / (m * m);
    const double factor = k * k * sum_psi2 / static_cast<double>(n - p) / (m * m) * scale * scale;
    cov = factor * (as.transpose() * as).inverse();
  }
  const double t = t975(static_cast<double>(n - p));

  for (Eigen::Index j = 0; j < p; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    const double value = b[j] / col_norm[j];
    const double half = t * std::sqrt(std::max(0.0, cov(j, j))) / col_norm[j];
    if (j == p - 1) {
      out.constant_power_w = value;
      out.constant_power_ci95_lo = value - half;
      out.constant_power_ci95_hi = value + half;
      continue;
    }
    // J per FLOP or byte -> pJ.
    EnergyCoefficient c{names[ju], value * 1e12, (value - half) * 1e12, (value + half) * 1e12, uses[ju]};
    (ju < n_types ? out.pj_per_flop : out.pj_per_byte).push_back(c);
  }
  out.relative_scale = scale;
  out.weight.assign(w.data(), w.data() + w.size());
  return out;
}

double model_energy_j(const EnergyModelSection& model, const std::map<std::string, double>& flops,
                      const std::map<std::string, double>& bytes, double seconds) {
  double e = model.constant_power_w * seconds;
  for (const EnergyCoefficient& c : model.pj_per_flop)
    if (auto it = flops.find(c.name); it != flops.end()) e += it->second * c.value * 1e-12;
  for (const EnergyCoefficient& c : model.pj_per_byte)
    if (auto it = bytes.find(c.name); it != bytes.end()) e += it->second * c.value * 1e-12;
  return e;
}

namespace {

// The memory level a sample's bytes are served from: for a level's own probe, the level of the
// sample's series whose plateau holds its working set; for another probe, the nearest level
// whose plateau holds it. Empty: between plateaus (a mixture of levels), or a series of a level
// probe that defines no level.
std::string level_of(const Sample& s, const std::vector<MemoryLevel>& memory) {
  bool level_probe = false;
  for (const MemoryLevel& l : memory) {
    if (l.source != "empirical" || l.probe != s.probe) continue;
    level_probe = true;
    if (params_include(l.params, s.params) && s.working_set_bytes >= l.working_set_lo &&
        s.working_set_bytes <= l.working_set_hi)
      return l.level;
  }
  if (level_probe) return "";
  const MemoryLevel* farthest = nullptr;
  const MemoryLevel* before_farthest = nullptr;
  for (const MemoryLevel& l : memory) {
    if (l.source != "empirical") continue;
    if (s.working_set_bytes >= l.working_set_lo && s.working_set_bytes <= l.working_set_hi) return l.level;
    before_farthest = farthest;
    farthest = &l;
  }
  // Another probe's data sized past twice the nearer level's capacity (a FLOP probe's "4x L2") is
  // served from memory even below the memory plateau's first sampled size: a streaming kernel's
  // reuse distance is its working set, and LRU evicts each line before it comes back.
  if (farthest != nullptr && before_farthest != nullptr && before_farthest->capacity_bytes > 0 &&
      s.working_set_bytes >= 2 * before_farthest->capacity_bytes)
    return farthest->level;
  return "";
}

// The level an energy-phase row's bytes are served from: its target where that is a memory level
// (the phase kept each worker's share of the data in it), else where the bytes of its point's
// sweep rows at the whole device were served from.
std::string energy_row_level(const Sample& s, const EnergyShare& share, const std::vector<Sample>& samples,
                             const std::vector<MemoryLevel>& memory) {
  for (const MemoryLevel& l : memory)
    if (l.source == "empirical" && l.level == share.target) return l.level;
  for (const Sample& full : samples)
    if (full.phase.empty() && full.backend == s.backend && full.probe == s.probe && full.point == s.point &&
        full.params == s.params)
      return level_of(full, memory);
  return "";
}

struct PointLaunches {
  std::vector<const Sample*> launches;
  double seconds = 0;
};

// Rank of a FLOP type in the expected order of energy per FLOP (FP64 FMA, then 16-bit tensor,
// then 8-bit tensor); -1: not part of the check.
int flop_rank(const std::string& type) {
  if (type == "FP64.FMA") return 0;
  if (type.rfind("TENSOR.FP16.", 0) == 0 || type.rfind("TENSOR.BF16.", 0) == 0) return 1;
  if (type.rfind("TENSOR.FP8.", 0) == 0 || type.rfind("TENSOR.E4M3.", 0) == 0 || type.rfind("TENSOR.E5M2.", 0) == 0)
    return 2;
  return -1;
}

// Expected: each coefficient of `ordered` (most expensive first) above the next.
EnergyCheck falling(const std::string& what, const std::vector<const EnergyCoefficient*>& ordered, const char* unit) {
  EnergyCheck c;
  c.check = what;
  c.holds = true;
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    if (i > 0) {
      c.detail += " > ";
      if (!(ordered[i - 1]->value > ordered[i]->value)) c.holds = false;
    }
    c.detail += ordered[i]->name + " " + fmt("%.4g", ordered[i]->value);
  }
  c.detail += std::string(" ") + unit;
  return c;
}

void add_checks(EnergyModelSection& m) {
  // Bytes from farther levels cost more: longer wires, more of them, DRAM's row activations.
  if (m.pj_per_byte.size() >= 2) {
    std::vector<const EnergyCoefficient*> outward_first;
    for (auto it = m.pj_per_byte.rbegin(); it != m.pj_per_byte.rend(); ++it) outward_first.push_back(&*it);
    m.checks.push_back(falling("pJ/B falls from memory toward the core", outward_first, "pJ/B"));
  }
  // Narrower operands in denser units cost less per FLOP.
  std::vector<const EnergyCoefficient*> by_rank[3];
  for (const EnergyCoefficient& c : m.pj_per_flop)
    if (const int r = flop_rank(c.name); r >= 0) by_rank[r].push_back(&c);
  std::vector<const EnergyCoefficient*> flops;
  for (auto& group : by_rank)
    if (!group.empty()) flops.push_back(group.front());
  if (flops.size() >= 2)
    m.checks.push_back(falling("pJ/FLOP falls from FP64 FMA to 16-bit to 8-bit tensor", flops, "pJ/FLOP"));
  EnergyCheck positive{"every coefficient above 0", true, ""};
  auto look = [&](const std::string& name, double lo) {
    if (lo > 0) return;
    positive.holds = false;
    positive.detail += (positive.detail.empty() ? "" : ", ") + name + "'s interval reaches " + fmt("%.3g", lo);
  };
  for (const auto& c : m.pj_per_flop) look(c.name, c.ci95_lo);
  for (const auto& c : m.pj_per_byte) look(c.name, c.ci95_lo);
  look("constant power", m.constant_power_ci95_lo);
  if (positive.holds) positive.detail = "every 95% interval above 0";
  m.checks.push_back(positive);
}

void add_balances(EnergyModelSection& m, const Machine& machine) {
  // Against the device's memory: the level named so, else the farthest level fitted.
  const EnergyCoefficient* memory = nullptr;
  for (const EnergyCoefficient& c : m.pj_per_byte)
    if (c.name == machine.device.memory_name) memory = &c;
  if (memory == nullptr && !m.pj_per_byte.empty()) memory = &m.pj_per_byte.back();
  if (memory == nullptr || memory->value <= 0) return;
  const MemoryLevel* level = nullptr;
  for (const MemoryLevel& l : machine.memory)
    if (l.level == memory->name && l.gbs > 0) level = &l;
  if (level == nullptr) return;
  for (const EnergyCoefficient& f : m.pj_per_flop) {
    if (f.value <= 0) continue;
    auto c = std::find_if(machine.compute.begin(), machine.compute.end(),
                          [&](const ComputeCeiling& x) { return x.name == f.name && x.gflops > 0; });
    if (c == machine.compute.end()) continue;
    EnergyBalance b;
    b.flops = f.name;
    b.level = memory->name;
    b.time_flop_per_byte = c->gflops / level->gbs;
    b.energy_flop_per_byte = memory->value / f.value;
    // pJ of constant power per FLOP at the ceiling's rate and per byte at the level's.
    const double pi0_per_flop = m.constant_power_w / (c->gflops * 1e9) * 1e12;
    const double pi0_per_byte = m.constant_power_w / (level->gbs * 1e9) * 1e12;
    b.energy_with_constant_power_flop_per_byte = (memory->value + pi0_per_byte) / (f.value + pi0_per_flop);
    b.gap = b.energy_with_constant_power_flop_per_byte / b.time_flop_per_byte;
    m.balance.push_back(b);
  }
}

}  // namespace

void fit_energy_model(const std::vector<Sample>& samples, const FlopTypeOf& flop_type, Machine& machine) {
  const std::string counter = device_extra(machine.device, "energy_counter");
  if (counter.empty() || counter.rfind("none: ", 0) == 0) return;  // fit_energy said why
  const double min_seconds = energy_span_seconds(machine.device);

  std::map<std::pair<std::string, int>, PointLaunches> groups;
  int disturbed = 0, with_energy = 0;
  for (const Sample& s : samples) {
    if (s.energy_j <= 0) continue;
    ++with_energy;
    if (is_underfilled(s) || s.flags.find(kForeignLoadFlag) != std::string::npos) {
      ++disturbed;
      continue;
    }
    PointLaunches& g = groups[{s.backend + "/" + s.probe + "/" + s.phase, s.point}];  // as fit_energy
    g.launches.push_back(&s);
    g.seconds += s.seconds;
  }
  if (with_energy == 0) return;

  std::map<std::pair<std::string, int>, std::string> energy_levels;  // per energy phase and point
  const auto bytes_level = [&](const Sample& s) {
    const std::optional<EnergyShare> share = energy_share(s);
    if (!share) return level_of(s, machine.memory);
    const auto key = std::make_pair(s.phase, s.point);
    auto it = energy_levels.find(key);
    if (it == energy_levels.end())
      it = energy_levels.emplace(key, energy_row_level(s, *share, samples, machine.memory)).first;
    return it->second;
  };

  // The observations. A sweep point's launches lie between two counter readings: one. A phase's
  // windows are read back to back (one reading ends a window and starts the next), so each run of
  // consecutive windows that spans the counter's rule is an observation of its own; a shorter
  // tail joins the stretch before it.
  std::vector<PointLaunches> stretches;
  for (auto& [key, g] : groups) {
    if (g.launches.front()->phase.empty()) {
      stretches.push_back(g);
      continue;
    }
    std::stable_sort(g.launches.begin(), g.launches.end(),
                     [](const Sample* a, const Sample* b) { return a->sample < b->sample; });
    PointLaunches current;
    for (const Sample* s : g.launches) {
      current.launches.push_back(s);
      current.seconds += s->seconds;
      if (current.seconds >= min_seconds) {
        stretches.push_back(std::move(current));
        current = PointLaunches{};
      }
    }
    if (!current.launches.empty()) {
      if (stretches.empty() || stretches.back().launches.front()->phase != g.launches.front()->phase ||
          stretches.back().launches.front()->point != g.launches.front()->point) {
        stretches.push_back(std::move(current));  // the whole phase is shorter than the rule
      } else {
        PointLaunches& last = stretches.back();
        last.launches.insert(last.launches.end(), current.launches.begin(), current.launches.end());
        last.seconds += current.seconds;
      }
    }
  }

  int short_launches = 0;
  std::map<std::string, int> untyped;  // probe -> launches whose work has no term
  std::vector<EnergyPoint> points;
  std::vector<const PointLaunches*> used;
  for (const PointLaunches& g : stretches) {
    const int count = static_cast<int>(g.launches.size());
    if (g.seconds < min_seconds) {
      short_launches += count;
      continue;
    }
    EnergyPoint pt;
    std::string why;
    for (const Sample* s : g.launches) {
      if (s->flops > 0) {
        const std::string type = flop_type(*s);
        if (type.empty()) why = "FLOPs of no fitted type";
        pt.flops[type] += s->flops;
      }
      if (s->bytes > 0) {
        const std::string level = bytes_level(*s);
        if (level.empty()) why = "bytes from no single level";
        pt.bytes[level] += s->bytes;
      }
      if (s->flops <= 0 && s->bytes <= 0) why = "neither FLOPs nor bytes";
      pt.seconds += s->seconds;
      pt.energy_j += s->energy_j;
    }
    if (!why.empty()) {
      untyped[g.launches.front()->probe + ": " + why] += count;
      continue;
    }
    points.push_back(std::move(pt));
    used.push_back(&g);
  }

  std::string left_out;
  auto note = [&](int launches, const std::string& why) {
    if (launches > 0) left_out += (left_out.empty() ? "" : "; ") + std::to_string(launches) + " " + why;
  };
  note(short_launches, "in points shorter than " + fmt("%.3g", min_seconds) + " s");
  note(disturbed, "under foreign load or underfilled");
  for (const auto& [why, count] : untyped) note(count, "of probe " + why);
  if (!left_out.empty()) left_out = "of " + std::to_string(with_energy) + " launches with energy: " + left_out;

  // No point long enough for the counter, and no energy ceiling either: fit_energy has named that
  // one cause under missing:, and a second note would say it again.
  if (points.empty() && !machine.energy && short_launches > 0) return;

  std::vector<std::string> level_order;
  for (const MemoryLevel& l : machine.memory) level_order.push_back(l.level);
  const EnergyModelSolution sol = solve_energy_model(points, level_order);
  if (!sol.not_fitted.empty()) {
    machine.missing.push_back("energy model: not fitted: " + sol.not_fitted +
                              (left_out.empty() ? "" : " (" + left_out + ")"));
    return;
  }

  EnergyModelSection m;
  std::ostringstream how;
  how << "robust least squares (Huber, then Tukey bisquare) on relative residuals; one observation per sweep "
         "point (its launches share one counter reading) and per stretch of a phase's windows spanning "
      << fmt("%.3g", min_seconds) << " s; " << fmt("%.2g", sol.relative_scale) << " robust relative scale";
  m.fit = how.str();
  m.points = static_cast<int>(points.size());
  m.constant_power_w = sol.constant_power_w;
  m.constant_power_ci95_lo = sol.constant_power_ci95_lo;
  m.constant_power_ci95_hi = sol.constant_power_ci95_hi;
  m.pj_per_flop = sol.pj_per_flop;
  m.pj_per_byte = sol.pj_per_byte;
  m.left_out = left_out;

  // Each launch against the model: its own work and time, its share of the point's energy.
  std::vector<double> abs_residuals;
  for (const PointLaunches* g : used)
    for (const Sample* s : g->launches) {
      std::map<std::string, double> flops, bytes;
      if (s->flops > 0) flops[flop_type(*s)] = s->flops;
      if (s->bytes > 0) bytes[bytes_level(*s)] = s->bytes;
      const double r = (model_energy_j(m, flops, bytes, s->seconds) - s->energy_j) / s->energy_j;
      abs_residuals.push_back(std::abs(r));
      if (std::abs(r) <= kReproduceWithin) ++m.within_5pct;
      if (std::abs(r) >= std::abs(m.residual_worst) || m.worst_launch.empty()) {
        m.residual_worst = r;
        m.worst_launch = "probe " + s->probe + ", point " + std::to_string(s->point) + ", sample " +
                         std::to_string(s->sample) + " (" + params_to_string(s->params) + ")";
      }
    }
  m.launches = static_cast<int>(abs_residuals.size());
  m.residual_median_abs = median_of(std::move(abs_residuals));
  add_balances(m, machine);
  add_checks(m);
  machine.energy_model = std::move(m);
}

}  // namespace roofprobe
