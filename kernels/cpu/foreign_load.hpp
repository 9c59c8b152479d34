// Other processes' CPU time on the cores a run uses, from /proc (Backend::foreign_use): the
// busy time the kernel counts per CPU (/proc/stat) minus this process's own (/proc/self/stat).
#pragma once

#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"

namespace roofprobe {

// Busy seconds (user, nice, system, irq, softirq, steal) of the listed CPUs in /proc/stat's text;
// every CPU (the "cpu" line) when `cpus` is empty.
double busy_seconds_of_cpus(const std::string& proc_stat, const std::vector<unsigned>& cpus, double ticks_per_second);

// User plus system seconds of a process from its /proc/PID/stat text (all its threads).
double process_seconds(const std::string& pid_stat, double ticks_per_second);

// Running processes (state R) other than `self` last seen on one of `cpus` (any when empty), as
// "pid name", at most `max_count`.
std::vector<std::string> running_processes_on(const std::vector<unsigned>& cpus, long self, std::size_t max_count);

// A reading for a run whose `threads` threads are pinned to `cpus` (empty: not pinned, every CPU).
ForeignUse read_foreign_use(const std::vector<unsigned>& cpus, int threads);

}  // namespace roofprobe
