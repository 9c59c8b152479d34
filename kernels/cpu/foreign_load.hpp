// Other processes' CPU time on the cores a run uses, from /proc (Backend::foreign_use): the
// busy time the kernel counts per CPU (/proc/stat) minus this process's own (/proc/self/stat),
// on the CPUs of the cores the run's threads are pinned to (hwloc tells which CPUs share a core),
// and the time the run's threads waited for their CPUs (/proc/self/task/*/schedstat).
#pragma once

#include <hwloc.h>

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

// The CPUs whose use disturbs threads pinned to `cpus`: those CPUs and the other hardware threads
// of their cores that `allowed` holds (a process on a core's sibling thread shares its units and
// caches), in increasing order.
std::vector<unsigned> cpus_of_their_cores(hwloc_topology_t topology, hwloc_const_bitmap_t allowed,
                                          const std::vector<unsigned>& cpus);

// Nanoseconds a thread waited on a run queue, from its /proc/PID/task/TID/schedstat text
// ("run_ns wait_ns timeslices"), in seconds; negative when the text is not such a line.
double run_queue_wait_seconds(const std::string& task_schedstat);

// A reading of other processes' use of `watched` (empty: every CPU), of which `idle_slack` CPUs'
// worth is not the run's (foreign time there costs the run nothing). `threads_have_own_cpus`:
// each of the run's threads is pinned to a CPU no other of them runs on, so the time they wait
// to run is other processes' (ForeignUse::waited_seconds).
ForeignUse read_foreign_use(const std::vector<unsigned>& watched, double idle_slack, bool threads_have_own_cpus);

}  // namespace roofprobe
