// roofprobe command line: argument parsing only (CLI11); the work is in commands.cpp.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "driver/commands.hpp"
#include "driver/errors.hpp"
#include "driver/version.hpp"

namespace {

std::string joined_command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i ? " " : "") + std::string(argv[i]);
  return out;
}

// Threads stay on their cores so first-touched data stays near them; set before the OpenMP
// runtime starts, and only where the user has not chosen.
void default_thread_binding() {
  setenv("OMP_PROC_BIND", "close", 0);
  setenv("OMP_PLACES", "cores", 0);
}

}  // namespace

int main(int argc, char** argv) {
  default_thread_binding();
  CLI::App app{"roofprobe: empirical roofline characterization (memory levels, compute ceilings)"};
  app.set_version_flag("--version", std::string("roofprobe ") + roofprobe::kVersion + " (" + roofprobe::kGitRevision + ")");
  app.require_subcommand(1);

  roofprobe::RunOptions run;
  run.command_line = joined_command_line(argc, argv);
  CLI::App* run_cmd = app.add_subcommand("run", "Measure this machine and write machine.yaml, sweep.csv and plots/");
  run_cmd->add_option("--config", run.config_path, "Run configuration (YAML); default: the embedded configs/default.yaml");
  run_cmd->add_flag("--quick", run.quick, "Short run (embedded configs/quick.yaml; with --config: quick measurement budget)");
  run_cmd->add_option("--backend", run.backend, "cpu | cuda | all")->capture_default_str();
  run_cmd->add_option("--out", run.out_dir, "Output directory (default results/<host>/<device>/<UTC time>/)");
  run_cmd->add_option("--threads", run.threads, "CPU threads (default: config, 0 = all cores)");
  run_cmd->add_flag("--quiet,-q", run.quiet, "No progress bar");
  run_cmd->add_option("--resume", run.resume_dir,
                      "Continue the interrupted run in DIR (same config and device), then write the full machine.yaml");

  roofprobe::FitOptions fit;
  CLI::App* fit_cmd = app.add_subcommand("fit", "Fit a recorded sweep (or an external bandwidth CSV) into a machine file");
  fit_cmd->add_option("sweep", fit.sweep_csv, "sweep.csv written by roofprobe run");
  fit_cmd->add_option("--bandwidth-csv", fit.bandwidth_csv, "External CSV with columns working_set_bytes,gbs");
  fit_cmd->add_option("--out", fit.out, "Machine file to write")->required();

  std::string machine_file, plot_out, plot_format = "png";
  CLI::App* plot_cmd = app.add_subcommand("plot", "Plot a machine file with gnuplot");
  plot_cmd->add_option("machine", machine_file, "machine.yaml")->required();
  plot_cmd->add_option("--out", plot_out, "Output directory (default: plots/ beside the machine file)");
  plot_cmd->add_option("--format", plot_format, "png | svg | pdf")->capture_default_str();

  std::string validate_file;
  CLI::App* validate_cmd = app.add_subcommand("validate", "Check a machine file: schema, types, units, finiteness");
  validate_cmd->add_option("machine", validate_file, "machine.yaml")->required();

  std::string list_backend = "all";
  CLI::App* list_cmd = app.add_subcommand("list", "List the probes, their axes and backends");
  list_cmd->add_option("--backend", list_backend, "cpu | cuda | all")->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "error: " << e.what() << " (see roofprobe --help)\n";
    return 2;
  }

  try {
    if (*run_cmd) return roofprobe::run_command(run);
    if (*fit_cmd) return roofprobe::fit_command(fit);
    if (*plot_cmd) return roofprobe::plot_command(machine_file, plot_out, plot_format);
    if (*validate_cmd) return roofprobe::validate_command(validate_file);
    if (*list_cmd) return roofprobe::list_command(list_backend);
  } catch (const roofprobe::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
