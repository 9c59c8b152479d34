// The CPU backend: describes the machine with hwloc (cores, caches, memory), measures the core
// clock with a dependent-add chain on every core at once, derives the theoretical FLOP peaks
// at that clock, and times launches with the monotonic clock.
#include <hwloc.h>
#include <omp.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/common/probe.hpp"
#include "kernels/cpu/simd.hpp"

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
  const hwloc_obj_type_t levels[] = {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE,
                                     HWLOC_OBJ_L4CACHE};
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
  t.memory_bytes = root->total_memory;
  if (t.memory_bytes == 0)
    t.memory_bytes = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
  if (pkg != nullptr) {
    if (const char* m = hwloc_obj_get_info_by_name(pkg, "CPUModel")) t.model = m;
    if (const char* v = hwloc_obj_get_info_by_name(pkg, "CPUVendor")) t.vendor = v;
  }
  hwloc_topology_destroy(topo);
  return t;
}

// Family/model from /proc/cpuinfo (x86), to know whether FADD has pipes of its own.
struct CpuId {
  int family = -1;
  int model = -1;
};

CpuId read_cpuid() {
  CpuId id;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    auto value = [&]() { return std::atoi(line.substr(line.find(':') + 1).c_str()); };
    if (line.rfind("cpu family", 0) == 0 && id.family < 0) id.family = value();
    if (line.rfind("model\t", 0) == 0 && id.model < 0) id.model = value();
  }
  return id;
}

double max_clock_mhz() {
  std::ifstream in("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (in >> khz) return khz / 1000.0;
  return 0;
}

// One dependent add per cycle: `kAddsPerIteration` adds form a chain whose length in cycles is
// the number of adds (latency 1 on every x86-64 and AArch64 core), so adds / time = clock.
constexpr int kAddsPerIteration = 64;

#if defined(__x86_64__)
#define RP_ADD8 "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
#elif defined(__aarch64__)
#define RP_ADD8 "add %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\tadd %0, %0, #1\n\t"
#endif

// The thread's own CPU time, not wall time: time the thread spent preempted by another
// process must not read as a slow clock.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double chain_clock_mhz(double seconds) {
#if defined(RP_ADD8)
  std::uint64_t x = 0;
  std::int64_t iterations = 0;
  const double start = thread_cpu_seconds();
  double elapsed = 0;
  do {
    for (int i = 0; i < 4096; ++i) {
      asm volatile(RP_ADD8 RP_ADD8 RP_ADD8 RP_ADD8 RP_ADD8 RP_ADD8 RP_ADD8 RP_ADD8 : "+r"(x));
    }
    iterations += 4096;
    elapsed = thread_cpu_seconds() - start;
  } while (elapsed < seconds);
  if (x != static_cast<std::uint64_t>(iterations) * kAddsPerIteration) return 0;  // impossible unless asm broke
  return static_cast<double>(iterations) * kAddsPerIteration / elapsed / 1e6;
#else
  (void)seconds;
  return 0;  // unknown ISA: the clock is not measured and peaks are left underived
#endif
}

