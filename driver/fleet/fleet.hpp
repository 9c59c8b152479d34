// The fleet report (fleet.yaml, schema roofprobe.fleet/2): every rank's headline ceilings, the
// aggregates measured with all ranks running at once, and per device model and ceiling the
// median, min, max and the outliers (ranks more than a margin below the median). Built from the per-rank
// machine files on disk, so a job that died part way still yields a report of what finished.
#pragma once

#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "driver/model/machine.hpp"

namespace roofprobe {

inline constexpr const char* kFleetSchema = "roofprobe.fleet/2";

// How fleet.yaml is written into a run directory: never through a link planted there, and only
// over a fleet.yaml roofprobe wrote (its first line names the schema), never over a user's file.
void write_fleet_file(const std::string& path, const std::string& yaml);
inline constexpr double kDefaultOutlierMargin = 0.05;

struct FleetRank {
  int rank = 0;
  std::string host;
  std::string device;
  int local_rank = 0;
  std::string machine;  // path relative to the fleet directory
  bool complete = true;
  std::map<std::string, double> ceilings;  // "DRAM" -> GB/s, "FP64.FMA" -> GFLOP/s
  std::set<std::string> compute;           // which of them are compute ceilings (the rest: memory levels)
};

struct FleetOutlier {
  int rank = 0;
  std::string host;
  std::string device;
  double value = 0;
  double below_median = 0;  // fraction: 0.07 = 7% below the median
};

// One ceiling over the ranks of one device model: a fleet of mixed devices (an H100 and an H200
// partition, a CPU and a GPU backend) gets one median per model, never one pooled across them.
struct FleetCeiling {
  std::string device;  // the ranks' device name (machine file device.name)
  std::string name;
  std::string unit;  // GB/s | GFLOP/s
  int ranks = 0;
  double median = 0, min = 0, max = 0;
  std::vector<FleetOutlier> outliers;
};

// Aggregates: all ranks running one probe point at once; sum of work / longest time.
struct FleetAggregates {
  std::map<std::string, std::map<std::string, double>> node;  // host -> ceiling -> rate
  std::map<std::string, double> job;                          // ceiling -> rate
  std::map<std::string, std::string> points;                  // ceiling -> "probe params"
  std::map<std::string, double> timing;                       // seconds: total, turns, aggregates, coordination
};

struct Fleet {
  double margin = kDefaultOutlierMargin;
  int expected_ranks = 0;            // from the machine files' provenance (0: unknown)
  std::vector<FleetRank> ranks;      // by rank
  std::vector<std::string> missing;  // "rank 3: no machine.yaml", unreadable files
  FleetAggregates aggregates;
  std::vector<FleetCeiling> ceilings;  // per device (in order of first rank), memory levels first, then compute
};

// A rank's entry from its machine file (ceilings: memory GB/s, compute GFLOP/s).
FleetRank fleet_rank_from_machine(const Machine& m, int rank, const std::string& machine_path);
// Median, min, max and outliers of every ceiling present in the ranks, over the ranks of each
// device name apart. Margin in [0, 1).
std::vector<FleetCeiling> fleet_ceilings(const std::vector<FleetRank>& ranks, double margin);

// Reads DIR/rank-<r>/machine.yaml (or DIR/machine.yaml for a single-process run) and
// DIR/aggregates.yaml when present. Throws InputError when DIR holds no machine file at all.
Fleet collect_fleet(const std::string& dir, double margin);

std::string fleet_to_yaml(const Fleet& fleet);
// aggregates.yaml: what `roofprobe fleet` cannot re-derive from the machine files.
std::string aggregates_to_yaml(const FleetAggregates& aggregates);
FleetAggregates read_aggregates_file(const std::string& path);

// The outlier table printed at the end of a run and by `roofprobe fleet`.
void print_fleet_summary(std::ostream& out, const Fleet& fleet, const std::string& where);

// `roofprobe fleet DIR [--outlier-margin F]`: rebuilds DIR/fleet.yaml, prints the table.
int fleet_command(const std::string& dir, double margin);

}  // namespace roofprobe
