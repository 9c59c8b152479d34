#include "kernels/cpu/core_clock.hpp"

#include "kernels/cpu/simd.hpp"

#include <initializer_list>

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <sstream>

#if defined(__linux__)
#include <linux/perf_event.h>
#include <sys/syscall.h>
#endif

namespace roofprobe::cpu {
namespace {

// One dependent add per cycle: `kAddsPerIteration` adds form a chain whose length in cycles is
// the number of adds (latency 1 on every x86-64 and AArch64 core), so adds / time = clock.
// The addend is a register, not an immediate: Golden Cove and later Intel cores fold
// `add $imm, reg` chains in the renamer and retire several per cycle (an immediate chain read
// 22-23 GHz on a Xeon VM whose register-add and imul chains both read 4.0 GHz). A register's
// value is unknown at rename, so a register-register add waits for its input every time.
constexpr int kAddsPerIteration = 64;
constexpr int kIterationsPerBlock = 1024;
// ChainLoad::vector_fma: 8 independent vector FMAs per 32 adds. 8 accumulators and their constant
// fit AVX2's 16 registers; 8 FMAs take at most 8 of the 32 cycles on a core with one vector FMA
// per cycle (Zen 4 runs a 512-bit FMA per cycle on its two 256-bit pipes). A quarter of the FMA
// rate is enough: on the Xeon VM an eighth already read the clock of full-rate FMAs.
constexpr int kVectorFmas = 8;
constexpr int kVectorAddsPerIteration = 32;

// Eight adds of the chain, on the asm operands named x (the chain) and one (the addend).
#if defined(__x86_64__)
#define RP_ADD1 "add %[one], %[x]\n\t"
#elif defined(__aarch64__)
#define RP_ADD1 "add %[x], %[x], %[one]\n\t"
#endif
#if defined(RP_ADD1)
#define RP_ADD8 RP_ADD1 RP_ADD1 RP_ADD1 RP_ADD1 RP_ADD1 RP_ADD1 RP_ADD1 RP_ADD1
#endif

#if defined(__linux__)
int open_counter(std::uint32_t type, std::uint64_t config, bool exclude_kernel) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = type;
  attr.config = config;
  attr.exclude_kernel = exclude_kernel ? 1 : 0;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  // pid 0, cpu -1: this thread, wherever it runs.
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0));
}

// Counter value scaled for multiplexing (the kernel may time-share a counter among events).
bool read_scaled(int fd, double& value) {
  std::uint64_t v[3] = {0, 0, 0};  // value, time enabled, time running
  if (::read(fd, v, sizeof v) != static_cast<ssize_t>(sizeof v) || v[2] == 0) return false;
  value = static_cast<double>(v[0]) * static_cast<double>(v[1]) / static_cast<double>(v[2]);
  return true;
}
#endif

#if defined(RP_ADD8)
// Both return the chain's final value: the number of adds, unless the asm broke.
std::uint64_t scalar_chain(std::int64_t blocks) {
  std::uint64_t x = 0;
  const std::uint64_t one = 1;
  for (std::int64_t b = 0; b < blocks; ++b)
    for (int i = 0; i < kIterationsPerBlock; ++i)
      asm volatile(RP_ADD8 RP_ADD8 RP_ADD8 RP_ADD8 RP_ADD8 RP_ADD8 RP_ADD8 RP_ADD8 : [x] "+r"(x) : [one] "r"(one));
  return x;
}

// The FMAs and the adds are one asm statement, so the loop is the same in every build: at -O1
// with AddressSanitizer the compiled form kept the accumulators on the (instrumented) stack and
// the FMAs, not the adds, became the critical path (850 MHz where the scalar chain read 2.9 GHz).
#if defined(__x86_64__) && (defined(__FMA__) || defined(__AVX512F__))
#define RP_VECTOR_FMA(n) "vfmadd213pd %[half], %[half], %[a" #n "]\n\t"  // a = a * 1/2 + 1/2
#define RP_VECTOR_CONSTRAINT "+v"
#define RP_VECTOR_INPUT "v"
#elif defined(__aarch64__)
#define RP_VECTOR_FMA(n) "fmla %[a" #n "].2d, %[half].2d, %[half].2d\n\t"  // a += 1/4
#define RP_VECTOR_CONSTRAINT "+w"
#define RP_VECTOR_INPUT "w"
#endif

