// The subcommands behind the CLI (main.cpp only parses arguments). Each returns the process exit
// status and throws InputError / MeasurementError for one-line errors.
#pragma once

#include <string>

namespace roofprobe {

struct RunOptions {
  std::string config_path;     // empty: embedded default (or quick)
  bool quick = false;
  std::string backend = "all"; // cpu | cuda | all
  std::string out_dir;         // empty: results/<host>/<device>/<UTC time>/
  bool quiet = false;
  int threads = -1;            // CPU threads override (-1: config)
  std::string resume_dir;      // continue the interrupted run in this directory
  std::string command_line;
};
int run_command(const RunOptions& options);

struct FitOptions {
  std::string sweep_csv;       // roofprobe sweep.csv
  std::string bandwidth_csv;   // external working_set_bytes,gbs CSV
  std::string out;
};
int fit_command(const FitOptions& options);

int plot_command(const std::string& machine_file, const std::string& out_dir, const std::string& format);
int validate_command(const std::string& machine_file);
int list_command(const std::string& backend);

}  // namespace roofprobe
