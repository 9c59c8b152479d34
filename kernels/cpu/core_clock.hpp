// The core clock of the OpenMP threads, measured around a launch so a compute ceiling's
// theoretical peak uses the clock its own samples ran at (turbo, AVX-512 licences, thermal
// limits and a shared host all move it between points).
//
// Two methods, the first that works:
//   counters: perf_event_open PERF_COUNT_HW_CPU_CYCLES and PERF_COUNT_SW_TASK_CLOCK opened by
//             each OpenMP thread for itself; clock = sum of cycles / sum of on-CPU time during
//             the launch. No cost to the launch. Needs a PMU the kernel exposes (often absent
//             in VMs) and perf_event_paranoid <= 2.
//   chain:    a dependent register-add chain (one add per cycle on every x86-64 and AArch64 core)
//             run by every thread for kChainSeconds (at 5 GHz; longer at lower clocks) of its
//             own CPU time right before and right after the launch; clock = mean of those
//             2 x threads readings. Costs about 2 x kChainSeconds per launch, so it runs only
//             for points that ask for it. Around a launch of vector floating point the chain
//             runs among vector FMAs (ChainLoad::vector_fma): the clock it reads alone is the
//             scalar one, which the core leaves while wide FMAs run and regains within a
//             millisecond after them.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace roofprobe::cpu {

// This thread's CPU time, seconds (CLOCK_THREAD_CPUTIME_ID): time spent preempted is not counted.
double thread_cpu_seconds();

// What the core runs beside the add chain while it measures the clock.
//   scalar:     nothing: the clock of scalar code.
//   vector_fma: independent FMAs of the widest vector the build targets (simd.hpp), a quarter as
//               many as adds, so the adds stay the critical path on a core that runs one such
//               FMA per cycle or more: the clock of a core running wide vector floating point.
//               On a Sapphire Rapids core the scalar chain read 3.8-4.0 GHz right before
//               and after 512-bit FMA launches, this one 3.4-3.6 GHz, the rate at which those
//               launches retired two FMAs per cycle.
enum class ChainLoad { scalar, vector_fma };

// Adds per second / 1e6 of a dependent add chain, timed by this thread's CPU time (time
// preempted by other processes does not count as slow clock), long enough to last `seconds`
// on a 5 GHz core (longer on slower ones); 0 on an ISA without the chain.
double chain_clock_mhz(double seconds, ChainLoad load = ChainLoad::scalar);

class CoreClock {
 public:
  CoreClock() = default;
  ~CoreClock();
  CoreClock(const CoreClock&) = delete;
  CoreClock& operator=(const CoreClock&) = delete;

  // Opens the per-thread counters from inside an OpenMP parallel region of `threads` threads
  // (the pool that later runs the launches); falls back to the chain when any thread cannot.
  void open(int threads);
  bool counters() const { return !fds_.empty(); }
  // One line for the machine file: the method, and why the counters are not used when not.
  const std::string& method() const { return method_; }

  // Runs `launch` and returns its duration (steady clock, seconds); `mhz` gets the clock of the
  // threads during it (0 when it could not be measured). `load`: what the launch runs, for the
  // chain (the counters need no hint).
  double time(const std::function<void()>& launch, double& mhz, ChainLoad load = ChainLoad::scalar);

  // The all-thread chain clock right now (the start-up figure and the post-point reading).
  double chain_now(double seconds, ChainLoad load = ChainLoad::scalar) const;

  static constexpr double kChainSeconds = 0.0005;

 private:
  struct Reading {
    double cycles = 0;
    double ns = 0;
  };
  bool read_counters(std::vector<Reading>& out) const;

  int threads_ = 1;
  std::vector<int> fds_;  // per thread: cycles, task-clock
  std::string method_;
};

}  // namespace roofprobe::cpu
