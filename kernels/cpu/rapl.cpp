#include "kernels/cpu/rapl.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <regex>

namespace fs = std::filesystem;

namespace roofprobe::cpu {

namespace {

std::optional<std::string> first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

std::optional<std::uint64_t> counter(const std::string& path) {
  const std::optional<std::string> text = first_line(path);
  if (!text || text->empty() || text->find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  try {
    return std::stoull(*text);
  } catch (const std::exception&) {
    return std::nullopt;  // out of range
  }
}

}  // namespace

RaplEnergy::RaplEnergy(std::string root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    why_not_ =
        "no RAPL energy counters: " + root + " does not exist (no powercap interface, as in most virtual machines)";
    return;
  }
  // intel-rapl:<package> and intel-rapl:<package>:<part>; the names say what each zone is.
  static const std::regex zone_dir(R"(intel-rapl:[0-9]+(:[0-9]+)?)");
  std::vector<fs::path> dirs;
  for (const auto& entry : fs::directory_iterator(root, ec))
    if (std::regex_match(entry.path().filename().string(), zone_dir)) dirs.push_back(entry.path());
  std::sort(dirs.begin(), dirs.end());
  std::string unreadable;
  for (const fs::path& dir : dirs) {
    const std::optional<std::string> name = first_line((dir / "name").string());
    if (!name) continue;
    const bool package = name->rfind("package-", 0) == 0;
    if (!package && *name != "dram") continue;  // core, uncore: inside the package; psys: contains it
    Zone z;
    z.name = *name;
    z.energy_path = (dir / "energy_uj").string();
    const std::optional<std::uint64_t> range = counter((dir / "max_energy_range_uj").string());
    const std::optional<std::uint64_t> now = counter(z.energy_path);
    if (!now || !range || *range == 0) {
      const bool denied = ::access(z.energy_path.c_str(), R_OK) != 0 && errno == EACCES;
      if (unreadable.empty())
        unreadable = z.energy_path + (denied ? " is readable by root only (Linux restricts energy_uj since 5.10)"
                                             : " cannot be read as a counter");
      continue;
    }
    z.range_uj = *range;
    z.last_uj = *now;
    zones_.push_back(z);
  }
  if (zones_.empty())
    why_not_ =
        unreadable.empty() ? "no RAPL package or dram zone under " + root : "no RAPL energy counters: " + unreadable;
}

std::string RaplEnergy::domains() const {
  std::string out;
  for (const Zone& z : zones_) out += (out.empty() ? "" : "+") + z.name;
  return out;
}

std::optional<double> RaplEnergy::joules() {
  if (zones_.empty()) return std::nullopt;
  double total = 0;
  for (Zone& z : zones_) {
    const std::optional<std::uint64_t> now = counter(z.energy_path);
    if (!now || *now > z.range_uj) return std::nullopt;
    // A smaller reading is a wrap: the counter went to range and started again at 0.
    z.total_uj += *now >= z.last_uj ? *now - z.last_uj : z.range_uj - z.last_uj + *now + 1;
    z.last_uj = *now;
    total += static_cast<double>(z.total_uj) * 1e-6;
  }
  return total;
}

}  // namespace roofprobe::cpu
