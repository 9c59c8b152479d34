// Sweeps with energy built for the tests (synthetic, not a measurement): points of a device
// whose energy follows E = sum W eps_type + sum Q eps_level + pi0 T with known coefficients,
// with noise and outliers, and a machine file's levels and ceilings to fit them against.
// Shared by the energy tests (energy_test, energy_model_test, energy_phase_test, plot_power_test).
#pragma once

#include <algorithm>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "driver/fit/energy_model.hpp"
#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"
#include "driver/run/config.hpp"
#include "driver/run/energy_counter.hpp"

namespace roofprobe::energy_testing {

// Measurement settings for engine runs of a few launches (energy counters, phases): the noise
// bound loose and the time short, since the tests check the energy, not the rate.
inline MeasurementSettings quick_settings() {
  MeasurementSettings s;
  s.min_samples = 5;
  s.min_seconds = 0.05;
  s.max_noise = 0.5;
  s.timeout_seconds = 1;
  s.warmup_seconds = 0.001;
  s.target_launch_seconds = 0.01;
  return s;
}

// The device the series are built for, in J per FLOP or byte and W: an H100-like ordering of
// magnitudes (not a measurement; the test needs values, not a device's).
struct Truth {
  std::map<std::string, double> pj_per_flop{{"FP64.FMA", 20}, {"TENSOR.FP16.FP32", 1.5}};
  std::map<std::string, double> pj_per_byte{{"L1", 2}, {"L2", 10}, {"HBM", 40}};
  std::map<std::string, double> gflops{{"FP64.FMA", 60000}, {"TENSOR.FP16.FP32", 700000}};
  std::map<std::string, double> gbs{{"L1", 30000}, {"L2", 9000}, {"HBM", 3000}};
  double pi0_w = 120;

  double energy_j(const EnergyPoint& p) const {
    double e = pi0_w * p.seconds;
    for (const auto& [t, w] : p.flops) e += w * pj_per_flop.at(t) * 1e-12;
    for (const auto& [l, q] : p.bytes) e += q * pj_per_byte.at(l) * 1e-12;
    return e;
  }
};

// Points as a sweep gives them: each level at several occupancies (its rate from 30% to 100% of
// the ceiling), each FLOP type across intensities around its ridge against HBM (the time the
// slower of the two), each point lasting about 0.5 s.
inline std::vector<EnergyPoint> sweep_points(const Truth& truth) {
  std::vector<EnergyPoint> out;
  for (const auto& [level, gbs] : truth.gbs)
    for (double occupancy : {0.3, 0.45, 0.6, 0.75, 0.9, 1.0}) {
      EnergyPoint p;
      p.seconds = 0.5;
      p.bytes[level] = gbs * 1e9 * occupancy * p.seconds;
      out.push_back(p);
    }
  for (const auto& [type, gflops] : truth.gflops)
    for (double intensity : {0.5, 2.0, 8.0, 32.0, 128.0, 512.0, 2048.0}) {
      EnergyPoint p;
      const double flops = gflops * 1e9 * 0.5;  // half a second at the ceiling
      p.flops[type] = flops;
      p.bytes["HBM"] = flops / intensity;
      p.seconds = std::max(flops / (gflops * 1e9), p.bytes["HBM"] / (truth.gbs.at("HBM") * 1e9));
      out.push_back(p);
    }
  return out;
}

// The energies with relative Gaussian noise `sigma`, and every `outlier_every`-th point's
// energy raised by half (another process's energy in the counter).
inline void measure(std::vector<EnergyPoint>& points, const Truth& truth, double sigma, int outlier_every,
                    std::mt19937& rng) {
  std::normal_distribution<double> noise(0, sigma);
  for (std::size_t i = 0; i < points.size(); ++i) {
    points[i].energy_j = truth.energy_j(points[i]) * (1 + noise(rng));
    if (outlier_every > 0 && i % static_cast<std::size_t>(outlier_every) == 3) points[i].energy_j *= 1.5;
  }
}

// A machine fitted from a sweep of those points, each point's energy shared among five launches
// by their time as the engine does.
struct Sweep {
  Machine machine;
  std::vector<Sample> samples;
};

inline Sweep sweep_with_energy(const Truth& truth, double sigma) {
  Sweep out;
  Machine& m = out.machine;
  m.device.kind = "gpu";
  m.device.name = "synthetic GPU (tests/unit/energy_sweep_support.hpp)";
  m.device.memory_name = "HBM";
  m.device.extra[kEnergyCounterKey] = "NVML total energy (synthetic)";
  m.device.extra[kEnergyUpdateKey] = "0.001";
  double lo = 1e4;
  for (const std::string level : {"L1", "L2", "HBM"}) {
    MemoryLevel l;
    l.level = level;
    l.gbs = truth.gbs.at(level);
    l.probe = "bandwidth";
    l.params = {{"mode", "read"}};
    l.working_set_lo = lo;
    l.working_set_hi = lo * 10;
    l.capacity_bytes = lo * 20;  // the knee between this plateau and the next
    lo *= 100;
    m.memory.push_back(l);
  }
  for (const auto& [type, gflops] : truth.gflops) {
    ComputeCeiling c;
    c.name = type;
    c.gflops = gflops;
    c.probe = type == "FP64.FMA" ? "flops" : "tensor";
    m.compute.push_back(c);
  }
  std::mt19937 rng(13);
  std::vector<EnergyPoint> points = sweep_points(truth);
  measure(points, truth, sigma, 0, rng);
  int point = 0;
  for (const EnergyPoint& p : points) {
    const int launches = 5;
    for (int i = 0; i < launches; ++i) {
      Sample s;
      s.backend = "cuda";
      s.point = point;
      s.sample = i;
      s.seconds = p.seconds / launches;
      s.energy_j = p.energy_j / launches;
      if (p.flops.empty()) {
        s.probe = "bandwidth";
        const std::string level = p.bytes.begin()->first;
        const MemoryLevel& l =
            *std::find_if(m.memory.begin(), m.memory.end(), [&](const MemoryLevel& x) { return x.level == level; });
        s.params = {{"mode", "read"}};
        s.working_set_bytes = l.working_set_lo * 2;
        s.bytes = p.bytes.begin()->second / launches;
      } else {
        s.probe = p.flops.begin()->first == "FP64.FMA" ? "flops" : "tensor";
        s.params = {{"intensity", std::to_string(point)}};
        // Past twice L2's capacity (2e7), below HBM's first plateau size (1e8): served from HBM.
        s.working_set_bytes = 5e7;
        s.flops = p.flops.begin()->second / launches;
        s.bytes = p.bytes.at("HBM") / launches;
      }
      out.samples.push_back(s);
    }
    ++point;
  }
  return out;
}

inline std::string type_of(const Sample& s) { return s.probe == "flops" ? "FP64.FMA" : "TENSOR.FP16.FP32"; }

}  // namespace roofprobe::energy_testing
