#include "driver/fleet/fleet.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <set>
#include <sstream>

#include "driver/model/atomic_file.hpp"
#include "driver/model/document.hpp"
#include "driver/model/errors.hpp"
#include "driver/run/run_identity.hpp"
#include "driver/model/units.hpp"

namespace fs = std::filesystem;

namespace roofprobe {

namespace {

int int_or(const std::map<std::string, std::string>& m, const std::string& key, int fallback) {
  auto it = m.find(key);
  if (it == m.end()) return fallback;
  try {
    return std::stoi(it->second);
  } catch (...) {
    return fallback;
  }
}

std::string text_or(const std::map<std::string, std::string>& m, const std::string& key, const std::string& fallback) {
  auto it = m.find(key);
  return it == m.end() || it->second.empty() ? fallback : it->second;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  if (n == 0) return 0;
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

doc::Value rates_value(const std::map<std::string, double>& rates) {
  doc::Value out = doc::Value::object();
  for (const auto& [k, v] : rates) out.set(k, doc::Value::number(v));
  out.flow();
  return out;
}

doc::Value node_rates_value(const std::map<std::string, std::map<std::string, double>>& node) {
  doc::Value out = doc::Value::object();
  for (const auto& [host, rates] : node) out.set(host, rates_value(rates));
  return out;
}

doc::Value points_value(const std::map<std::string, std::string>& points) {
  doc::Value out = doc::Value::object();
  for (const auto& [k, v] : points) out.set(k, doc::Value::string(v));
  return out;
}

std::map<std::string, double> read_rates(const YAML::Node& node) {
  std::map<std::string, double> out;
  if (!node || !node.IsMap()) return out;
  for (const auto& kv : node) out[kv.first.as<std::string>()] = kv.second.as<double>();
  return out;
}

}  // namespace

FleetRank fleet_rank_from_machine(const Machine& m, int rank, const std::string& machine_path) {
  FleetRank r;
  r.rank = rank;
  r.host = text_or(m.provenance, "host", "unknown-host");
  r.device = m.device.name;
  r.local_rank = int_or(m.provenance, "mpi_local_rank", 0);
  r.machine = machine_path;
  r.complete = m.complete;
  for (const MemoryLevel& level : m.memory)
    if (level.source == "empirical" && level.gbs > 0) r.ceilings[level.level] = level.gbs;
  for (const ComputeCeiling& c : m.compute)
    if (c.source == "empirical" && c.gflops > 0) {
      r.ceilings[c.name] = c.gflops;
      r.compute.insert(c.name);
    }
  return r;
}

namespace {

// The ceilings of ranks that all hold one device.
std::vector<FleetCeiling> ceilings_of_one_device(const std::vector<const FleetRank*>& ranks, double margin) {
  // Memory levels (L1, L2.b, DRAM, HBM, ...) first, then compute ceilings; by name within each.
  std::vector<std::string> names;
  std::set<std::string> seen, compute;
  for (const FleetRank* r : ranks) {
    compute.insert(r->compute.begin(), r->compute.end());
    for (const auto& [name, value] : r->ceilings)
      if (seen.insert(name).second) names.push_back(name);
  }
  auto is_compute = [&](const std::string& n) { return compute.count(n) > 0; };
  std::stable_sort(names.begin(), names.end(), [&](const std::string& a, const std::string& b) {
    if (is_compute(a) != is_compute(b)) return !is_compute(a);
    return a < b;
  });
  std::vector<FleetCeiling> out;
  for (const std::string& name : names) {
    FleetCeiling c;
    c.device = ranks.front()->device;
    c.name = name;
    c.unit = is_compute(name) ? "GFLOP/s" : "GB/s";
    std::vector<double> values;
    for (const FleetRank* r : ranks) {
      auto it = r->ceilings.find(name);
      if (it != r->ceilings.end()) values.push_back(it->second);
    }
    c.ranks = static_cast<int>(values.size());
    c.median = median_of(values);
    c.min = *std::min_element(values.begin(), values.end());
    c.max = *std::max_element(values.begin(), values.end());
    for (const FleetRank* r : ranks) {
      auto it = r->ceilings.find(name);
      if (it == r->ceilings.end() || c.median <= 0) continue;
      if (it->second < c.median * (1 - margin)) {
        c.outliers.push_back({r->rank, r->host, r->device, it->second, 1 - it->second / c.median});
      }
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::vector<FleetCeiling> fleet_ceilings(const std::vector<FleetRank>& ranks, double margin) {
  std::vector<std::string> devices;  // in order of first rank
  std::map<std::string, std::vector<const FleetRank*>> by_device;
  for (const FleetRank& r : ranks) {
    auto& group = by_device[r.device];
    if (group.empty()) devices.push_back(r.device);
    group.push_back(&r);
  }
  std::vector<FleetCeiling> out;
  for (const std::string& device : devices) {
    std::vector<FleetCeiling> of_device = ceilings_of_one_device(by_device[device], margin);
    out.insert(out.end(), of_device.begin(), of_device.end());
  }
  return out;
}

Fleet collect_fleet(const std::string& dir, double margin) {
  if (!(margin >= 0 && margin < 1))
    throw InputError("--outlier-margin: " + std::to_string(margin) + " is not in [0, 1)");
  if (!fs::is_directory(dir)) throw InputError(dir + ": not a directory");
  Fleet fleet;
  fleet.margin = margin;
  std::map<int, std::string> found;  // rank -> machine path relative to dir
  std::set<int> accounted;           // ranks found or already named under missing
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_directory() || name.rfind("rank-", 0) != 0) continue;
    const std::string number = name.substr(5);
    if (number.empty() || number.size() > 9 || !std::all_of(number.begin(), number.end(), ::isdigit)) {
      fleet.missing.push_back(name + ": not a rank directory (rank-<0..999999999>)");
      continue;
    }
    const int rank = std::stoi(number);
    accounted.insert(rank);
    if (fs::exists(entry.path() / "machine.yaml"))
      found[rank] = name + "/machine.yaml";
    else
      fleet.missing.push_back("rank " + number + ": no " + name + "/machine.yaml");
  }
  if (found.empty() && fs::exists(fs::path(dir) / "machine.yaml")) {
    found[0] = "machine.yaml";
    accounted.insert(0);
  }
  if (found.empty()) throw InputError(dir + ": no machine files (neither rank-<r>/machine.yaml nor machine.yaml)");
  for (const auto& [rank, path] : found) {
    try {
      Machine m = read_machine_file((fs::path(dir) / path).string());
      fleet.ranks.push_back(fleet_rank_from_machine(m, rank, path));
      fleet.expected_ranks = std::max(fleet.expected_ranks, int_or(m.provenance, "mpi_ranks", 1));
    } catch (const InputError& e) {
      fleet.missing.push_back("rank " + std::to_string(rank) + ": " + e.what());
    }
  }
  // Every rank below the job's size, and below the highest rank present (machine files that do
  // not record the job's size), is named: a run of absent ranks as one line.
  fleet.expected_ranks = std::max(fleet.expected_ranks, *accounted.rbegin() + 1);
  accounted.insert(fleet.expected_ranks);
  int next = 0;
  for (const int present : accounted) {
    if (present > next) {
      const std::string last = std::to_string(present - 1);
      fleet.missing.push_back(present - 1 == next ? "rank " + last + ": no rank-" + last + "/machine.yaml"
                                                  : "ranks " + std::to_string(next) + "-" + last +
                                                        ": no rank-<r>/machine.yaml for any of them");
    }
    if (present == fleet.expected_ranks) break;
    next = present + 1;
  }
  std::sort(fleet.missing.begin(), fleet.missing.end());
  const fs::path aggregates = fs::path(dir) / "aggregates.yaml";
  if (fs::exists(aggregates)) {
    try {
      fleet.aggregates = read_aggregates_file(aggregates.string());
    } catch (const InputError& e) {
      fleet.missing.push_back(std::string("aggregates: ") + e.what());
    }
  }
  fleet.ceilings = fleet_ceilings(fleet.ranks, margin);
  return fleet;
}

// Both files are written through the machine file's document tree, so a host, device or message
// holding bytes that are not UTF-8, a control character, or text a YAML reader would take for a
// number or a boolean reads back as the same string.
std::string aggregates_to_yaml(const FleetAggregates& a) {
  doc::Value root = doc::Value::object();
  root.set("node", node_rates_value(a.node));
  root.set("job", rates_value(a.job));
  root.set("points", points_value(a.points));
  root.set("timing_seconds", rates_value(a.timing));
  return doc::to_yaml(root);
}

FleetAggregates read_aggregates_file(const std::string& path) {
  FleetAggregates a;
  try {
    YAML::Node root = YAML::LoadFile(path);
    if (root["node"] && root["node"].IsMap())
      for (const auto& kv : root["node"]) a.node[kv.first.as<std::string>()] = read_rates(kv.second);
    a.job = read_rates(root["job"]);
    if (root["points"] && root["points"].IsMap())
      for (const auto& kv : root["points"]) a.points[kv.first.as<std::string>()] = kv.second.as<std::string>();
    a.timing = read_rates(root["timing_seconds"]);
  } catch (const YAML::Exception& e) {
    throw InputError(path + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return a;
}

std::string fleet_to_yaml(const Fleet& f) {
  using doc::Value;
  Value root = Value::object();
  root.set("schema", Value::string(kFleetSchema));
  root.set("generated", Value::string(utc_now()));
  root.set("outlier_margin", Value::number(f.margin));
  Value units = Value::object();
  units.set("memory", Value::string("GB/s (1e9 bytes/s)"));
  units.set("compute", Value::string("GFLOP/s (1e9 FLOP/s)"));
  root.set("units", std::move(units.flow()));
  root.set("expected_ranks", Value::integer(std::max<long long>(f.expected_ranks, f.ranks.size())));
  Value ranks = Value::array();
  for (const FleetRank& r : f.ranks) {
    Value rank = Value::object();
    rank.set("rank", Value::integer(r.rank));
    rank.set("host", Value::string(r.host));
    rank.set("device", Value::string(r.device));
    rank.set("local_rank", Value::integer(r.local_rank));
    rank.set("machine", Value::string(r.machine));
    rank.set("complete", Value::boolean(r.complete));
    rank.set("ceilings", rates_value(r.ceilings));
    ranks.push(std::move(rank));
  }
  root.set("ranks", std::move(ranks));
  Value missing = Value::array();
  for (const auto& m : f.missing) missing.push(Value::string(m));
  root.set("missing", std::move(missing));
  Value aggregates = Value::object();
  aggregates.set("node", node_rates_value(f.aggregates.node));
  aggregates.set("job", rates_value(f.aggregates.job));
  aggregates.set("points", points_value(f.aggregates.points));
  root.set("aggregates", std::move(aggregates));
  if (!f.aggregates.timing.empty()) root.set("timing_seconds", rates_value(f.aggregates.timing));
  // Per device name, then per ceiling: medians are never pooled across device models.
  Value ceilings = Value::object();
  std::vector<std::string> devices;
  std::map<std::string, Value> of_device;
  long long outliers = 0;
  for (const FleetCeiling& c : f.ceilings) {
    Value ceiling = Value::object();
    ceiling.set("unit", Value::string(c.unit));
    ceiling.set("ranks", Value::integer(c.ranks));
    ceiling.set("median", Value::number(c.median));
    ceiling.set("min", Value::number(c.min));
    ceiling.set("max", Value::number(c.max));
    Value list = Value::array();
    for (const FleetOutlier& o : c.outliers) {
      ++outliers;
      Value entry = Value::object();
      entry.set("rank", Value::integer(o.rank));
      entry.set("host", Value::string(o.host));
      entry.set("device", Value::string(o.device));
      entry.set("value", Value::number(o.value));
      entry.set("below_median", Value::number(o.below_median));
      list.push(std::move(entry.flow()));
    }
    ceiling.set("outliers", std::move(list));
    auto [it, added] = of_device.try_emplace(c.device, Value::object());
    if (added) devices.push_back(c.device);
    it->second.set(c.name, std::move(ceiling));
  }
  for (const std::string& device : devices) ceilings.set(device, std::move(of_device.at(device)));
  root.set("ceilings", std::move(ceilings));
  root.set("outliers", Value::integer(outliers));
  return doc::to_yaml(root);
}

void print_fleet_summary(std::ostream& out, const Fleet& f, const std::string& where) {
  std::set<std::string> hosts;
  for (const FleetRank& r : f.ranks) hosts.insert(r.host);
  out << "fleet: " << f.ranks.size() << " rank(s) on " << hosts.size() << " host(s)";
  if (!f.missing.empty()) out << ", " << f.missing.size() << " missing";
  out << " -> " << where << "\n";
  for (const auto& m : f.missing) out << "  missing: " << m << "\n";
  auto rate = [](double v, const std::string& unit) { return format_rate_g(v, unit == "GB/s" ? "B/s" : "FLOP/s"); };
  if (!f.aggregates.job.empty()) {
    out << "aggregates (all ranks at once):\n";
    for (const auto& [name, v] : f.aggregates.job)
      out << "  job   " << std::left << std::setw(10) << name << " "
          << rate(v, name.find('.') == std::string::npos ? "GB/s" : "GFLOP/s") << "\n";
    for (const auto& [host, rates] : f.aggregates.node)
      for (const auto& [name, v] : rates)
        out << "  node " << host << " " << std::left << std::setw(10) << name << " "
            << rate(v, name.find('.') == std::string::npos ? "GB/s" : "GFLOP/s") << "\n";
  }
  out << "per-device ceilings (median, min, max over the ranks of each device):\n";
  const std::string* device = nullptr;
  for (const FleetCeiling& c : f.ceilings) {
    if (device == nullptr || *device != c.device) {
      device = &c.device;
      out << "  " << (c.device.empty() ? std::string("(no device name)") : c.device) << ":\n";
    }
    out << "    " << std::left << std::setw(10) << c.name << " median " << std::setw(13) << rate(c.median, c.unit)
        << " min " << std::setw(13) << rate(c.min, c.unit) << " max " << rate(c.max, c.unit) << "\n";
  }
  int n = 0;
  for (const FleetCeiling& c : f.ceilings) n += static_cast<int>(c.outliers.size());
  const int pct = static_cast<int>(std::lround(f.margin * 100));
  if (n == 0) {
    out << "outliers: none (no rank more than " << pct << "% below its device's median)\n";
    return;
  }
  out << "outliers (more than " << pct << "% below their device's median):\n";
  out << "  rank  host             device                          ceiling    value          below\n";
  for (const FleetCeiling& c : f.ceilings)
    for (const FleetOutlier& o : c.outliers) {
      std::ostringstream below;
      below << std::fixed << std::setprecision(1) << o.below_median * 100 << "%";
      out << "  " << std::left << std::setw(5) << o.rank << " " << std::setw(16) << o.host << " " << std::setw(31)
          << o.device.substr(0, 31) << " " << std::setw(10) << c.name << " " << std::setw(14) << rate(o.value, c.unit)
          << " " << below.str() << "\n";
    }
}

void write_fleet_file(const std::string& path, const std::string& yaml) {
  write_file_atomically(path, yaml, inside_output_directory("schema: roofprobe.fleet/"));
}

int fleet_command(const std::string& dir, double margin) {
  Fleet fleet = collect_fleet(dir, margin);
  const std::string path = (fs::path(dir) / "fleet.yaml").string();
  write_fleet_file(path, fleet_to_yaml(fleet));
  print_fleet_summary(std::cout, fleet, path);
  return 0;  // missing ranks are listed in the report and on stdout
}

}  // namespace roofprobe
