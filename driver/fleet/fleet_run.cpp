#include "driver/fleet/fleet_run.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "driver/model/atomic_file.hpp"
#include "driver/model/errors.hpp"
#include "driver/fleet/mpi.hpp"
#include "driver/fleet/mpi_binding.hpp"
#include "driver/run/signals.hpp"
#include "driver/run/run_identity.hpp"

namespace fs = std::filesystem;

namespace roofprobe {

namespace {

// Coordination steps that do no measuring (plan agreement, gathers) wait at most this long.
constexpr double kShortTimeout = 120;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::stringstream in(text);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

// Where rank 0 writes the partial report if a barrier times out.
std::string g_fleet_dir;
double g_fleet_margin = kDefaultOutlierMargin;

void write_partial_fleet() {
  if (g_fleet_dir.empty() || Comm::world().rank() != 0) return;
  Fleet fleet = collect_fleet(g_fleet_dir, g_fleet_margin);
  const std::string path = g_fleet_dir + "/fleet.yaml";
  write_fleet_file(path, fleet_to_yaml(fleet));
  std::cerr << "rank 0: wrote the partial fleet report " << path << "\n";
}

}  // namespace

std::vector<AggregatePoint> aggregate_points(const Plan& plan, const DeviceInfo& device) {
  AggregatePoint memory{device.memory_name.empty() ? "DRAM" : device.memory_name, "gbs", nullptr, {}};
  AggregatePoint compute{"", "gflops", nullptr, {}};
  double best_memory = -1, best_compute = -1;
  // The points the probes offer (ProbeInfo::fleet): per kind, the largest value of its axis.
  for (const PlanPoint& p : plan.points) {
    const FleetAggregate& offer = p.probe->info().fleet;
    if (offer.kind == FleetAggregate::Kind::None || !p.params.count(offer.largest_axis)) continue;
    if (!std::all_of(offer.select.begin(), offer.select.end(), [&](const auto& kv) {
          const auto it = p.params.find(kv.first);
          return it != p.params.end() && it->second == kv.second;
        }))
      continue;
    const double value = param_real(p.params, offer.largest_axis);
    const bool is_memory = offer.kind == FleetAggregate::Kind::Memory;
    double& best = is_memory ? best_memory : best_compute;
    if (value <= best) continue;
    best = value;
    AggregatePoint& point = is_memory ? memory : compute;
    point.probe = p.probe;
    point.params = p.params;
    if (!is_memory) point.ceiling = offer.ceiling;
  }
  // Every rank names both entries alike, whatever its plan holds (the barriers pair them).
  if (compute.ceiling.empty()) compute.ceiling = "FP64.FMA";
  return {memory, compute};
}

FleetAggregates combine_aggregates(const std::vector<std::string>& per_rank) {
  // ceiling -> host ("" = job) -> per sample (sum of work, max time)
  struct Acc {
    std::vector<double> work, time;
  };
  std::map<std::string, std::map<std::string, Acc>> acc;
  for (const std::string& line : per_rank) {
    std::vector<std::string> fields = split(line, '\t');
    if (fields.empty()) continue;
    const std::string host = fields[0];
    for (std::size_t i = 1; i < fields.size(); ++i) {
      const std::size_t eq = fields[i].find('=');
      if (eq == std::string::npos) continue;
      const std::string ceiling = fields[i].substr(0, eq);
      std::vector<std::string> values = split(fields[i].substr(eq + 1), ',');
      if (values.size() < 2) continue;
      const double work = std::stod(values[0]);
      for (const std::string& scope : {std::string(), host}) {
        Acc& a = acc[ceiling][scope];
        const std::size_t n = values.size() - 1;
        if (a.work.size() < n) {
          a.work.resize(n, 0);
          a.time.resize(n, 0);
        }
        for (std::size_t s = 0; s < n; ++s) {
          a.work[s] += work;
          a.time[s] = std::max(a.time[s], std::stod(values[s + 1]));
        }
      }
    }
  }
  FleetAggregates out;
  for (const auto& [ceiling, scopes] : acc) {
    for (const auto& [scope, a] : scopes) {
      double best = 0;
      for (std::size_t s = 0; s < a.work.size(); ++s) best = std::max(best, per_second_1e9(a.work[s], a.time[s]));
      if (best <= 0) continue;
      if (scope.empty())
        out.job[ceiling] = best;
      else
        out.node[scope][ceiling] = best;
    }
  }
  return out;
}

FleetAggregates measure_aggregates(Comm& comm, Backend& backend, const std::vector<AggregatePoint>& points,
                                   const DeviceInfo& device, double launch_seconds, int samples) {
  std::string line = comm.host();
  for (const AggregatePoint& point : points) {
    std::unique_ptr<PreparedPoint> prepared;
    std::vector<double> times;
    std::string failure;
    try {
      if (point.probe != nullptr) {
        prepared = point.probe->prepare(point.params, device);
        // Size one launch to about launch_seconds (all ranks aim at the same length).
        std::int64_t reps = prepared->repetitions();
        double t = backend.time_launch(*prepared);
        for (int i = 0; i < 8 && t < 0.7 * launch_seconds; ++i) {
          const double scale = launch_seconds / std::max(t, 1e-6);
          reps = std::max<std::int64_t>(reps + 1, static_cast<std::int64_t>(static_cast<double>(reps) * scale));
          prepared->set_repetitions(reps);
          if (prepared->repetitions() != reps) break;  // fixed work per launch
          t = backend.time_launch(*prepared);
        }
      }
    } catch (const std::exception& e) {
      failure = e.what();
      prepared.reset();
    }
    for (int s = 0; s < samples; ++s) {
      comm.barrier("aggregate " + point.ceiling, kShortTimeout);
      if (!prepared) continue;
      try {
        times.push_back(backend.time_launch(*prepared));
      } catch (const std::exception& e) {
        failure = e.what();
        prepared.reset();
      }
    }
    if (prepared) {
      try {
        Check check = prepared->verify();
        if (!check.ok) failure = "verification failed: " + check.detail;
      } catch (const std::exception& e) {
        failure = e.what();
      }
    }
    if (!failure.empty()) {
      std::cerr << rank_prefix() << "error: aggregate " << point.ceiling << ": " << failure << "\n";
      continue;
    }
    if (!prepared || times.size() != static_cast<std::size_t>(samples)) continue;
    const Work w = prepared->work();
    std::ostringstream field;
    field.precision(17);
    field << "\t" << point.ceiling << "=" << (point.metric == "gbs" ? w.bytes() : w.flops);
    for (double t : times) field << "," << t;
    line += field.str();
  }
  FleetAggregates out = combine_aggregates(comm.allgather(line, "aggregate results", kShortTimeout));
  for (const AggregatePoint& point : points)
    if (point.probe != nullptr)
      out.points[point.ceiling] = point.probe->info().name + " " + params_to_string(point.params);
  return out;
}

void write_single_process_fleet(const std::string& dir, double margin) {
  try {
    Fleet fleet = collect_fleet(dir, margin);
    write_fleet_file(dir + "/fleet.yaml", fleet_to_yaml(fleet));
  } catch (const std::exception& e) {
    std::cerr << "warning: fleet.yaml not written: " << e.what() << "\n";
  }
}

namespace {

// All ranks agree on the plan: same config text, same backends. False (and said on stderr) when a
// rank could not load it or the ranks disagree.
bool agree_on_plan(Comm& c, const RunOptions& o, RunConfig& config, std::vector<std::string>& backends) {
  std::string mine = "error";
  try {
    config = choose_config(o);
    backends = chosen_backends(o, config);
    std::string names;
    for (const auto& b : backends) names += (names.empty() ? "" : ",") + b;
    mine = "config " + config_hash(config.text) + ", backends " + names;
  } catch (const std::exception& e) {
    std::cerr << rank_prefix() << "error: " << e.what() << "\n";
  }
  const std::vector<std::string> plans = c.allgather(mine, "plan", kShortTimeout);
  for (int r = 0; r < c.size(); ++r) {
    if (plans[r] == "error") {
      if (c.rank() == 0 && mine != "error")
        std::cerr << "error: rank " << r << " could not load the plan; nothing measured\n";
      return false;
    }
    if (plans[r] != plans[0]) {
      if (c.rank() == 0)
        std::cerr << "error: ranks disagree on the plan: rank " << r << " has " << plans[r] << ", rank 0 has "
                  << plans[0] << "\n";
      return false;
    }
  }
  return true;
}

// This rank's options for one backend: its bound threads, and where it ran in the job.
RunOptions rank_run_options(const RunOptions& o, const Comm& c, const RankBinding& binding, const std::string& name) {
  RunOptions ro = o;
  if (name == "cpu" && o.threads < 0 && binding.threads > 0) ro.threads = binding.threads;
  ro.extra_provenance["mpi_rank"] = std::to_string(c.rank());
  ro.extra_provenance["mpi_ranks"] = std::to_string(c.size());
  ro.extra_provenance["mpi_local_rank"] = std::to_string(c.local_rank());
  ro.extra_provenance["mpi_local_ranks"] = std::to_string(c.local_size());
  if (!binding.cores.empty()) {
    std::vector<int> cpus;
    for (const auto& core : binding.cores) cpus.insert(cpus.end(), core.begin(), core.end());
    ro.extra_provenance["mpi_cpus"] = cpu_list_text(cpus);
  }
  if (name == "cuda" && binding.cuda_device >= 0)
    ro.extra_provenance["mpi_cuda_device"] = std::to_string(binding.cuda_device);
  return ro;
}

// Per-device ceilings: one rank per node at a time, the others wait, so nothing shares its node's
// memory, caches or GPUs while it measures (ranks on other nodes run meanwhile: the job lasts
// about ranks-per-node runs, not ranks runs). Returns this rank's seconds; raises `status`.
double take_turns(Comm& c, int turns, const RunOptions& ro, const RunConfig& config, const std::string& name,
                  const std::string& rank_dir, int& status) {
  double turn_seconds = 0;
  for (int turn = 0; turn < turns; ++turn) {
    if (turn == c.local_rank()) {
      const double t0 = now_seconds();
      int st = 1;
      try {
        st = run_backend(ro, config, name, rank_dir);
      } catch (const std::exception& e) {
        std::cerr << rank_prefix() << "error: " << e.what() << "\n";
        st = 1;
      }
      std::cout.flush();
      status = std::max(status, st);
      turn_seconds = now_seconds() - t0;
    }
    c.barrier("turn of local rank " + std::to_string(turn) + " (" + name + ")", ro.mpi_timeout);
  }
  return turn_seconds;
}

struct AggregateRun {
  FleetAggregates aggregates;
  double seconds = 0;    // this rank's time measuring them
  bool stopped = false;  // a rank was stopped by a signal: the remaining backends are skipped
};

// Aggregates: the same points on every rank at once, so contention shows. Measured only when
// every rank could prepare them.
AggregateRun run_aggregates(Comm& c, const RunConfig& config, const RunOptions& ro, const std::string& name,
                            int& status) {
  Backend* backend = Registry::instance().backend(name);
  DeviceInfo device;
  std::vector<AggregatePoint> points;
  std::string ready = stop_requested() ? "stopped" : "ok";
  if (ready == "ok") {
    try {
      const BackendConfig& bc = *config.backend(name);
      const int threads = name == "cpu" && ro.threads >= 0 ? ro.threads : bc.threads;
      device = backend->describe(threads);
      points = aggregate_points(build_plan(config, bc, device), device);
    } catch (const std::exception& e) {
      std::cerr << rank_prefix() << "error: aggregates: " << e.what() << "\n";
      ready = "error";
      status = std::max(status, 1);
    }
  }
  const std::vector<std::string> readiness = c.allgather(ready, "aggregates", kShortTimeout);
  AggregateRun out;
  out.stopped = std::any_of(readiness.begin(), readiness.end(), [](const std::string& s) { return s == "stopped"; });
  if (std::all_of(readiness.begin(), readiness.end(), [](const std::string& s) { return s == "ok"; })) {
    const double t0 = now_seconds();
    const double launch = std::max(0.05, 5 * config.measurement.target_launch_seconds);
    out.aggregates = measure_aggregates(c, *backend, points, device, launch, 5);
    out.seconds = now_seconds() - t0;
  } else if (c.rank() == 0) {
    std::cerr << "note: aggregates not measured (" << name << "): a rank was stopped or could not prepare them\n";
  }
  return out;
}

// Timing: how much of the job was coordination rather than measuring. Turns are sequential (their
// times add up); the aggregate launches overlap (the longest counts); the total runs from
// `since` (plus `before`: MPI start-up, for the first backend). Gathered on every rank, returned
// on rank 0 only.
std::map<std::string, double> job_timing(Comm& c, int turns, double turn_seconds, double aggregate_seconds,
                                         double since, double before) {
  const std::vector<std::string> measured = c.allgather(
      std::to_string(c.local_rank()) + " " + std::to_string(turn_seconds) + " " + std::to_string(aggregate_seconds),
      "timing", kShortTimeout);
  if (c.rank() != 0) return {};
  std::vector<double> longest_turn(static_cast<std::size_t>(turns), 0.0);
  double longest_aggregate = 0;
  for (const auto& m : measured) {
    std::istringstream in(m);
    int local = 0;
    double t = 0, a = 0;
    in >> local >> t >> a;
    if (local >= 0 && local < turns) longest_turn[local] = std::max(longest_turn[local], t);
    longest_aggregate = std::max(longest_aggregate, a);
  }
  double turns_seconds = 0;
  for (double t : longest_turn) turns_seconds += t;
  const double total_seconds = now_seconds() - since + before;
  return {{"total", total_seconds},
          {"turns", turns_seconds},
          {"aggregates", longest_aggregate},
          {"coordination", std::max(0.0, total_seconds - turns_seconds - longest_aggregate)}};
}

// Rank 0: aggregates.yaml and fleet.yaml of one backend's directory, and the summary. Returns the
// status it adds (1: the report failed, or ranks are missing from it).
int write_fleet_report(const Comm& c, const std::string& dir, const FleetAggregates& aggregates, double margin) {
  try {
    ensure_writable_directory(dir);
    write_file_atomically(dir + "/aggregates.yaml", aggregates_to_yaml(aggregates), inside_output_directory());
    Fleet fleet = collect_fleet(dir, margin);
    write_fleet_file(dir + "/fleet.yaml", fleet_to_yaml(fleet));
    std::cout << "\n";
    print_fleet_summary(std::cout, fleet, dir + "/fleet.yaml");
    std::cout.flush();
    return static_cast<int>(fleet.ranks.size()) < c.size() ? 1 : 0;
  } catch (const std::exception& e) {
    std::cerr << "rank 0: error: fleet report: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int run_fleet(const RunOptions& o) {
  Comm& c = Comm::world();
  const double start = now_seconds();
  if (!(o.outlier_margin >= 0 && o.outlier_margin < 1))
    throw InputError("--outlier-margin: " + std::to_string(o.outlier_margin) + " is not in [0, 1)");
  RankBinding binding = apply_rank_binding(c);
  for (const auto& note : binding.notes) std::cerr << rank_prefix() << "note: " << note << "\n";

  RunConfig config;
  std::vector<std::string> backends;
  if (!agree_on_plan(c, o, config, backends)) return 1;

  std::string base = o.out_dir;
  if (base.empty()) {
    std::string proposal = c.rank() == 0 ? "results/" + slug(c.host(), "host") + "/fleet-" + utc_now(kUtcCompact) : "";
    base = c.allgather(proposal, "output directory", kShortTimeout)[0];
  }

  int status = 0;
  int turns = 0;
  for (const auto& n : c.allgather(std::to_string(c.local_size()), "node sizes", kShortTimeout))
    turns = std::max(turns, std::stoi(n));
  // MPI start-up and the plan agreement count as coordination of the first backend's run.
  const double setup_seconds = now_seconds() - start + c.init_seconds();
  for (std::size_t b = 0; b < backends.size(); ++b) {
    const std::string& name = backends[b];
    const std::string bdir = backends.size() > 1 ? base + "/" + name : base;
    const double backend_start = now_seconds();
    const RunOptions ro = rank_run_options(o, c, binding, name);
    g_fleet_dir = bdir;
    g_fleet_margin = o.outlier_margin;
    if (c.rank() == 0) c.set_timeout_hook(write_partial_fleet);

    const std::string rank_dir = bdir + "/rank-" + std::to_string(c.rank());
    const double turn_seconds = take_turns(c, turns, ro, config, name, rank_dir, status);
    AggregateRun aggregates = run_aggregates(c, config, ro, name, status);
    aggregates.aggregates.timing =
        job_timing(c, turns, turn_seconds, aggregates.seconds, backend_start, b == 0 ? setup_seconds : 0);
    if (c.rank() == 0) status = std::max(status, write_fleet_report(c, bdir, aggregates.aggregates, o.outlier_margin));
    c.set_timeout_hook(nullptr);
    // A signal stops the remaining backends on every rank alike (the readiness was gathered).
    if (aggregates.stopped) break;
  }

  // Every rank exits with the job's worst status, so the launcher reports the failure.
  int worst = status;
  for (const auto& s : c.allgather(std::to_string(status), "finish", kShortTimeout))
    worst = std::max(worst, std::stoi(s));
  return worst;
}

}  // namespace roofprobe
