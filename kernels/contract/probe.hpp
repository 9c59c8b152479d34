// The probe contract: what a probe declares as data (axes, work per launch, verification, the
// ceilings it feeds) and the two small interfaces the measurement engine drives.
//
// A probe is one file under kernels/ that defines a Probe subclass and registers it with
// RP_REGISTER_PROBE. Nothing in driver/ changes for a new probe: the config loader validates its
// axes, the plan enumerates them, the engine times prepared points through the backend, and the
// fitter reads its FeedSpecs.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/contract/power_limit.hpp"

namespace roofprobe {

// One point's parameters, axis name -> canonical text ("fp64", "1048576"). Text keeps the plan,
// sweep.csv and resume comparisons exact; typed access goes through the helpers below.
using Params = std::map<std::string, std::string>;

std::int64_t param_int(const Params& p, const std::string& axis);
double param_real(const Params& p, const std::string& axis);
const std::string& param_text(const Params& p, const std::string& axis);
std::string params_to_string(const Params& p);       // "a=1;b=fp64" (sorted by axis)
Params params_from_string(const std::string& text);  // inverse; throws on malformed text

enum class AxisType {
  Integer,  // counts: 1, 2, 1024
  Bytes,    // sizes: 4096, "4KiB", "1GiB"; may be swept geometrically {min, max, points_per_octave}
  Choice,   // one of `choices`
};

struct Axis {
  std::string name;
  AxisType type = AxisType::Integer;
  std::string help;
  std::vector<std::string> choices;  // Choice: the allowed values
  double min = 0;                    // Integer/Bytes: inclusive bounds
  double max = std::numeric_limits<double>::max();
  std::vector<std::string> defaults;  // used when the config does not set the axis
};

// Work of ONE launch, declared by the probe from its parameters. The engine derives every rate
// from it and the measured time, in one place (engine.cpp), so no probe computes a rate.
struct Work {
  double bytes_read = 0;
  double bytes_written = 0;
  double flops = 0;
  double transactions = 0;       // 32-byte sectors (global/L2/HBM), per docs/ARCHITECTURE.md
  double shared_wavefronts = 0;  // 128-byte shared-memory wavefronts
  double warp_instructions = 0;  // GPU: warp instructions (all classes); CPU: 0 (not counted)
  double working_set_bytes = 0;  // bytes the launch cycles through (all arrays, all workers)
  // SM clock cycles one launch lasts, fixed by the kernel (it spins on clock64() for this many
  // cycles): the engine then derives each sample's clock as cycles / seconds. 0: not a clock probe.
  double clock_cycles = 0;
  // True when the launch has fewer work items than threads (some threads idle): the point then
  // measures how many accesses the launch keeps in flight, not the memory level, and the sample
  // is flagged `underfilled` (the level fit leaves it out; sweep.csv and the plots keep it).
  bool underfilled = false;
  double bytes() const { return bytes_read + bytes_written; }
};

// The rates of `work` done in `seconds`, in the units of sweep.csv and the machine file (1e9 per
// second: GB/s, GFLOP/s, GTXN/s of 32-byte sectors, warp GIPS, shared wavefronts). The one place
// a rate is derived: the engine's samples, the fleet's aggregates and the GPU tests use it.
struct Rates {
  double gbs = 0, gflops = 0, gtxn_s = 0, gips = 0, shared_gtxn_s = 0;
};
inline double per_second_1e9(double amount, double seconds) { return seconds > 0 ? amount / seconds / 1e9 : 0; }
inline Rates rates_of(const Work& w, double seconds) {
  return {per_second_1e9(w.bytes(), seconds), per_second_1e9(w.flops, seconds), per_second_1e9(w.transactions, seconds),
          per_second_1e9(w.warp_instructions, seconds), per_second_1e9(w.shared_wavefronts, seconds)};
}

// Result of comparing what a launch produced with what the host predicts.
struct Check {
  bool ok = true;
  std::string detail;  // on failure: expected vs got
};

// How the fitter turns a probe's samples into ceilings.
// Metrics (sweep.csv columns) a feed may name: gbs, gflops, gtxn_s (32-byte sectors/s, 1e9),
// gips (warp instructions/s, 1e9), shared_gtxn_s (128-byte shared wavefronts/s, 1e9),
// clock_mhz, seconds.
enum class FeedKind {
  MemoryLevels,    // plateaus of `metric` over `x_axis` -> memory levels (L1, L2, ..., DRAM)
  ComputeCeiling,  // maximum of `metric` per series -> one compute ceiling per series; where the
                   // samples count warp instructions (tensor MMAs), the ceiling also carries
                   // instructions_gips and flops_per_instruction
  NamedLevel,      // best point of the primary series -> one memory level named `level_name`
                   // ("shared", "system"); the other series' bests are its by_series
  WarpGips,        // best `gips` point -> instructions.warp_gips (theory: SMs x schedulers x clock)
  Predication,     // best `gips` per value of `x_axis` (active lanes) -> instructions.predication
  Walls,           // per series, the best point -> one wall of `wall_set` ("global" | "shared"):
                   // pattern name from `name_pattern`, intensity = warp instructions per
                   // transaction (shared: per wavefront) from the probe's accounting
  Scaling,         // per value of `x_axis` (SMs used) and series: best `metric` -> scaling[],
                   // the series named by `name_pattern` ("HBM", "FP64.FMA")
  Clock,           // per series: the samples' clock_mhz -> clocks[] (named by `name_pattern`)
};

struct FeedSpec {
  FeedKind kind = FeedKind::MemoryLevels;
  std::string metric = "gbs";                // column of sweep.csv: gbs | gflops | gtxn_s
  std::string x_axis = "working_set_bytes";  // MemoryLevels: the swept size axis
  std::vector<std::string> series_axes;      // axes that split samples into series
  // MemoryLevels: which series defines the level boundaries ("mode=read"); the other series
  // are reported per level as `by_series`. Empty: the first series.
  std::string primary_series;
  // MemoryLevels: which levels each series' kernel reaches (the first matching rule applies; a
  // series no rule matches is named by its knees alone).
  struct SeriesReach {
    std::string params;       // "axis=value;..." the series must have; "" matches every series
    std::string first_level;  // the nearest level it reaches ("cache_op=cg" -> "L2": it bypasses L1)
    // Past its first level it measures mixtures, not levels: only its first level and memory
    // are published from it (an H100's ca read past its L1s still hits L1 three times in four,
    // as Nsight Compute counts it).
    bool first_level_only = false;
  };
  std::vector<SeriesReach> series_reach;
  // ComputeCeiling: ceiling name from the series' parameters, e.g. "{precision}.{form}" with
  // upper-casing applied -> "FP64.FMA".
  std::string name_pattern;
  // ComputeCeiling: an axis whose values are different instructions doing the same work (the
  // tensor probe's "api": mma.sync, WMMA, wgmma, tcgen05). The ceiling is the fastest of them;
  // each value's own best is kept beside it (by_instruction), described by instruction_text:
  // keyed by the point's series and instruction axes ("api=mma;type=fp64.fp64"), else by the
  // instruction axis' value alone ("mma").
  std::string instruction_axis;
  std::map<std::string, std::string> instruction_text;
  std::string level_name;  // NamedLevel: the memory level's name
  std::string wall_set;    // Walls: "global" | "shared"
};

// Facts about the device a backend runs on; written to the machine file's `device:` section and
// used to name memory levels and compute theoretical peaks.
struct CacheInfo {
  std::string name;         // "L1", "L2", "L3"
  std::uint64_t bytes = 0;  // one instance
  int instances = 1;        // how many on the device (per core: the core count)
};

struct DeviceInfo {
  std::string backend;  // "cpu" | "cuda"
  std::string kind;     // "cpu" | "gpu"
  std::string name;
  std::string vendor;
  int compute_units = 0;             // CPU cores used / GPU SMs
  std::string compute_unit_name;     // "cores" | "multiprocessors"
  int threads = 0;                   // OpenMP threads (CPU)
  std::vector<CacheInfo> caches;     // nearest first
  std::string memory_name = "DRAM";  // the last level's name: DRAM | HBM | GDDR
  std::uint64_t memory_bytes = 0;
  double clock_max_mhz = 0;                  // nominal/boost; 0 when unknown
  double clock_measured_mhz = 0;             // measured during the run
  std::map<std::string, std::string> extra;  // ISA, compute capability, driver, ...
  // Theoretical compute peaks at the measured clock, GFLOP/s, keyed by ceiling name
  // ("FP64.FMA"); filled by the backend that knows the SIMD width and pipe counts.
  std::map<std::string, double> theoretical_gflops;
  // How the theoretical figures were derived (one line per ceiling), for provenance.
  std::map<std::string, std::string> theoretical_basis;
};

// Records why the ceiling `ceiling` ("FP64.FMA") has no theoretical peak on this device:
// device.extra "theoretical_unknown.<ceiling>", which the fitter lists under missing: beside the
// measured ceiling as "<ceiling>: no theoretical peak: <why>" (so a table's "unknown: " goes).
inline void say_peak_unknown(DeviceInfo& dev, const std::string& ceiling, const std::string& why) {
  const std::string prefix = "unknown: ";
  dev.extra["theoretical_unknown." + ceiling] = why.rfind(prefix, 0) == 0 ? why.substr(prefix.size()) : why;
}

// Bytes of all instances of the cache `name` ("L2") the device reports; 0 when it reports none.
inline std::uint64_t cache_bytes(const DeviceInfo& dev, const std::string& name) {
  for (const CacheInfo& c : dev.caches)
    if (c.name == name) return c.bytes * static_cast<std::uint64_t>(c.instances);
  return 0;
}

// One point ready to run: buffers allocated, first-touched and initialised.
class PreparedPoint {
 public:
  virtual ~PreparedPoint() = default;
  virtual Work work() const = 0;  // per launch
  virtual void launch() = 0;      // one launch; the backend's timer brackets it
  virtual Check verify() = 0;     // after the launches so far; must be cheap enough to run once per point
  // Repetitions of the whole working set inside one launch. After the warm-up the engine raises
  // it so one launch lasts about `target_launch_seconds` (timer resolution, launch overhead);
  // work() and verify() must follow the current value. Probes with a fixed amount of work per
  // launch keep the defaults.
  virtual void set_repetitions(std::int64_t reps) { (void)reps; }
  virtual std::int64_t repetitions() const { return 1; }
  // Whether the point feeds a ceiling whose theoretical peak scales with the core clock, and what
  // its launches keep the cores busy with: the backend then measures the clock around each launch
  // (Backend::last_launch_telemetry) even where that costs time (CPU without cycle counters: a
  // short clock chain per launch, run under the same kind of work, because many x86 cores clock
  // lower while they run wide vector floating point than while they run scalar code).
  enum class LaunchClock { not_needed, scalar, vector_fp };
  virtual LaunchClock launch_clock() const { return LaunchClock::not_needed; }
  // Seconds the last launch's parallel phase lasted, timed by the launch itself from the moment
  // all its workers were running (an OpenMP barrier) to the end of the last one; 0: not timed.
  // CPU backends use it instead of the time around launch(), so waking a worker that another
  // process had displaced is not counted as streaming time (likwid-bench starts its timers
  // after a barrier too).
  virtual double parallel_seconds() const { return 0; }
};

// The point a probe offers the fleet (driver/fleet): under MPI every rank runs it at the same
// moment, and fleet.yaml reports the node's and the job's total rate. Among the plan's points of
// the probe whose axes equal `select`, the one with the largest `largest_axis` is run.
struct FleetAggregate {
  enum class Kind {
    None,     // the probe offers none
    Memory,   // GB/s of the device's memory (its memory_name: DRAM, HBM)
    Compute,  // GFLOP/s of the ceiling `ceiling`
  };
  Kind kind = Kind::None;
  std::string ceiling;  // Compute: "FP64.FMA"
  Params select;        // e.g. {mode: read}; {precision: fp64, form: fma}
  std::string largest_axis;
};

struct ProbeInfo {
  std::string name;     // "flops", "bandwidth": the contract names
  std::string backend;  // "cpu" | "cuda"
  std::string description;
  std::vector<Axis> axes;
  std::vector<FeedSpec> feeds;
  FleetAggregate fleet;
};

class Probe {
 public:
  virtual ~Probe() = default;
  virtual const ProbeInfo& info() const = 0;
  // Empty when the device can run this point; otherwise why not (logged, never silent).
  virtual std::string unsupported_reason(const Params&, const DeviceInfo&) const { return {}; }
  // False when the point's combination does not exist on this device at all (an instruction
  // shape without that type, code for another architecture): it is not planned and is no gap of
  // the run (`roofprobe list --arch` shows what exists). A combination that exists but cannot run
  // here (a binary built without its code, an unknown device) stays true, and unsupported_reason
  // names it under missing:.
  virtual bool exists_on(const Params&, const DeviceInfo&) const { return true; }
  // Bytes the point will allocate, for checks against device memory before anything runs.
  virtual std::uint64_t footprint_bytes(const Params&) const = 0;
  virtual std::unique_ptr<PreparedPoint> prepare(const Params&, const DeviceInfo&) const = 0;
  // True when prepare() spreads the point's work over device.threads workers, each on its own
  // share of the data, and a `working_set_bytes` axis counts all the workers' shares together:
  // the energy phase (driver/session/energy_phase.hpp) then runs the point on k of the device's
  // n workers by preparing it for a device of k threads, with the working set scaled by k / n
  // where a cache level's point must keep each worker's share. False: every launch fills the
  // device it is prepared for, and only a backend that confines launches (Backend::confine: a
  // GPU's green contexts) runs it on part of the device.
  virtual bool runs_on_fewer_workers() const { return false; }
  // Theoretical peaks of the ceilings this probe feeds, at dev.clock_measured_mhz, added to
  // dev.theoretical_gflops / theoretical_basis under the ceiling's name ("FP16.FMA",
  // "TENSOR.FP16.FP32"). The backend calls it for each of its probes at the end of describe(),
  // so a probe that knows its peak needs no edit elsewhere. Unknown: add nothing.
  virtual void add_theoretical_peaks(DeviceInfo& dev) const { (void)dev; }
};

// What the device reported over one launch; 0 / empty: not reported.
struct LaunchTelemetry {
  double clock_mhz = 0;  // core / SM clock while the launch ran
  double power_w = 0;    // board power NVML reports right after the launch (a 1 s average on Ampere and later)
  std::string throttle;  // what lowered the clock while it ran ("sw-power+hw-thermal"); empty: nothing
};

// What a backend's energy counter is (Backend::energy_joules).
struct EnergyCounterInfo {
  bool available = false;
  std::string what;     // what it measures, e.g. "RAPL package-0+dram"
  std::string why_not;  // when unavailable: the reason, for missing:
};

// Other processes' use of the device, read now (Backend::foreign_use). The run reads it before and
// after each point: a ceiling measured while another process used the device is retried, then
// marked and named under missing:, never published as the device's own.
struct ForeignUse {
  bool known = false;  // false: the backend cannot tell (nothing is flagged)
  // true: busy_seconds is measured (CPU); false: any process in `processes` is foreign use (GPU).
  bool measures_time = false;
  // Cumulative seconds other processes ran on the device since an arbitrary origin: CPU: busy
  // time of the CPUs the run's threads are pinned to and their cores' other hardware threads,
  // minus this process's own time.
  double busy_seconds = 0;
  double idle_slack = 0;  // cores in that set the run does not use (foreign time there costs nothing)
  // How far busy_seconds may be off between two readings without anyone else running: the kernel
  // counts each CPU's busy time in clock ticks, so one tick per CPU counted, and one for this
  // process's own time (CPU: (CPUs + 1) / CLK_TCK).
  double resolution_seconds = 0;
  // CPU, where `measures_wait`: cumulative seconds the run's threads were ready to run and waited
  // for their CPU (the scheduler's run-queue delay, counted in nanoseconds). Another process on
  // the run's cores shows here on a point too short for busy_seconds' ticks to tell it. Measured
  // only where each thread has a CPU of its own (else they wait for each other) and the kernel
  // keeps per-thread scheduler statistics.
  bool measures_wait = false;
  double waited_seconds = 0;
  // Other processes on the device now, "pid name" (GPU: NVML compute processes; CPU: running
  // processes last seen on the run's cores); empty when none or unknown.
  std::vector<std::string> processes;
};

// While alive, the calling thread's launches run on part of the device only (Backend::confine).
class Confinement {
 public:
  virtual ~Confinement() = default;
  virtual int workers() const = 0;  // the workers the launches run on (a GPU's SMs)
};

// A backend owns a device: it describes it and times launches with the device's own clock.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Empty when usable on this machine; otherwise why not ("no CUDA device: ...").
  virtual std::string unavailable_reason() const = 0;
  // Who the device is, without using it: kind, name and what its lock is named after (a GPU's
  // UUID), read without a context, a kernel or any busy work. A run reads it before it takes the
  // device's lock (driver/run/device_lock.hpp); describe() runs kernels, and a run that waits
  // for another must not show up in the holder's foreign-load checks.
  virtual DeviceInfo identify() = 0;
  // Describes the device; `threads` <= 0 means all cores (CPU). Measures the clock.
  virtual DeviceInfo describe(int threads) = 0;
  // Seconds one launch took, measured with the backend's clock (CUDA events on GPUs).
  virtual double time_launch(PreparedPoint& point) = 0;
  // Clock measured right now, MHz (0 if the backend cannot measure it).
  virtual double measure_clock_mhz() = 0;
  // What the device reported during the last time_launch(): its clock, power and throttle
  // reasons. The CPU backend measures the clock where it is free (cycle counters) or the point
  // asks (PreparedPoint::launch_clock); the CUDA backend reads NVML during every launch
  // where the driver has it. 0 / empty: not measured.
  virtual LaunchTelemetry last_launch_telemetry() const { return {}; }
  // The device's cumulative energy counter, joules since an arbitrary origin (NVML's total
  // energy on Volta and later GPUs; RAPL's package and DRAM domains on CPUs), corrected for
  // wrap-around. The engine reads it around each point's sampled launches. nullopt when the
  // device has no readable counter; energy_counter() then says why.
  virtual std::optional<double> energy_joules() { return std::nullopt; }
  // What the counter measures ("NVML total energy (board)", "RAPL package-0+dram") or, when
  // there is none, why not.
  virtual EnergyCounterInfo energy_counter() const {
    return {false, "", "the " + name() + " backend reads no energy counter"};
  }
  // After a DeviceFault: makes the device usable again (a GPU reset); false when it cannot.
  virtual bool recover() { return false; }
  // Threads the device runs without oversubscribing (CPU: the cores hwloc reports); 0 when the
  // backend has no thread count.
  virtual int max_threads() const { return 0; }
  // Other processes' use of the device now (see ForeignUse); unknown by default.
  virtual ForeignUse foreign_use() { return {}; }
  // Confining launches to part of the device, for the energy phase (driver/session/energy_phase.hpp):
  // the number of workers the backend grants when `wanted` of them are asked for, the nearest it
  // can at or above `wanted` (a GPU partitions its SMs in steps: 8 on Hopper); 0 when it cannot
  // confine launches. The CPU backend cannot: its probes spread their work over
  // DeviceInfo::threads instead (Probe::runs_on_fewer_workers).
  virtual int confinable_workers(int wanted) {
    (void)wanted;
    return 0;
  }
  // Runs the calling thread's later launches, and the buffers and points prepared meanwhile, on
  // confinable_workers(workers) of the device's workers until the handle is destroyed. Throws
  // std::runtime_error when the backend cannot, or when a check shows the launches would spread
  // wider.
  virtual std::unique_ptr<Confinement> confine(int workers) {
    (void)workers;
    throw std::runtime_error("the " + name() + " backend cannot confine launches to part of the device");
  }
  // The device's power-limit control (roofprobe run --power-caps; kernels/contract/power_limit.hpp),
  // or nullptr with `why_not` saying why there is none.
  virtual PowerLimitControl* power_limit_control(std::string& why_not) {
    why_not = "the " + name() + " backend cannot set a power limit";
    return nullptr;
  }
};

