// kernels/cpu/foreign_load: reading other processes' CPU time from /proc text as the kernel
// writes it (proc(5)), and a real reading of this machine.
#include <gtest/gtest.h>

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

TEST(ForeignLoad, AReadingOfThisMachineIsKnownAndExcludesThisProcess) {
  const ForeignUse use = read_foreign_use({}, 1);
  ASSERT_TRUE(use.known);
  EXPECT_TRUE(use.measures_time);
  EXPECT_GE(use.busy_seconds, 0.0);
  for (const std::string& p : use.processes)
    EXPECT_NE(p.rfind(std::to_string(::getpid()) + " ", 0), 0u) << "this process is never foreign to itself";
}

}  // namespace
}  // namespace roofprobe