std::uint64_t vector_loaded_chain(std::int64_t blocks) {
  std::uint64_t x = 0;
  const std::uint64_t one = 1;
  const Vec<double> half = broadcast(0.5);  // no denormals, no overflow: values stay near 1 (or grow by 1/4)
  static_assert(kVectorFmas == 8 && kVectorAddsPerIteration == 32, "the asm below has 8 FMAs and 4 x 8 adds");
  Vec<double> a0 = half, a1 = half, a2 = half, a3 = half, a4 = half, a5 = half, a6 = half, a7 = half;
  for (std::int64_t b = 0; b < blocks; ++b)
    for (int i = 0; i < kIterationsPerBlock; ++i) {
#if defined(RP_VECTOR_FMA)
      asm volatile(RP_VECTOR_FMA(0) RP_VECTOR_FMA(1) RP_VECTOR_FMA(2) RP_VECTOR_FMA(3) RP_VECTOR_FMA(4) RP_VECTOR_FMA(5)
                       RP_VECTOR_FMA(6) RP_VECTOR_FMA(7) RP_ADD8 RP_ADD8 RP_ADD8 RP_ADD8
                   : [x] "+r"(x), [a0] RP_VECTOR_CONSTRAINT(a0), [a1] RP_VECTOR_CONSTRAINT(a1),
                     [a2] RP_VECTOR_CONSTRAINT(a2), [a3] RP_VECTOR_CONSTRAINT(a3), [a4] RP_VECTOR_CONSTRAINT(a4),
                     [a5] RP_VECTOR_CONSTRAINT(a5), [a6] RP_VECTOR_CONSTRAINT(a6), [a7] RP_VECTOR_CONSTRAINT(a7)
                   : [one] "r"(one), [half] RP_VECTOR_INPUT(half));
#else
      // x86 without FMA: a multiply and an add of the widest vector instead, the work the flops
      // probe runs there (vfma would be a library call per lane).
      for (Vec<double>* a : {&a0, &a1, &a2, &a3, &a4, &a5, &a6, &a7}) {
        *a = *a * half + half;
        keep_in_register(*a);
      }
      asm volatile(RP_ADD8 RP_ADD8 RP_ADD8 RP_ADD8 : [x] "+r"(x) : [one] "r"(one));
#endif
    }
  return x;
}
#endif

}  // namespace

// The thread's own CPU time, not wall time: time the thread spent preempted by another
// process must not read as a slow clock.
double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

double chain_clock_mhz(double seconds, ChainLoad load) {
#if defined(RP_ADD8)
  // A fixed number of adds, enough for `seconds` on a core of up to kMaxClockHz, read between
  // two clock reads only: each CLOCK_THREAD_CPUTIME_ID read is a system call of a microsecond
  // or more, and reads inside the chain would count as cycles that did no add (checking every
  // 18k cycles read Zen 4's clock 2% low).
  constexpr double kMaxClockHz = 5e9;
  const bool vector = load == ChainLoad::vector_fma;
  const int adds_per_iteration = vector ? kVectorAddsPerIteration : kAddsPerIteration;
  const auto blocks =
      static_cast<std::int64_t>(std::max(1.0, seconds * kMaxClockHz / (adds_per_iteration * kIterationsPerBlock)));
  const double start = thread_cpu_seconds();
  const std::uint64_t x = vector ? vector_loaded_chain(blocks) : scalar_chain(blocks);
  const double elapsed = thread_cpu_seconds() - start;
  const double adds = static_cast<double>(blocks) * kIterationsPerBlock * adds_per_iteration;
  if (x != static_cast<std::uint64_t>(adds) || elapsed <= 0) return 0;  // impossible unless asm broke
  return adds / elapsed / 1e6;
#else
  (void)seconds, (void)load;
  return 0;  // unknown ISA: the clock is not measured and peaks are left underived
#endif
}

CoreClock::~CoreClock() {
  for (int fd : fds_) ::close(fd);
}

