// The CPU backend: describes the machine with hwloc (cores, caches, memory), derives the
// theoretical FLOP peaks from the microarchitecture table (uarch.hpp) and the measured clock,
// and times launches with the monotonic clock, measuring the core clock around the launches
// that ask for it (core_clock.hpp).
#include <hwloc.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"
#include "kernels/cpu/core_clock.hpp"
#include "kernels/cpu/rapl.hpp"
#include "kernels/cpu/foreign_load.hpp"
#include "kernels/cpu/simd.hpp"
#include "kernels/cpu/uarch.hpp"

namespace roofprobe::cpu {
namespace {

struct Topology {
  int cores = 0;
  std::vector<CacheInfo> caches;
  std::uint64_t memory_bytes = 0;
  std::string model;
  std::string vendor;
};

Topology read_topology() {
  Topology t;
  hwloc_topology_t topo;
  hwloc_topology_init(&topo);
  hwloc_topology_load(topo);
  t.cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
  if (t.cores <= 0) t.cores = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L4CACHE};
  for (int i = 0; i < 4; ++i) {
    int n = hwloc_get_nbobjs_by_type(topo, levels[i]);
    if (n <= 0) continue;
    hwloc_obj_t obj = hwloc_get_obj_by_type(topo, levels[i], 0);
    if (obj->attr == nullptr || obj->attr->cache.size == 0) continue;
    // Skip instruction-only caches: data streams never see them.
    if (obj->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION) continue;
    t.caches.push_back(CacheInfo{"L" + std::to_string(i + 1), obj->attr->cache.size, n});
  }
  hwloc_obj_t root = hwloc_get_root_obj(topo);
  // hwloc sums the NUMA nodes' memory (sysfs node meminfo), which on some VMs counts less than
  // the kernel's total (a 24 GiB VM whose one node reported 5.7 GiB): the larger is the memory.
  const auto physical = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  t.memory_bytes = std::max<std::uint64_t>(root->total_memory, physical);
  hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
  if (pkg != nullptr) {
    if (const char* m = hwloc_obj_get_info_by_name(pkg, "CPUModel")) t.model = m;
    if (const char* v = hwloc_obj_get_info_by_name(pkg, "CPUVendor")) t.vendor = v;
  }
  hwloc_topology_destroy(topo);
  return t;
}

double max_clock_mhz() {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (in >> khz) return khz / 1000.0;
  return 0;
}

// The CPUs this process may run on, as it started: pinning the calling thread later narrows what
// the process sees, so this is read once. `first_of_each_core`: one CPU per core (its first
// allowed hardware thread), in topology order; `watched_with[i]`: that core's allowed hardware
// threads, whose use disturbs a thread pinned to the first.
struct AllowedCpus {
  std::vector<unsigned> first_of_each_core;
  std::vector<std::vector<unsigned>> watched_with;
};

const AllowedCpus& allowed_cpus() {
  static const AllowedCpus cpus = [] {
    AllowedCpus out;
    hwloc_topology_t topo;
    hwloc_topology_init(&topo);
    hwloc_topology_load(topo);
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, allowed, HWLOC_CPUBIND_PROCESS) != 0)
      hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(topo));
    const int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    for (int c = 0; c < cores; ++c) {
      hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, c);
      hwloc_bitmap_t usable = hwloc_bitmap_alloc();
      hwloc_bitmap_and(usable, core->cpuset, allowed);
      int first = hwloc_bitmap_first(usable);
      if (first >= 0) {
        out.first_of_each_core.push_back(static_cast<unsigned>(first));
        out.watched_with.push_back(cpus_of_their_cores(topo, allowed, {static_cast<unsigned>(first)}));
      }
      hwloc_bitmap_free(usable);
    }
    hwloc_bitmap_free(allowed);
    hwloc_topology_destroy(topo);
    return out;
  }();
  return cpus;
}

const std::vector<unsigned>& allowed_core_cpus() { return allowed_cpus().first_of_each_core; }

// The CPUs a foreign process on would disturb threads pinned to `cpus` (each the first of its
// core): theirs and their cores' other allowed hardware threads.
std::vector<unsigned> watched_cpus_of(const std::vector<unsigned>& cpus) {
  const AllowedCpus& allowed = allowed_cpus();
  std::vector<unsigned> out;
  for (std::size_t i = 0; i < allowed.first_of_each_core.size(); ++i)
    if (std::find(cpus.begin(), cpus.end(), allowed.first_of_each_core[i]) != cpus.end())
      out.insert(out.end(), allowed.watched_with[i].begin(), allowed.watched_with[i].end());
  std::sort(out.begin(), out.end());
  return out;
}

