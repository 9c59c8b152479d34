// One backend's run into one directory: choose the config and backends, measure the plan (or
// continue an interrupted run), fit the samples, write machine.yaml and its plots, print the
// summary. The single-process `roofprobe run` (driver/cli) and each rank of an MPI job
// (driver/fleet) call it alike. It sits above report/ and plot/, since a run ends with the fit,
// the plots and the summary, and below fleet/ and cli/.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "driver/run/config.hpp"

namespace roofprobe {

struct RunOptions {
  std::string config_path;  // empty: embedded default (or quick)
  bool quick = false;
  std::string backend = "all";  // cpu | cuda | all
  std::string out_dir;          // empty: results/<host>/<device>/<UTC time>/
  bool quiet = false;
  bool no_wait = false;        // another run holds the device's lock: refuse instead of waiting
  int threads = -1;            // CPU threads override (-1: config)
  bool oversubscribe = false;  // allow more CPU threads than cores
  std::string resume_dir;      // continue the interrupted run in this directory
  std::string command_line;
  // Under an MPI launcher (driver/fleet/fleet_run.hpp): outliers are ranks more than this fraction
  // below its device's median; a rank waits at most mpi_timeout seconds for another's turn.
  double outlier_margin = 0.05;
  double mpi_timeout = 3600;
  std::map<std::string, std::string> extra_provenance;  // added to the machine file's provenance
  // --power-caps: after the plan, measure the FMA, tensor and device-memory points again under
  // each of these power limits, watts (driver/session/power_caps.hpp); empty: never touch the limit.
  std::vector<double> power_caps;
};

// The config file of the options, or the embedded default (quick.yaml with --quick); --quick with
// a file keeps its probes and axes but measures with quick's budget.
RunConfig choose_config(const RunOptions& options);

// The backends of `config` that --backend selects and this build and machine can run, in the
// config's order; a note on stderr for each one skipped. Throws InputError when none is left, or
// when the one asked for by name cannot run.
std::vector<std::string> chosen_backends(const RunOptions& options, const RunConfig& config);

// A new run of `backend` into `out_dir` (empty: results/<host>/<device>/<UTC time>/), which must
// not hold a run already. Returns the exit status: 0, 1 when a point failed, 128 + signal when
// stopped (the directory can then be resumed).
int run_backend(const RunOptions& options, const RunConfig& config, const std::string& backend,
                const std::string& out_dir);

// Continues the interrupted run in options.resume_dir with the config it was started with.
int resume_run(const RunOptions& options);

}  // namespace roofprobe
