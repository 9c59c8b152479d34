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

ForeignUse read_foreign_use(const std::vector<unsigned>& cpus, int threads) {
  ForeignUse use;
  const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const std::string stat = slurp("/proc/stat"), self = slurp("/proc/self/stat");
  if (hz <= 0 || stat.empty() || self.empty()) return use;
  use.known = true;
  use.measures_time = true;
  use.busy_seconds = busy_seconds_of_cpus(stat, cpus, hz) - process_seconds(self, hz);
  const long online = ::sysconf(_SC_NPROCESSORS_ONLN);
  const double cores = cpus.empty() ? static_cast<double>(online > 0 ? online : 1) : static_cast<double>(cpus.size());
  use.idle_slack = std::max(0.0, cores - threads);
  use.resolution_seconds = (cores + 1) / hz;
  use.processes = running_processes_on(cpus, static_cast<long>(::getpid()), 3);
  return use;
}

}  // namespace roofprobe