// Pins OpenMP thread t to the t-th allowed core, so first-touched data stays beside the thread
// that streams it and no two threads share a core. libgomp reads OMP_PROC_BIND/OMP_PLACES when
// it loads, before main() could set them, so the pinning is done here, explicitly; a user who
// set either variable keeps the runtime's own binding. Returns a description for the machine file.
std::string pin_threads(int threads) {
  if (std::getenv("OMP_PROC_BIND") != nullptr || std::getenv("OMP_PLACES") != nullptr)
    return "OpenMP runtime (OMP_PROC_BIND/OMP_PLACES set by the user)";
  const std::vector<unsigned>& cpus = allowed_core_cpus();
  if (cpus.empty()) return "none (no cores found)";
  std::string pinned;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num();
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpus[static_cast<std::size_t>(t) % cpus.size()], &one);
    sched_setaffinity(0, sizeof one, &one);  // 0: the calling thread
  }
  for (int t = 0; t < threads; ++t)
    pinned += (t ? "," : "") + std::to_string(cpus[static_cast<std::size_t>(t) % cpus.size()]);
  return "thread t on cpu " + pinned + " (one per core, pinned by roofprobe)";
}

class CpuBackend final : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  std::string unavailable_reason() const override { return {}; }

  int max_threads() const override { return read_topology().cores; }

  // The topology only (hwloc reads sysfs): no thread is pinned and no clock measured.
  DeviceInfo identify() override {
    const Topology t = read_topology();
    DeviceInfo d;
    d.backend = "cpu";
    d.kind = "cpu";
    d.name = t.model.empty() ? "unknown CPU" : t.model;
    d.vendor = t.vendor;
    return d;
  }

  DeviceInfo describe(int threads) override {
    Topology t = read_topology();
    threads_ = threads > 0 ? threads : t.cores;
    const std::string binding = pin_threads(threads_);  // before anything is measured
    run_cpus_.clear();
    if (std::getenv("OMP_PROC_BIND") == nullptr && std::getenv("OMP_PLACES") == nullptr) {
      const std::vector<unsigned>& cpus = allowed_core_cpus();
      for (int i = 0; i < threads_ && !cpus.empty(); ++i) {
        const unsigned cpu = cpus[static_cast<std::size_t>(i) % cpus.size()];
        if (std::find(run_cpus_.begin(), run_cpus_.end(), cpu) == run_cpus_.end()) run_cpus_.push_back(cpu);
      }
    }
    watched_cpus_ = watched_cpus_of(run_cpus_);
    DeviceInfo d;
    d.backend = "cpu";
    d.kind = "cpu";
    d.name = t.model.empty() ? "unknown CPU" : t.model;
    d.vendor = t.vendor;
    d.compute_units = std::min(threads_, t.cores);
    d.compute_unit_name = "cores";
    d.threads = threads_;
    d.caches = t.caches;
    d.memory_name = "DRAM";
    d.memory_bytes = t.memory_bytes;
    d.clock_max_mhz = max_clock_mhz();
    clock_.open(threads_);  // after pinning: the counters belong to the pool that runs launches
    d.clock_measured_mhz = measure_clock_mhz();
    d.extra["simd"] = kSimdName;
    d.extra["simd_bytes"] = std::to_string(kSimdBytes);
    d.extra["hardware_fma"] = kHardwareFma ? "yes" : "no";
    d.extra["cores_total"] = std::to_string(t.cores);
    d.extra["thread_binding"] = binding;
    d.extra["openmp_threads"] = std::to_string(threads_);
    d.extra["clock_method"] = clock_.method();
    add_theoretical_peaks(d);
    return d;
  }

  // Launches that ask for their clock (compute probes) are bracketed by the clock measurement;
  // with hardware counters every launch is, at no cost.
  // Points that time their own parallel phase (PreparedPoint::parallel_seconds) report that:
  // the time around launch() also holds waking the workers.
  double time_launch(PreparedPoint& point) override {
    last_clock_mhz_ = 0;
    double seconds = 0;
    const auto wants = point.launch_clock();
    if (clock_.counters() || wants != PreparedPoint::LaunchClock::not_needed) {
      const ChainLoad load = wants == PreparedPoint::LaunchClock::vector_fp ? ChainLoad::vector_fma : ChainLoad::scalar;
      seconds = clock_.time([&point] { point.launch(); }, last_clock_mhz_, load);
    } else {
      auto start = std::chrono::steady_clock::now();
      point.launch();
      seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    const double parallel = point.parallel_seconds();
    return parallel > 0 && parallel <= seconds ? parallel : seconds;
  }

  LaunchTelemetry last_launch_telemetry() const override { return {last_clock_mhz_, 0, {}}; }

  std::optional<double> energy_joules() override { return rapl().joules(); }
  EnergyCounterInfo energy_counter() const override {
    RaplEnergy& r = rapl();
    if (!r.unavailable_reason().empty()) return {false, "", r.unavailable_reason()};
    return {true, "RAPL " + r.domains() + " (powercap sysfs)", ""};
  }

  // All threads run the chain at once: the all-core clock is what the probes run at.
  double measure_clock_mhz() override { return clock_.chain_now(0.01); }

  // Other processes' time on the cores the threads are pinned to (every core when the user's
  // OpenMP binding placed them).
  ForeignUse foreign_use() override {
    // Pinned: every pinned CPU runs a thread, and a sibling hardware thread's load is the run's
    // loss too. Not pinned: the threads may be anywhere, and only CPUs beyond their count idle.
    if (watched_cpus_.empty())
      return read_foreign_use({}, static_cast<double>(::sysconf(_SC_NPROCESSORS_ONLN) - threads_), false);
    const bool own_cpus = static_cast<std::size_t>(threads_) <= run_cpus_.size();
    return read_foreign_use(watched_cpus_, static_cast<double>(run_cpus_.size()) - threads_, own_cpus);
  }
  // RAPL has package power limits too, but roofprobe drives only NVML's: a CPU run names why.
  PowerLimitControl* power_limit_control(std::string& why_not) override {
    why_not = "the cpu backend cannot set a power limit (only the cuda backend sets one, through NVML)";
    return nullptr;
  }

 private:
  // Opened on first use: the registry constructs every backend at start-up, and most commands
  // never measure. ROOFPROBE_POWERCAP_ROOT names another powercap directory: a container that
  // mounts the host's sysfs elsewhere, or a test's tree of zones.
  RaplEnergy& rapl() const {
    if (!rapl_) {
      const char* root = std::getenv("ROOFPROBE_POWERCAP_ROOT");
      rapl_ = root != nullptr && *root != '\0' ? std::make_unique<RaplEnergy>(root) : std::make_unique<RaplEnergy>();
    }
    return *rapl_;
  }
  mutable std::unique_ptr<RaplEnergy> rapl_;
  // Peak = cores x FLOP/cycle/core (uarch.hpp: pipes, datapath width, vector width) x clock.
  // The figures here are at the start-up clock; the fitter rescales each ceiling's to the clock
  // measured during that ceiling's own samples. Unknown cores get no figure and the reason.
  static void add_theoretical_peaks(DeviceInfo& d) {
    const CpuIdentity id = read_cpu_identity();
    d.extra["cpuid"] = describe_identity(id) + (id.vendor.empty() ? "" : " (" + describe_features(id.features) + ")");
    std::string why_not;
    if (d.clock_measured_mhz <= 0) why_not = "the core clock could not be measured on this ISA";
    if (!kHardwareFma) why_not = "built without hardware FMA (-march gives no FMA instructions)";
    const double ghz = d.clock_measured_mhz / 1000.0;
    const int vector_bits = static_cast<int>(kSimdBytes) * 8;
    // Xeons whose 512-bit FMA count depends on the SKU: the count is timed (uarch.hpp).
    Avx512FmaUnits units;
    if (vector_bits >= 512 && !core_peak(id, vector_bits, 64).known) {
      units = time_avx512_fma_units();
      if (units.units > 0) d.extra["avx512_fma_units"] = std::to_string(units.units) + " (" + units.method + ")";
    }
    for (auto [prec, bits] : {std::pair<const char*, int>{"FP64", 64}, {"FP32", 32}}) {
      const CorePeak peak = core_peak(id, vector_bits, bits, units);
      if (!peak.known && why_not.empty()) why_not = peak.why_unknown;
      if (!why_not.empty()) break;
      d.extra["uarch"] = peak.uarch;
      auto basis = [&](const std::string& rule) {
        std::ostringstream b;
        b.precision(4);
        b << d.compute_units << " cores x " << rule << " (" << peak.uarch << ", " << kSimdName
          << ") x the core clock measured during the ceiling's own samples (here " << ghz
          << " GHz, measured at start-up); source: " << peak.source;
        return b.str();
      };
      d.theoretical_gflops[std::string(prec) + ".FMA"] = d.compute_units * peak.fma_flops_per_cycle * ghz;
      d.theoretical_basis[std::string(prec) + ".FMA"] = basis(peak.fma_rule);
      d.theoretical_gflops[std::string(prec) + ".noFMA"] = d.compute_units * peak.nofma_flops_per_cycle * ghz;
      d.theoretical_basis[std::string(prec) + ".noFMA"] = basis(peak.nofma_rule);
    }
    if (!why_not.empty()) d.extra["theoretical_unknown"] = why_not;
  }

  CoreClock clock_;
  double last_clock_mhz_ = 0;
  int threads_ = 1;
  std::vector<unsigned> run_cpus_;      // the CPUs the threads are pinned to (empty: not pinned by roofprobe)
  std::vector<unsigned> watched_cpus_;  // those and their cores' other hardware threads
};

RP_REGISTER_BACKEND(CpuBackend);

}  // namespace
}  // namespace roofprobe::cpu
