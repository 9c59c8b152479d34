#include "driver/fleet/mpi_binding.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "driver/fleet/mpi.hpp"

namespace roofprobe {

std::vector<CorePus> cores_for_rank(const std::vector<CorePus>& cores, int index, int count) {
  const int n = static_cast<int>(cores.size());
  if (n == 0 || count <= 0 || index < 0) return {};
  if (count >= n) return {cores[static_cast<std::size_t>(index % n)]};
  const int base = n / count, extra = n % count;
  const int first = index * base + std::min(index, extra);
  const int length = base + (index < extra ? 1 : 0);
  return std::vector<CorePus>(cores.begin() + first, cores.begin() + first + length);
}

int gpu_for_rank(int local_rank, int gpus) {
  if (gpus <= 0 || local_rank < 0) return -1;
  return local_rank % gpus;
}

std::string omp_places_text(const std::vector<CorePus>& cores) {
  std::string out;
  for (const CorePus& core : cores) {
    if (!out.empty()) out += ",";
    out += "{";
    for (std::size_t i = 0; i < core.size(); ++i) out += (i ? "," : "") + std::to_string(core[i]);
    out += "}";
  }
  return out;
}

std::string cpu_list_text(std::vector<int> cpus) {
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  std::string out;
  for (std::size_t i = 0; i < cpus.size();) {
    std::size_t j = i;
    while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(cpus[i]);
    if (j > i) out += "-" + std::to_string(cpus[j]);
    i = j + 1;
  }
  return out;
}

std::vector<int> parse_cpu_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.pop_back();
    if (item.empty()) continue;
    std::size_t dash = item.find('-');
    std::size_t used = 0;
    int lo = std::stoi(item.substr(0, dash), &used);
    int hi = lo;
    if (dash != std::string::npos) hi = std::stoi(item.substr(dash + 1));
    if (lo < 0 || hi < lo) throw std::invalid_argument("bad cpu list: " + text);
    for (int c = lo; c <= hi; ++c) out.push_back(c);
  }
  return out;
}

int visible_gpu_count() {
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) {
    std::string s = v;
    if (s.empty()) return 0;
    return static_cast<int>(std::count(s.begin(), s.end(), ',')) + 1;
  }
  std::error_code ec;
  int n = 0;
  for (auto it = std::filesystem::directory_iterator("/proc/driver/nvidia/gpus", ec);
       !ec && it != std::filesystem::directory_iterator(); it.increment(ec))
    ++n;
  return n;
}

namespace {

std::vector<int> process_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

int read_int(const std::string& path, int fallback) {
  std::ifstream in(path);
  int v = fallback;
  if (!(in >> v)) return fallback;
  return v;
}

// Groups CPUs into cores by (package, core id) from sysfs, in order of their first CPU.
std::vector<CorePus> cores_of(const std::vector<int>& cpus) {
  std::map<std::pair<int, int>, std::size_t> index;
  std::vector<CorePus> cores;
  for (int c : cpus) {
    const std::string base = "/sys/devices/system/cpu/cpu" + std::to_string(c) + "/topology/";
    std::pair<int, int> key{read_int(base + "physical_package_id", -1), read_int(base + "core_id", -1 - c)};
    auto it = index.find(key);
    if (it == index.end()) {
      index[key] = cores.size();
      cores.push_back({c});
    } else {
      cores[it->second].push_back(c);
    }
  }
  return cores;
}

// Variables in the environment the process was started with (setenv after start does not show).
bool in_initial_environment(const std::vector<std::string>& names) {
  std::ifstream in("/proc/self/environ", std::ios::binary);
  std::string entry;
  while (std::getline(in, entry, '\0')) {
    for (const auto& n : names)
      if (entry.rfind(n + "=", 0) == 0) return true;
  }
  return false;
}

}  // namespace

RankBinding apply_rank_binding(Comm& comm) {
  RankBinding b;
  if (!comm.distributed()) return b;
  const std::vector<int> mine = process_cpus();
  const std::string key = comm.host() + "|" + cpu_list_text(mine);
  const std::vector<std::string> keys = comm.allgather(key, "binding", 120);
  int index = 0, count = 0;
  for (int r = 0; r < static_cast<int>(keys.size()); ++r) {
    if (keys[r] != key) continue;
    if (r < comm.rank()) ++index;
    ++count;
  }
  b.cores = cores_for_rank(cores_of(mine), index, count);
  b.threads = static_cast<int>(b.cores.size());
  const bool user_binding =
      in_initial_environment({"OMP_PLACES", "OMP_PROC_BIND", "GOMP_CPU_AFFINITY", "KMP_AFFINITY"});
  if (user_binding) {
    b.notes.push_back("CPU binding left to the user's OMP_PLACES/OMP_PROC_BIND");
  } else if (count > 1 && !b.cores.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (const CorePus& core : b.cores)
      for (int c : core) CPU_SET(c, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
      b.notes.push_back("could not bind to CPUs " + omp_places_text(b.cores));
    setenv("OMP_PLACES", omp_places_text(b.cores).c_str(), 1);  // runtimes that read it lazily
  }
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const bool single_visible =
      visible != nullptr && *visible != '\0' && std::string(visible).find(',') == std::string::npos;
  const char* chosen = std::getenv("ROOFPROBE_CUDA_DEVICE");
  if ((chosen == nullptr || *chosen == '\0') && !single_visible) {
    const int gpu = gpu_for_rank(comm.local_rank(), visible_gpu_count());
    if (gpu >= 0) {
      setenv("ROOFPROBE_CUDA_DEVICE", std::to_string(gpu).c_str(), 1);
      b.cuda_device = gpu;
    }
  }
  return b;
}

}  // namespace roofprobe