// One CPU per core that this process may run on (first hardware thread of each core), in
// topology order. Read once: pinning the calling thread later narrows what the process sees.
const std::vector<unsigned>& allowed_core_cpus() {
  static const std::vector<unsigned> cpus = [] {
    std::vector<unsigned> out;
    hwloc_topology_t topo;
    hwloc_topology_init(&topo);
    hwloc_topology_load(topo);
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    if (hwloc_get_cpubind(topo, allowed, HWLOC_CPUBIND_PROCESS) != 0) hwloc_bitmap_copy(allowed, hwloc_topology_get_allowed_cpuset(topo));
    const int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
    for (int c = 0; c < cores; ++c) {
      hwloc_obj_t core = hwloc_get_obj_by_type(topo, HWLOC_OBJ_CORE, c);
      hwloc_bitmap_t usable = hwloc_bitmap_alloc();
      hwloc_bitmap_and(usable, core->cpuset, allowed);
      int first = hwloc_bitmap_first(usable);
      if (first >= 0) out.push_back(static_cast<unsigned>(first));
      hwloc_bitmap_free(usable);
    }
    hwloc_bitmap_free(allowed);
    hwloc_topology_destroy(topo);
    return out;
  }();
  return cpus;
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

  DeviceInfo describe(int threads) override {
    Topology t = read_topology();
    threads_ = threads > 0 ? threads : t.cores;
    const std::string binding = pin_threads(threads_);  // before anything is measured
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
    d.clock_measured_mhz = measure_clock_mhz();
    d.extra["simd"] = kSimdName;
    d.extra["simd_bytes"] = std::to_string(kSimdBytes);
    d.extra["hardware_fma"] = kHardwareFma ? "yes" : "no";
    d.extra["cores_total"] = std::to_string(t.cores);
    d.extra["thread_binding"] = binding;
    d.extra["openmp_threads"] = std::to_string(threads_);
    add_theoretical_peaks(d);
    return d;
  }

  double time_launch(PreparedPoint& point) override {
    auto start = std::chrono::steady_clock::now();
    point.launch();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }

  // All threads run the chain at once: the all-core clock is what the probes run at.
  double measure_clock_mhz() override {
    double sum = 0;
    int n = 0;
#pragma omp parallel num_threads(threads_ > 0 ? threads_ : 1) reduction(+ : sum, n)
    {
      sum += chain_clock_mhz(0.01);
      n += 1;
    }
    return n > 0 ? sum / n : 0;
  }

 private:
  // Peak = cores x SIMD lanes x pipes x FLOPs per op x clock. FMA form: FMA pipes x 2 FLOPs.
  // noFMA form: half multiplies (FMA pipes only) and half adds (FMA or add-only pipes), so
  // min(2 x fma_pipes, fma_pipes + add_pipes) single-FLOP ops per cycle. AMD Zen 2 and later
  // have two add-only pipes beside the two FMA pipes; the other cores assumed here have none.
  static void add_theoretical_peaks(DeviceInfo& d) {
    if (d.clock_measured_mhz <= 0 || !kHardwareFma) return;
    CpuId id = read_cpuid();
    int fma_pipes = 2;
    int add_pipes = 0;
    bool zen2_or_later = (id.family == 0x17 && id.model >= 0x30) || id.family >= 0x19;
    if (d.vendor == "AuthenticAMD" && zen2_or_later) add_pipes = 2;
    double ghz = d.clock_measured_mhz / 1000.0;
    for (auto [prec, bytes] : {std::pair<const char*, int>{"FP64", 8}, {"FP32", 4}}) {
      int lanes = static_cast<int>(kSimdBytes) / bytes;
      double fma = d.compute_units * lanes * fma_pipes * 2 * ghz;
      double nofma = d.compute_units * lanes * std::min(2 * fma_pipes, fma_pipes + add_pipes) * ghz;
      std::ostringstream basis;
      basis << d.compute_units << " cores x " << lanes << " " << prec << " lanes (" << kSimdName << ") x "
            << fma_pipes << " FMA pipes x 2 FLOP x " << ghz << " GHz measured";
      d.theoretical_gflops[std::string(prec) + ".FMA"] = fma;
      d.theoretical_basis[std::string(prec) + ".FMA"] = basis.str();
      std::ostringstream nbasis;
      nbasis << d.compute_units << " cores x " << lanes << " lanes x min(2 x " << fma_pipes << " FMA, "
             << fma_pipes << " FMA + " << add_pipes << " FADD) pipes x 1 FLOP x " << ghz << " GHz measured";
      d.theoretical_gflops[std::string(prec) + ".noFMA"] = nofma;
      d.theoretical_basis[std::string(prec) + ".noFMA"] = nbasis.str();
    }
  }

  int threads_ = 1;
};

RP_REGISTER_BACKEND(CpuBackend);

}  // namespace
}  // namespace roofprobe::cpu