void CoreClock::open(int threads) {
  for (int fd : fds_) ::close(fd);  // describe() may run again (tests, roofprobe-bench)
  fds_.clear();
  threads_ = threads > 0 ? threads : 1;
  std::ostringstream chain_text;
  chain_text << "dependent-add chain on every thread for " << kChainSeconds * 1e3
             << " ms of its CPU time right before and after each compute sample (mean of the readings); around "
                "vector floating-point samples the chain runs among "
             << kSimdBytes * 8 << "-bit FMAs (the clock of a core doing vector work), after " << kChainSeconds * 1e3
             << " ms of them untimed";
  const std::string chain = chain_text.str();
#if defined(__linux__)
  std::vector<int> fds(static_cast<std::size_t>(2 * threads_), -1);
  std::vector<int> errors(static_cast<std::size_t>(threads_), 0);
#pragma omp parallel num_threads(threads_)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    // Kernel cycles too where allowed (perf_event_paranoid < 2), else user cycles only.
    int cycles = open_counter(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, false);
    if (cycles < 0) cycles = open_counter(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true);
    if (cycles < 0) errors[t] = errno;
    const int task = cycles < 0 ? -1 : open_counter(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, true);
    if (cycles >= 0 && task < 0) errors[t] = errno;
    fds[2 * t] = cycles;
    fds[2 * t + 1] = task;
  }
  int error = 0;
  for (int e : errors) error = error != 0 ? error : e;
  if (error == 0) {
    fds_ = fds;
    method_ = "perf_event_open PERF_COUNT_HW_CPU_CYCLES / PERF_COUNT_SW_TASK_CLOCK of every thread during each sample";
    return;
  }
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
  method_ = chain + "; perf_event_open(PERF_COUNT_HW_CPU_CYCLES) failed: " + std::strerror(error) +
            (error == ENOENT ? " (no hardware PMU exposed, as in most VMs)" : "");
#else
  method_ = chain;
#endif
}

bool CoreClock::read_counters(std::vector<Reading>& out) const {
#if defined(__linux__)
  out.assign(static_cast<std::size_t>(threads_), Reading{});
  for (std::size_t t = 0; t < out.size(); ++t)
    if (!read_scaled(fds_[2 * t], out[t].cycles) || !read_scaled(fds_[2 * t + 1], out[t].ns)) return false;
  return true;
#else
  (void)out;
  return false;
#endif
}

double CoreClock::chain_now(double seconds, ChainLoad load) const {
  double sum = 0;
  int n = 0;
#pragma omp parallel num_threads(threads_) reduction(+ : sum, n)
  {
    sum += chain_clock_mhz(seconds, load);
    n += 1;
  }
  return n > 0 ? sum / n : 0;
}

double CoreClock::time(const std::function<void()>& launch, double& mhz, ChainLoad load) {
  mhz = 0;
  if (counters()) {
    std::vector<Reading> before, after;
    const bool ok = read_counters(before);
    const auto start = std::chrono::steady_clock::now();
    launch();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (ok && read_counters(after)) {
      double cycles = 0, ns = 0;
      for (std::size_t t = 0; t < after.size(); ++t) {
        cycles += after[t].cycles - before[t].cycles;
        ns += after[t].ns - before[t].ns;
      }
      // A thread that did not run (a pool rebuilt under another thread) leaves ns at 0.
      if (ns > 0 && cycles > 0) mhz = cycles / ns * 1e3;
    }
    return seconds;
  }
  // A core that starts wide vector work stalls and changes clock in its first few hundred
  // microseconds (AVX-512 licence transitions): the first half millisecond of the vector-loaded
  // chain read up to 25% below the next ones on the Xeon VM. It runs once untimed.
  if (load == ChainLoad::vector_fma) chain_now(kChainSeconds, load);
  const double before = chain_now(kChainSeconds, load);
  const auto start = std::chrono::steady_clock::now();
  launch();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const double after = chain_now(kChainSeconds, load);
  if (before > 0 && after > 0) mhz = 0.5 * (before + after);
  return seconds;
}

}  // namespace roofprobe::cpu
