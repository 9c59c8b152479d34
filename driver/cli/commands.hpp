// The subcommands behind the CLI (main.cpp only parses arguments). Each returns the process exit
// status and throws InputError / MeasurementError for one-line errors.
#pragma once

#include <string>
#include <vector>

#include "driver/session/run_session.hpp"

namespace roofprobe {

// RunOptions: driver/session/run_session.hpp.
int run_command(const RunOptions& options);

struct FitOptions {
  std::string sweep_csv;       // roofprobe sweep.csv
  std::string bandwidth_csv;   // an external sweep (driver/fit/external_sweep.hpp)
  std::string from = "csv";    // its format: csv | ert | gpu-benches | likwid
  std::string device = "cpu";  // cpu | gpu: the device kind and its memory's name (DRAM, HBM)
  std::string levels;          // "L2,HBM": the levels' names, nearest first
  std::string cache_sizes;     // "32KiB,1MiB,32MiB": the caches the sweep passes through
  std::string gpu;             // a reference machine file (name or path): its caches name the levels
  std::string out;
};
int fit_command(const FitOptions& options);

struct PlotCommandOptions {
  std::string machine_file;
  std::string out_dir;         // empty: plots/ beside the machine file
  std::string format = "png";  // png | svg | pdf
  std::string kinds;           // comma-separated views
  bool kinds_given = false;    // --kind was given (then it must name a view); else every view with data
  double fma_ratio = -1;       // FMA fraction for the FMA-mix ceilings; < 0: none
  std::string precision;       // hierarchical: precision family (fp64, ..., all); empty: fp64
  std::string points_file;     // application points CSV; empty: none
};
int plot_command(const PlotCommandOptions& options);

struct PointsOptions {
  std::string ncu_csv;  // Nsight Compute CSV export (ncu --csv --page raw)
  std::string out;      // empty: stdout; otherwise written atomically
  std::string dram_level = "HBM";
  // 0: by the export's compute capability (512 only where that is Volta's one HMMA shape).
  double tensor_flops_per_instruction = 0;
  bool full_names = false;
  // --ncu-metrics: print the --metrics list instead, for --arch or the --machine file's device
  // (neither: every architecture's names).
  bool ncu_metrics = false;
  std::string arch;
  std::string machine_file;
};
int points_command(const PointsOptions& options);
int validate_command(const std::string& machine_file, bool strict);
// `arch` (a compute capability, "9.0"): lists which combinations of each CUDA probe's choice axes
// exist on it (Probe::exists_on) instead of the probes' axes.
int list_command(const std::string& backend, bool feeds_yaml = false, const std::string& arch = std::string());

struct ExportOptions {
  std::string machine_file;
  std::string format;               // ert-json | nersc | rocprof-csv | json (driver/report/export.hpp)
  std::string out;                  // empty: stdout; otherwise written atomically
  std::string precision = "fp64";   // nersc: the ceilings drawn; ert-json: the one listed first
  bool mix = false;                 // nersc: the FMA-mix ceilings too
  std::string points_file;          // nersc: kernel points (roofprobe points)
  std::string names = "roofprobe";  // ert-json: roofprobe | ert
  bool names_given = false;         // --names on the command line (a format without names refuses it)
};
int export_command(const ExportOptions& options);

struct CompareOptions {
  std::vector<std::string> files;  // two or more; ratios are to the first
  std::string format = "text";     // text | markdown | csv
  std::string plot;                // overlay roofline image (.png | .svg | .pdf); empty: none
  bool verdict = false;            // two files, measured then reference: driver/report/verdict.hpp
};
int compare_command(const CompareOptions& options);

}  // namespace roofprobe
