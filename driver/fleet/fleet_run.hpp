// `roofprobe run` under an MPI launcher: ranks agree on the plan, bind to their cores/GPU, take
// turns measuring their own device alone on its node (the others wait at a barrier), then measure the
// aggregate points all at once; rank 0 writes aggregates.yaml and fleet.yaml and prints the
// outlier table. Every wait is bounded; a failing rank reports "rank R: error: ..." and the job
// ends with a non-zero status on every rank, the finished ranks' files kept.
#pragma once

#include <string>
#include <vector>

#include "driver/fleet/fleet.hpp"
#include "driver/run/config.hpp"
#include "driver/run/plan.hpp"
#include "driver/session/run_session.hpp"

namespace roofprobe {

class Comm;

// One aggregate point: the plan's farthest memory level (bandwidth read at the largest working
// set) or its FMA peak (flops fp64 fma at the largest flops_per_element).
struct AggregatePoint {
  std::string ceiling;           // "DRAM" / "HBM" / "FP64.FMA"
  std::string metric;            // gbs | gflops
  const Probe* probe = nullptr;  // null: the plan has no such point on this rank
  Params params;
};
// Always two entries (memory, FMA) so every rank runs the same number of barriers.
std::vector<AggregatePoint> aggregate_points(const Plan& plan, const DeviceInfo& device);

// Collective: every rank runs point i at the same time, `samples` timed launches each between
// barriers; rate = sum of work / longest time, best over samples; per host and for the job.
FleetAggregates measure_aggregates(Comm& comm, Backend& backend, const std::vector<AggregatePoint>& points,
                                   const DeviceInfo& device, double launch_seconds, int samples);

// Combines the per-rank lines "host|ceiling=work:t1,t2,...;..." (pure; unit-tested).
// Line format: "host\tCEILING=WORK,T1,T2,...\t..." (WORK bytes or FLOPs per launch, T seconds).
FleetAggregates combine_aggregates(const std::vector<std::string>& per_rank);

// Every rank loads the plan (choose_config, chosen_backends), then measures each backend with
// run_backend (driver/session/run_session.hpp) into DIR/rank-R in its turn.
int run_fleet(const RunOptions& options);

// A single-process run with --out: DIR/fleet.yaml listing that one rank (best effort).
void write_single_process_fleet(const std::string& dir, double margin);

}  // namespace roofprobe
