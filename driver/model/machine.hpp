// The machine file (schema roofprobe.machine/1): the fitted ceilings with their statistics and
// provenance. results/README.md is the reference for the format; this is its in-memory form.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "driver/model/document.hpp"
#include "driver/model/interval.hpp"
#include "kernels/contract/device_power.hpp"
#include "kernels/contract/probe.hpp"

namespace roofprobe {

inline constexpr const char* kMachineSchema = "roofprobe.machine/1";

// Statistics of the samples behind one ceiling.
struct Stats {
  double best = 0;    // the best sample (max rate)
  double median = 0;  // median over the samples
  double spread = 0;  // (max - min) / median over the samples, a fraction
  int samples = 0;
};

// A ceiling's sustained figure (docs/METHODOLOGY.md): its point looped for seconds after the
// sweep, in windows, until power and clock settle. Absent where the phase did not run.
struct SustainedFigure {
  double rate = 0;       // GFLOP/s (compute ceilings) or GB/s (memory levels): mean of the settled windows
  Interval ci95;         // 95% interval of the mean over the settled windows (unknown when not settled)
  bool settled = false;  // false: the phase ended at its time limit; `rate` is its last windows', not a ceiling
  double clock_mhz = 0;  // median clock of those windows (0: not measured)
  double power_w = 0;    // average power over them, where the device reported it (0: not read)
  // Energy per FLOP (compute) or per byte (memory), picojoules, from the energy counter over the
  // same windows, where every one of them read it (0: not measured); its 95% interval when settled.
  double pj_per_unit = 0;
  Interval pj_ci95;
  double seconds = 0;      // the phase's launches together
  int windows = 0;         // windows measured
  std::string throttled;   // every throttle reason the phase's launches recorded
  std::string limited_by;  // what bound it, as ComputeCeiling::limited_by
};

struct MemoryLevel {
  std::string level;                  // L1, L2, L3, DRAM, HBM, L2.b ...
  std::string source = "empirical";   // empirical | spec | published
  double gbs = 0;                     // GB/s, 1e9 bytes
  double gtxn_s = 0;                  // 32-byte transactions per second, 1e9
  double bytes_per_clk_per_unit = 0;  // bytes/clock/core (CPU) or /SM (GPU); 0 if no clock
  double working_set_lo = 0;          // bytes: the plateau's first and last sizes
  double working_set_hi = 0;
  Interval gbs_ci95;          // 95% interval of gbs from the level model (unknown: 0, 0)
  double capacity_bytes = 0;  // the knee to the next level (level model); 0: last level or none
  Interval capacity_ci95;
  // Why capacity_bytes lies far from the size the device reports for the cache the level is
  // named after (empty: it does not).
  std::string capacity_note;
  bool noisy = false;  // resting on samples flagged noisy only (see stats.spread)
  Stats stats;
  std::string probe;                        // "bandwidth"
  Params params;                            // the headline series' fixed parameters
  std::string headline_series;              // the series (access kernel) gbs comes from: "mode=rmw"
  std::map<std::string, double> by_series;  // every series at this level: "mode=copy" -> GB/s
  std::string citation;                     // reference files: where a published/spec value comes from
  // The device-memory level's sustained phase (GB/s); absent where it did not run.
  std::optional<SustainedFigure> sustained;
};

// Bytes of one transaction at a level: shared memory moves 128-byte wavefronts, every other
// level 32-byte sectors (docs/ARCHITECTURE.md, definitions).
inline int transaction_bytes(const MemoryLevel& level) { return level.level == "shared" ? 128 : 32; }

// One instruction's own ceiling for the work of a compute ceiling (tensor: mma.sync, wgmma, ...).
struct InstructionFigure {
  std::string instruction;  // what ran: "wgmma.mma_async ... m64n128k16 (sm_90a)"
  double gflops = 0;
  double instructions_gips = 0;
  double flops_per_instruction = 0;
  Stats stats;
  Params params;  // the point that gave it
};

struct ComputeCeiling {
  std::string name;  // FP64.FMA, FP32.noFMA, ...
  std::string source = "empirical";
  double gflops = 0;
  Interval gflops_ci95;           // 95% interval of gflops, the best point's median (unknown: 0, 0)
  double theoretical_gflops = 0;  // 0 when it cannot be derived
  double fraction_of_theoretical = 0;
  double clock_mhz = 0;  // the clock the theoretical figure uses
  bool noisy = false;    // resting on samples flagged noisy only (see stats.spread)
  // What lowered the clock while the ceiling's samples ran ("sw-power+hw-thermal", NVML's
  // throttle reasons); empty when nothing did or the device does not say.
  std::string throttled;
  // What bound it: "power cap 700 W", "temperature", "hardware slowdown" (from `throttled`) or
  // "clock" (nothing lowered it); empty where the device reports no throttle reasons.
  std::string limited_by;
  // Tensor ceilings (TENSOR.<in>.<acc>): instruction rate and the FLOPs one instruction does
  // (shape dependent, e.g. 512 for an m16n16k16 WMMA on V100); 0 for other ceilings.
  double instructions_gips = 0;
  double flops_per_instruction = 0;
  // Where several instructions do the same work (the tensor probe's api axis): the instruction of
  // the headline (the fastest, whose figures the fields above are) and every instruction's own
  // best, fastest first. Empty for ceilings with one way of doing the work.
  std::string instruction;
  std::vector<InstructionFigure> by_instruction;
  Stats stats;
  std::string probe;
  Params params;  // parameters of the point that gave the ceiling
  std::string citation;
  // The sustained phase's figure (GFLOP/s); absent where it did not run.
  std::optional<SustainedFigure> sustained;
};

// Peak warp-instruction throughput (GIPS = 1e9 warp instructions/s).
struct InstructionCeiling {
  double measured_gips = 0;
  double theoretical_gips = 0;  // SMs x schedulers x 1 x clock
  double clock_mhz = 0;
  Stats stats;
  std::string probe;
  std::string source = "empirical";
  std::string citation;
};

// Thread predication: warp GIPS vs thread GIPS (thread instructions / 32 per second).
struct PredicationPoint {
  int active_lanes = 32;
  double warp_gips = 0;
  double thread_gips = 0;
};

// An instruction-roofline wall: a vertical line at a fixed instruction intensity (warp
// instructions per transaction) set by the access pattern.
struct Wall {
  std::string pattern;               // global: "stride-0", "stride-1", "stride-8"; shared: "conflict-4"
  int word_bytes = 4;                // global walls
  int conflict_degree = 0;           // shared walls (1 = none, 32 = 32-way)
  double instruction_intensity = 0;  // theoretical: 1, 1/4, 1/8, 1/32 ...
  double measured_intensity = 0;     // 0 when not measured
  double gtxn_s = 0;                 // transaction rate measured at this pattern (0 if none)
  double warp_gips = 0;              // warp-instruction rate measured at this pattern (0 if none)
};

// The SM (core) clock measured by a clock probe under one load ("idle", "fp32_fma").
struct ClockReading {
  std::string load;
  double median_mhz = 0;
  double min_mhz = 0;
  double max_mhz = 0;
  int samples = 0;
  std::string probe;
};

// Ceilings measured with the grid (or the threads) restricted to `units` SMs (cores).
struct ScalingPoint {
  int units = 0;
  std::map<std::string, double> ceilings;  // "HBM" -> GB/s, "FP64.FMA" -> GFLOP/s
};

inline constexpr const char* kEnergySchema = "roofprobe.energy/1";

// One ceiling's energy, from the device's energy counter over the samples behind the ceiling.
struct EnergyFigure {
  std::string name;        // a compute ceiling ("FP64.FMA") or a memory level ("DRAM")
  double power_w = 0;      // average power over those samples
  double pj_per_flop = 0;  // compute ceilings: picojoules per FLOP (0 for levels)
  double pj_per_byte = 0;  // memory levels: picojoules per byte moved (0 for compute)
  double seconds = 0;      // sampled time the figure rests on
  int samples = 0;
};

// The machine file's `energy:` section (schema roofprobe.energy/1): what the counter is, the
// rule a point's energy was kept by, and each ceiling's figure.
struct EnergySection {
  std::string schema = kEnergySchema;
  std::string counter;           // what was read ("RAPL package-0+dram (powercap sysfs)")
  double update_seconds = 0;     // the counter's update interval, measured at the start of the run
  double idle_power_w = 0;       // the device's power at rest, measured at the start of the run
  double min_point_seconds = 0;  // a point's energy is used when its sampled launches last this long
  std::vector<EnergyFigure> ceilings;
};

inline constexpr const char* kEnergyModelSchema = "roofprobe.energy_model/1";

// One fitted coefficient of the energy model: the energy of one FLOP of a type or of one byte
// served from a level, beyond what the constant power already pays for.
struct EnergyCoefficient {
  std::string name;    // a FLOP type (a compute ceiling's name, "FP64.FMA") or a memory level ("DRAM")
  double value = 0;    // pJ/FLOP or pJ/B
  double ci95_lo = 0;  // 95% interval; the lower end may be below 0 (the data allow no energy)
  double ci95_hi = 0;
  int points = 0;  // points whose work has this term
};

// Choi et al.'s balances of one FLOP type against one memory level, in FLOP/B: the intensity at
// which the time (time_flop_per_byte = GFLOP/s / GB/s of the ceilings) or the energy (the
// level's pJ/B / the type's pJ/FLOP) of the FLOPs equals that of the bytes. With the constant
// power charged to each FLOP and byte at its ceiling's rate, the energy balance becomes
// energy_with_constant_power; gap = that / time balance (above 1: a kernel must be more intense
// to be energy-efficient than to be fast).
struct EnergyBalance {
  std::string flops;  // FLOP type
  std::string level;  // memory level
  double time_flop_per_byte = 0;
  double energy_flop_per_byte = 0;
  double energy_with_constant_power_flop_per_byte = 0;
  double gap = 0;
};

// A physical expectation about the fitted coefficients, reported rather than imposed.
struct EnergyCheck {
  std::string check;  // what is expected
  bool holds = false;
  std::string detail;  // the figures it rests on
};

// The machine file's `energy_model:` section (schema roofprobe.energy_model/1): the energy model
// E = sum_type W_type eps_type + sum_level Q_level eps_level + pi0 T (Choi, Bedard, Fowler, Vuduc,
// IPDPS 2013), fitted over the launches with energy (driver/fit/energy_model.hpp).
struct EnergyModelSection {
  std::string schema = kEnergyModelSchema;
  std::string fit;  // how it was fitted (loss, weighting, what a point is)
  int points = 0;   // points (groups of launches sharing one counter reading) fitted
  int launches = 0;
  double constant_power_w = 0;  // pi0
  double constant_power_ci95_lo = 0, constant_power_ci95_hi = 0;
  std::vector<EnergyCoefficient> pj_per_flop;  // per FLOP type
  std::vector<EnergyCoefficient> pj_per_byte;  // per memory level, nearest first
  // Each launch's relative residual (model - measured) / measured energy.
  double residual_median_abs = 0;
  double residual_worst = 0;  // the largest in magnitude, with its sign
  std::string worst_launch;   // "probe bandwidth, point 12, sample 3"
  int within_5pct = 0;        // launches the model reproduces within 5%
  std::vector<EnergyBalance> balance;
  std::vector<EnergyCheck> checks;
  std::string left_out;  // launches with energy the model does not use, and why (empty: none)
  // Every launch within 5%: the model reproduces the measured energy.
  bool reproduces_within_5pct() const { return launches > 0 && within_5pct == launches; }
};

inline constexpr const char* kPowerCapsSchema = "roofprobe.power_caps/1";

// One ceiling measured again under a power cap (roofprobe run --power-caps).
struct PowerCapCeiling {
  std::string name;  // a compute ceiling ("FP64.FMA", "TENSOR.FP16.FP32") or the device memory ("HBM")
  std::string kind;  // "compute" (rate in GFLOP/s) | "memory" (rate in GB/s)
  double rate = 0;
  Interval ci95;         // memory: the level model's 95% interval; compute and unknown: 0, 0
  double spread = 0;     // (max - min) / median of the samples behind the rate
  double clock_mhz = 0;  // the clock its samples ran at (0: not measured)
  std::string limited_by;
  int samples = 0;
};

// The ceilings measured under one cap, in the run's order of caps.
struct PowerCapResult {
  double cap_w = 0;
  std::vector<PowerCapCeiling> ceilings;
};

// The machine file's `power_caps:` section (schema roofprobe.power_caps/1): the ceilings a run
// measured again under each power limit it set; the rest of the file is what the device measured
// under its own limit (device.extra.power_limit_w).
struct PowerCapsSection {
  std::string schema = kPowerCapsSchema;
  double restored_w = 0;  // the limit the device had before the run, set again after it
  std::vector<PowerCapResult> caps;
};

struct Machine {
  std::string schema = kMachineSchema;
  bool complete = true;
  std::vector<std::string> missing;               // probes/ceilings not measured, with why
  std::map<std::string, std::string> provenance;  // tool, version, git, command, config, started, finished, host
  DeviceInfo device;
  // The file's `units:` as read (validate compares them with machine_units()); the writer
  // always writes machine_units().
  std::map<std::string, std::string> units_as_read;
  std::vector<MemoryLevel> memory;  // nearest level first
  std::vector<ComputeCeiling> compute;
  std::optional<InstructionCeiling> warp_gips;  // instructions.warp_gips
  std::vector<PredicationPoint> predication;    // instructions.predication
  std::vector<Wall> global_walls;               // walls.global
  std::vector<Wall> shared_walls;               // walls.shared
  std::vector<ScalingPoint> scaling;
  std::vector<ClockReading> clocks;
  std::optional<EnergySection> energy;             // absent: no energy counter was read (missing: says why)
  std::optional<EnergyModelSection> energy_model;  // absent: not fitted (missing: says why)
  std::optional<PowerCapsSection> power_caps;      // absent: the run set no power cap
};

// The `units:` block every machine file carries (decimal prefixes).
const std::map<std::string, std::string>& machine_units();

// A provenance entry of a machine file or run record; empty where there is no file or no entry.
inline std::string provenance_of(const Machine* m, const std::string& key) {
  if (m == nullptr) return {};
  const auto it = m->provenance.find(key);
  return it == m->provenance.end() ? std::string() : it->second;
}

// Serialises to YAML text (deterministic key order).
// The machine file as one ordered document tree: machine.yaml and `export --format json` are both
// printed from it.
doc::Value machine_document(const Machine& m);
std::string machine_to_yaml(const Machine& m);
// Writes atomically: a temp file in the same directory, fsync, rename. Throws on failure and
// leaves no partial file.
void write_machine_file(const Machine& m, const std::string& path);
// Reads a machine file; throws roofprobe::InputError ("file:line: ...") on malformed input.
Machine read_machine_file(const std::string& path);
// The same on text already in memory; `name` stands for the file in messages. InputError is
// the only exception it throws (tests/fuzz/machine_fuzz.cpp holds it to that).
Machine read_machine_text(const std::string& text, const std::string& name);
// Machine files larger than this are refused unread (generated ones are a few KiB; yaml-cpp
// takes about 0.3 s for 256 KiB of the densest YAML).
inline constexpr std::size_t kMaxMachineFileBytes = 256u << 10;

// read_machine_file for consumers (export, compare, plot): a file `validate` rejects is refused
// with its first problem, so nothing is computed from a file the schema does not hold.
Machine read_valid_machine_file(const std::string& path);

// Schema/type/finiteness checks. Returns human-readable problems (empty = valid).
std::vector<std::string> validate_machine_file(const std::string& path);

// Physical consistency of a readable machine file, as warnings with the key path: a nearer
// memory level slower than a farther one, a ceiling above its theoretical peak, units missing
// or different from this schema's. `roofprobe validate --strict` treats them as errors.
std::vector<std::string> physical_warnings(const std::string& path, const Machine& m);
std::vector<std::string> validate_machine_text(const std::string& text, const std::string& name);

}  // namespace roofprobe