// ---- device faults ----------------------------------------------------------------------------
// Thrown by backends and probes (kernels/cuda/backend/cuda_support.hpp maps CUDA errors onto them) so the driver can
// tell a point that does not fit from a device that is broken, and react to each.

// The point's buffers do not fit in device memory: the sweep of this probe stops at the largest
// size that fits (larger points are skipped with the reason), the run goes on.
class DeviceOutOfMemory : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A sticky device error (illegal address, launch failure, ...): the device context is unusable.
// The probe ends; the backend tries Backend::recover() before the next probe, and the run stops,
// keeping everything measured, when that fails.
class DeviceFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// ---- registry -------------------------------------------------------------------------------
class Registry {
 public:
  static Registry& instance();
  void add_probe(std::unique_ptr<Probe> probe);
  void add_backend(std::unique_ptr<Backend> backend);
  std::vector<const Probe*> probes(const std::string& backend = {}) const;  // sorted by name
  const Probe* probe(const std::string& backend, const std::string& name) const;
  std::vector<Backend*> backends() const;
  Backend* backend(const std::string& name) const;

 private:
  std::vector<std::unique_ptr<Probe>> probes_;
  std::vector<std::unique_ptr<Backend>> backends_;
};

namespace detail {
struct ProbeRegistrar {
  explicit ProbeRegistrar(std::unique_ptr<Probe> p) { Registry::instance().add_probe(std::move(p)); }
};
struct BackendRegistrar {
  explicit BackendRegistrar(std::unique_ptr<Backend> b) { Registry::instance().add_backend(std::move(b)); }
};
}  // namespace detail

}  // namespace roofprobe

#define RP_CONCAT_INNER(a, b) a##b
#define RP_CONCAT(a, b) RP_CONCAT_INNER(a, b)
// Registers a probe at static-initialisation time. Probe libraries are OBJECT libraries so
// the linker keeps these registrars.
#define RP_REGISTER_PROBE(Type) \
  static ::roofprobe::detail::ProbeRegistrar RP_CONCAT(rp_probe_registrar_, __LINE__) { std::make_unique<Type>() }
#define RP_REGISTER_BACKEND(Type) \
  static ::roofprobe::detail::BackendRegistrar RP_CONCAT(rp_backend_registrar_, __LINE__) { std::make_unique<Type>() }
