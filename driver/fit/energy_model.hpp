// The energy model of Choi, Bedard, Fowler and Vuduc ("A roofline model of energy", IPDPS 2013):
//
//   E = sum_type W_type eps_type + sum_level Q_level eps_level + pi0 T
//
// W_type: FLOPs of each type a launch does, Q_level: bytes it is served from each memory level,
// T: its time; eps: energy per FLOP or byte beyond the constant power pi0. Fitted over every
// launch of a run whose energy was measured, robustly, with 95% intervals.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"

namespace roofprobe {

// The work of one point: its launches share one counter reading (driver/run/energy_counter.hpp),
// so they are one observation; each launch's energy_j is the point's energy shared by time.
struct EnergyPoint {
  std::map<std::string, double> flops;  // FLOP type -> FLOPs
  std::map<std::string, double> bytes;  // memory level -> bytes served from it
  double seconds = 0;
  double energy_j = 0;
};

// The coefficients fitted to a set of points, or why there are none.
struct EnergyModelSolution {
  std::string not_fitted;  // empty: fitted
  std::vector<EnergyCoefficient> pj_per_flop;
  std::vector<EnergyCoefficient> pj_per_byte;
  double constant_power_w = 0, constant_power_ci95_lo = 0, constant_power_ci95_hi = 0;
  double relative_scale = 0;   // robust scale of the points' relative residuals
  std::vector<double> weight;  // each point's final robust weight (0: rejected as an outlier)
};

// At least this many points per coefficient: the robust scale and the intervals need spare ones.
inline constexpr int kEnergyPointsPerCoefficient = 3;

// Fits the model to the points by iteratively reweighted least squares on relative residuals
// ((model - measured) / measured, since the counter's error and the energies' spread are
// relative): Huber weights from the least-squares start, then Tukey's bisquare at the Huber scale,
// which gives a grossly wrong point (a launch disturbed by something else) no weight at all.
// Intervals from the robust covariance (Huber 1981) with Student's t quantile.
// Not fitted (with why): too few points for the coefficients, or coefficients the points cannot
// tell apart (the scaled design's condition number above 1e6; the message names them).
EnergyModelSolution solve_energy_model(const std::vector<EnergyPoint>& points,
                                       const std::vector<std::string>& level_order = {});

// The model's energy for work and time, joules.
double model_energy_j(const EnergyModelSection& model, const std::map<std::string, double>& flops,
                      const std::map<std::string, double>& bytes, double seconds);

// Returns the FLOP type of a sample that does FLOPs (a compute ceiling's name), or "" when its
// FLOPs are of no type the fit knows.
using FlopTypeOf = std::function<std::string(const Sample&)>;

// Sets machine.energy_model from the sweep's launches with energy (the same points as
// fit_energy uses: long enough for the counter, no foreign load, not underfilled): a launch's
// FLOPs are of flop_type's type, its bytes are served from the memory level whose plateau holds
// its working set (a sample of a level's own probe: the level of its series). Points whose work
// the model has no term for are left out (energy_model.left_out counts them). Also the balances
// of each FLOP type against the last level and the ordering checks. When it cannot be fitted,
// machine.missing says why. Call after fit_energy.
void fit_energy_model(const std::vector<Sample>& samples, const FlopTypeOf& flop_type, Machine& machine);

}  // namespace roofprobe
