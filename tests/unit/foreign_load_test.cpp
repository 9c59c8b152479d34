// kernels/cpu/foreign_load: reading other processes' CPU time from /proc text as the kernel
// writes it (proc(5)), and a real reading of this machine.
#include <gtest/gtest.h>

#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>

#include "kernels/cpu/foreign_load.hpp"

namespace roofprobe {
namespace {

// The head of a real /proc/stat (Linux 6.1, two CPUs): user nice system idle iowait irq softirq
// steal guest guest_nice, in clock ticks.
constexpr const char* kProcStat =
    "cpu  4705 150 1120 16250 520 0 38 7 0 0\n"
    "cpu0 2352 75 560 8125 260 0 19 3 0 0\n"
    "cpu1 2353 75 560 8125 260 0 19 4 0 0\n"
    "intr 114930548 113 14 0 0 0 0 0 0 1 0\n"
    "ctxt 1990473\n";

TEST(ForeignLoad, BusyTimeOfTheChosenCpusFromProcStat) {
  // All CPUs: user + nice + system + irq + softirq + steal = 4705 + 150 + 1120 + 0 + 38 + 7.
  EXPECT_DOUBLE_EQ(busy_seconds_of_cpus(kProcStat, {}, 100), 60.20);
  EXPECT_DOUBLE_EQ(busy_seconds_of_cpus(kProcStat, {1}, 100), (2353 + 75 + 560 + 19 + 4) / 100.0);
  EXPECT_DOUBLE_EQ(busy_seconds_of_cpus(kProcStat, {0, 1}, 100),
                   (2352 + 75 + 560 + 19 + 3 + 2353 + 75 + 560 + 19 + 4) / 100.0);
}

TEST(ForeignLoad, ProcessTimeSurvivesANameWithSpacesAndParentheses) {
  // A real /proc/PID/stat line; the name "(my (odd) prog)" is the process's own choice.
  const std::string stat =
      "4242 (my (odd) prog) R 1 4242 4242 0 -1 4194304 1200 0 0 0 250 50 0 0 20 0 3 0 100 123456789 500 "
      "18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0";
  EXPECT_DOUBLE_EQ(process_seconds(stat, 100), 3.0);
  EXPECT_DOUBLE_EQ(process_seconds("garbage", 100), 0.0);
}

// hwloc's synthetic topology: 2 cores of 2 hardware threads, PUs 0,1 on core 0 and 2,3 on core 1.
class CoresOfTwoThreads : public ::testing::Test {
 protected:
  void SetUp() override {
    hwloc_topology_init(&topology_);
    ASSERT_EQ(hwloc_topology_set_synthetic(topology_, "core:2 pu:2"), 0);
    ASSERT_EQ(hwloc_topology_load(topology_), 0);
    allowed_ = hwloc_bitmap_dup(hwloc_topology_get_complete_cpuset(topology_));
  }
  void TearDown() override {
    hwloc_bitmap_free(allowed_);
    hwloc_topology_destroy(topology_);
  }
  hwloc_topology_t topology_{};
  hwloc_bitmap_t allowed_{};
};

TEST_F(CoresOfTwoThreads, APinnedThreadsSiblingIsWatchedToo) {
  EXPECT_EQ(cpus_of_their_cores(topology_, allowed_, {0}), (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(cpus_of_their_cores(topology_, allowed_, {2}), (std::vector<unsigned>{2, 3}));
  EXPECT_EQ(cpus_of_their_cores(topology_, allowed_, {2, 0}), (std::vector<unsigned>{0, 1, 2, 3}));
  EXPECT_TRUE(cpus_of_their_cores(topology_, allowed_, {}).empty());
}

TEST_F(CoresOfTwoThreads, ASiblingTheProcessMayNotRunOnIsNotWatched) {
  hwloc_bitmap_clr(allowed_, 3);  // as under taskset or a cgroup's cpuset
  EXPECT_EQ(cpus_of_their_cores(topology_, allowed_, {2}), (std::vector<unsigned>{2}));
  EXPECT_EQ(cpus_of_their_cores(topology_, allowed_, {0, 2}), (std::vector<unsigned>{0, 1, 2}));
}

TEST(ForeignLoad, RunQueueWaitFromATasksSchedstat) {
  // A real /proc/PID/task/TID/schedstat: nanoseconds on the CPU, nanoseconds waiting, timeslices.
  EXPECT_DOUBLE_EQ(run_queue_wait_seconds("2713895 1500000000 12\n"), 1.5);
  EXPECT_LT(run_queue_wait_seconds(""), 0.0);
  EXPECT_LT(run_queue_wait_seconds("garbage"), 0.0);
}

// A real wait: this thread and a busy child process pinned to one CPU share it, so this thread
// waits for about half the time. Where the kernel keeps no per-thread statistics the reading says
// so, and the test says why it cannot check.
TEST(ForeignLoad, AThreadSharingItsCpuWithABusyProcessWaits) {
  cpu_set_t old_set;
  ASSERT_EQ(sched_getaffinity(0, sizeof old_set, &old_set), 0);
  int cpu = -1;
  for (int c = 0; c < CPU_SETSIZE && cpu < 0; ++c)
    if (CPU_ISSET(c, &old_set)) cpu = c;
  ASSERT_GE(cpu, 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  const ForeignUse before = read_foreign_use({static_cast<unsigned>(cpu)}, 0, true);
  if (!before.measures_wait) {
    sched_setaffinity(0, sizeof old_set, &old_set);
    GTEST_SKIP() << "this kernel keeps no per-thread scheduler statistics (/proc/self/task/*/schedstat)";
  }
  const auto spin = [](double seconds) {
    const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    volatile unsigned long n = 0;
    while (std::chrono::steady_clock::now() < end) n = n + 1;
  };
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // inherits the one-CPU affinity
    spin(0.6);
    ::_exit(0);
  }
  const auto start = std::chrono::steady_clock::now();
  spin(0.4);
  const ForeignUse after = read_foreign_use({static_cast<unsigned>(cpu)}, 0, true);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  int status = 0;
  ::waitpid(child, &status, 0);
  sched_setaffinity(0, sizeof old_set, &old_set);
  ASSERT_TRUE(after.measures_wait);
  // Half of 0.4 s under a fair scheduler; a quarter leaves room for the child's start.
  EXPECT_GT(after.waited_seconds - before.waited_seconds, 0.25 * seconds * 0.5)
      << "waited " << after.waited_seconds - before.waited_seconds << " s of " << seconds << " s";
}

TEST(ForeignLoad, AReadingOfThisMachineIsKnownAndExcludesThisProcess) {
  const ForeignUse use = read_foreign_use({}, 0, false);
  ASSERT_TRUE(use.known);
  EXPECT_TRUE(use.measures_time);
  EXPECT_GE(use.busy_seconds, 0.0);
  EXPECT_GT(use.resolution_seconds, 0.0);
  for (const std::string& p : use.processes)
    EXPECT_NE(p.rfind(std::to_string(::getpid()) + " ", 0), 0u) << "this process is never foreign to itself";
}

}  // namespace
}  // namespace roofprobe
