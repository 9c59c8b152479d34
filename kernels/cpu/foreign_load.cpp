#include "kernels/cpu/foreign_load.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace roofprobe {

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The fields after the ")" that ends the command name (which may hold spaces and parentheses).
std::vector<std::string> fields_after_name(const std::string& pid_stat, std::string* name) {
  const std::size_t open = pid_stat.find('('), close = pid_stat.rfind(')');
  std::vector<std::string> out;
  if (open == std::string::npos || close == std::string::npos || close < open) return out;
  if (name != nullptr) *name = pid_stat.substr(open + 1, close - open - 1);
  std::istringstream in(pid_stat.substr(close + 1));
  std::string f;
  while (in >> f) out.push_back(f);
  return out;
}

}  // namespace

double busy_seconds_of_cpus(const std::string& proc_stat, const std::vector<unsigned>& cpus, double ticks_per_second) {
  std::istringstream in(proc_stat);
  std::string line;
  double ticks = 0;
  while (std::getline(in, line)) {
    if (line.rfind("cpu", 0) != 0) break;  // the cpu lines come first
    std::istringstream fields(line);
    std::string label;
    fields >> label;
    const bool all = label == "cpu";
    if (cpus.empty() != all) continue;
    if (!all) {
      const unsigned id = static_cast<unsigned>(std::strtoul(label.c_str() + 3, nullptr, 10));
      if (std::find(cpus.begin(), cpus.end(), id) == cpus.end()) continue;
    }
    // user nice system idle iowait irq softirq steal
    double v[8] = {};
    for (double& x : v) fields >> x;
    ticks += v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
  }
  return ticks / ticks_per_second;
}

double process_seconds(const std::string& pid_stat, double ticks_per_second) {
  // After the name: state(0) ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime(11) stime(12)
  const std::vector<std::string> f = fields_after_name(pid_stat, nullptr);
  if (f.size() < 13) return 0;
  return (std::strtod(f[11].c_str(), nullptr) + std::strtod(f[12].c_str(), nullptr)) / ticks_per_second;
}

std::vector<std::string> running_processes_on(const std::vector<unsigned>& cpus, long self, std::size_t max_count) {
  std::vector<std::string> out;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return out;
  while (const dirent* e = ::readdir(proc)) {
    if (out.size() >= max_count) break;
    char* end = nullptr;
    const long pid = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0' || pid == self) continue;
    std::string name;
    const std::vector<std::string> f = fields_after_name(slurp("/proc/" + std::string(e->d_name) + "/stat"), &name);
    // state(0) ... processor(36): the CPU it last ran on.
    if (f.size() < 37 || f[0] != "R") continue;
    const unsigned cpu = static_cast<unsigned>(std::strtoul(f[36].c_str(), nullptr, 10));
    if (!cpus.empty() && std::find(cpus.begin(), cpus.end(), cpu) == cpus.end()) continue;
    out.push_back(std::to_string(pid) + " " + name);
  }
  ::closedir(proc);
  return out;
}

std::vector<unsigned> cpus_of_their_cores(hwloc_topology_t topology, hwloc_const_bitmap_t allowed,
                                          const std::vector<unsigned>& cpus) {
  std::vector<unsigned> out;
  for (const unsigned cpu : cpus) {
    out.push_back(cpu);
    hwloc_obj_t pu = hwloc_get_pu_obj_by_os_index(topology, cpu);
    hwloc_obj_t core = pu == nullptr ? nullptr : hwloc_get_ancestor_obj_by_type(topology, HWLOC_OBJ_CORE, pu);
    if (core == nullptr) continue;
    unsigned sibling = 0;
    hwloc_bitmap_foreach_begin(sibling, core->cpuset) {
      if (hwloc_bitmap_isset(allowed, sibling) != 0) out.push_back(sibling);
    }
    hwloc_bitmap_foreach_end();
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

double run_queue_wait_seconds(const std::string& task_schedstat) {
  std::istringstream in(task_schedstat);
  unsigned long long run_ns = 0, wait_ns = 0;
  if (!(in >> run_ns >> wait_ns)) return -1;
  return static_cast<double>(wait_ns) * 1e-9;
}

namespace {

// The run-queue wait of every thread of this process, summed; negative when the kernel keeps no
// per-thread scheduler statistics (CONFIG_SCHED_INFO off).
double waited_seconds_of_this_process() {
  DIR* tasks = ::opendir("/proc/self/task");
  if (tasks == nullptr) return -1;
  double sum = 0;
  bool any = false;
  while (const dirent* e = ::readdir(tasks)) {
    if (e->d_name[0] == '.') continue;
    const double wait = run_queue_wait_seconds(slurp("/proc/self/task/" + std::string(e->d_name) + "/schedstat"));
    if (wait < 0) continue;
    sum += wait;
    any = true;
  }
  ::closedir(tasks);
  return any ? sum : -1;
}

}  // namespace

ForeignUse read_foreign_use(const std::vector<unsigned>& watched, double idle_slack, bool threads_have_own_cpus) {
  ForeignUse use;
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const std::string stat = slurp("/proc/stat"), self = slurp("/proc/self/stat");
  if (hz <= 0 || stat.empty() || self.empty()) return use;
  use.known = true;
  use.measures_time = true;
  use.busy_seconds = busy_seconds_of_cpus(stat, watched, hz) - process_seconds(self, hz);
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  const double cpus =
      watched.empty() ? static_cast<double>(online > 0 ? online : 1) : static_cast<double>(watched.size());
  use.idle_slack = std::max(0.0, idle_slack);
  use.resolution_seconds = (cpus + 1) / hz;
  use.processes = running_processes_on(watched, static_cast<long>(::getpid()), 3);
  if (threads_have_own_cpus) {
    const double waited = waited_seconds_of_this_process();
    use.measures_wait = waited >= 0;
    use.waited_seconds = std::max(0.0, waited);
  }
  return use;
}

}  // namespace roofprobe
