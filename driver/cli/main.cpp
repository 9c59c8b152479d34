// roofprobe command line: argument parsing only (CLI11); the work is in commands.cpp.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>

#include "driver/cli/commands.hpp"
#include "driver/model/errors.hpp"
#include "driver/fleet/fleet.hpp"
#include "driver/report/points.hpp"
#include "driver/version.hpp"

namespace {

std::string joined_command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i ? " " : "") + std::string(argv[i]);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"roofprobe: empirical roofline characterization (memory levels, compute ceilings)"};
  app.set_version_flag("--version",
                       std::string("roofprobe ") + roofprobe::kVersion + " (" + roofprobe::kGitRevision + ")");
  app.require_subcommand(1);

  roofprobe::RunOptions run;
  run.command_line = joined_command_line(argc, argv);
  CLI::App* run_cmd = app.add_subcommand("run", "Measure this machine and write machine.yaml, sweep.csv and plots/");
  run_cmd->add_option("--config", run.config_path,
                      "Run configuration (YAML); default: the embedded configs/default.yaml");
  run_cmd->add_flag("--quick", run.quick,
                    "Short run (embedded configs/quick.yaml; with --config: quick measurement budget)");
  run_cmd->add_option("--backend", run.backend, "cpu | cuda | all")->capture_default_str();
  run_cmd->add_option("--out", run.out_dir, "Output directory (default results/<host>/<device>/<UTC time>/)");
  run_cmd->add_option("--threads", run.threads, "CPU threads (default: config, 0 = all cores)")
      ->check(CLI::Range(0, 1 << 20));
  run_cmd->add_flag("--oversubscribe", run.oversubscribe,
                    "Allow more CPU threads than the cores hwloc reports (at most 4 per core)");
  run_cmd->add_flag("--quiet,-q", run.quiet, "No progress bar");
  run_cmd->add_option("--resume", run.resume_dir,
                      "Continue the interrupted run in DIR (same config and device), then write the full machine.yaml");
  run_cmd
      ->add_option("--outlier-margin", run.outlier_margin,
                   "fleet.yaml: a rank more than this fraction below the fleet median on a ceiling is an outlier")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));
  run_cmd
      ->add_option("--mpi-timeout", run.mpi_timeout,
                   "Under mpirun/srun: seconds a rank waits for another rank's turn before ending the job")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);

  roofprobe::FitOptions fit;
  CLI::App* fit_cmd =
      app.add_subcommand("fit", "Fit a recorded sweep (or an external bandwidth CSV) into a machine file");
  fit_cmd->add_option("sweep", fit.sweep_csv, "sweep.csv written by roofprobe run");
  fit_cmd->add_option("--bandwidth-csv", fit.bandwidth_csv,
                      "An external bandwidth sweep: a CSV with columns working_set_bytes,gbs, or another tool's "
                      "output (--from)");
  fit_cmd
      ->add_option("--from", fit.from,
                   "Format of --bandwidth-csv: csv, ert (ERT's try.NNN or max files), gpu-benches (gpu-cache, "
                   "gpu-l2-cache tables) or likwid (likwid-bench output, runs concatenated)")
      ->capture_default_str();
  fit_cmd->add_option("--device", fit.device, "The swept device: cpu (memory DRAM) or gpu (memory HBM)")
      ->capture_default_str();
  fit_cmd->add_option("--levels", fit.levels,
                      "Names of the levels the sweep shows, nearest first (e.g. L2,HBM): the fit must find as many");
  fit_cmd->add_option("--cache-sizes", fit.cache_sizes,
                      "Capacities of the caches the sweep passes through, nearest first (e.g. 32KiB,1MiB,32MiB): "
                      "the levels are named after them");
  fit_cmd->add_option("--out", fit.out, "Machine file to write")->required();

  std::string machine_file, plot_out, plot_format = "png";
  CLI::App* plot_cmd = app.add_subcommand("plot", "Plot a machine file with gnuplot");
  plot_cmd->add_option("machine", machine_file, "machine.yaml")->required();
  plot_cmd->add_option("--out", plot_out, "Output directory (default: plots/ beside the machine file)");
  plot_cmd->add_option("--format", plot_format, "png | svg | pdf")->capture_default_str();
  std::string plot_kinds, plot_points;
  double plot_fma_ratio = -1;
  plot_cmd->add_option("--kind", plot_kinds,
                       "Views, comma-separated: bandwidth, hierarchical, instruction, shared, flops, scaling "
                       "(default: every view the machine file has data for)");
  plot_cmd
      ->add_option("--fma-ratio", plot_fma_ratio,
                   "hierarchical: add the FMA-mix ceiling peak x (2A + 1 - A)/2 of each FMA ceiling, A in [0, 1]")
      ->check(CLI::Range(0.0, 1.0));
  plot_cmd->add_option("--points", plot_points,
                       "Overlay application kernels: CSV with kernel,level,intensity,performance[,kind] "
                       "(kind flop: FLOP/byte and GFLOP/s; instruction: warp instructions/transaction and GIPS)");

  roofprobe::PointsOptions points_options;
  CLI::App* points_cmd =
      app.add_subcommand("points", "Convert an Nsight Compute CSV export into a points file for plot --points");
  points_cmd
      ->add_option("--ncu-csv", points_options.ncu_csv,
                   "LC_ALL=C ncu --csv --page raw export with the roofline metrics: gpu__time_duration.sum, "
                   "smsp__inst_executed.sum, smsp__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum, "
                   "sm__inst_executed_pipe_tensor.sum, l1tex__t_bytes.sum, lts__t_bytes.sum, dram__bytes.sum "
                   "(or their sector counters); the whole command is below")
      ->required();
  points_cmd->footer(std::string("Collect the counters with (LC_ALL=C: other locales' numbers are refused):\n"
                                 "  LC_ALL=C ncu --csv --page raw --metrics ") +
                     roofprobe::kNcuMetrics + " ./app > app-ncu.csv");
  points_cmd->add_option("--out", points_options.out, "Points file to write (default: stdout)");
  points_cmd->add_option("--dram-level", points_options.dram_level, "Level name for the dram__ metrics")
      ->capture_default_str();
  points_cmd
      ->add_option("--tensor-flops-per-inst", points_options.tensor_flops_per_instruction,
                   "FLOPs per tensor-pipe warp instruction (512: V100 HMMA.884; 4096: mma.sync m16n8k16 on A100/H100)")
      ->capture_default_str();
  points_cmd->add_flag("--full-names", points_options.full_names,
                       "Keep ncu's full kernel names (return type, template and argument lists)");

  std::string fleet_dir;
  double fleet_margin = roofprobe::kDefaultOutlierMargin;
  CLI::App* fleet_cmd = app.add_subcommand(
      "fleet", "Rebuild DIR/fleet.yaml (per-rank ceilings, median/min/max, outliers) from DIR/rank-*/machine.yaml");
  fleet_cmd->add_option("dir", fleet_dir, "Output directory of an MPI run (or of a single run)")->required();
  fleet_cmd->add_option("--outlier-margin", fleet_margin, "Outlier: more than this fraction below the fleet median")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.99));

  std::string validate_file;
  CLI::App* validate_cmd = app.add_subcommand("validate", "Check a machine file: schema, types, units, finiteness");
  validate_cmd->add_option("machine", validate_file, "machine.yaml")->required();
  bool validate_strict = false;
  validate_cmd->add_flag("--strict", validate_strict, "Physical-consistency warnings are errors");

  std::string list_backend = "all";
  CLI::App* list_cmd = app.add_subcommand("list", "List the probes, their axes and backends");
  list_cmd->add_option("--backend", list_backend, "cpu | cuda | all")->capture_default_str();
  bool list_feeds = false;
  list_cmd->add_flag("--feeds", list_feeds,
                     "Print the probes' feeds as a feeds.yaml (what `run` writes beside sweep.csv; `fit` reads it)");

  roofprobe::ExportOptions export_options;
  CLI::App* export_cmd = app.add_subcommand("export", "Write a machine file in another tool's format");
  export_cmd->add_option("machine", export_options.machine_file, "machine.yaml")->required();
  export_cmd
      ->add_option("--format", export_options.format,
                   "ert-json (ERT roofline.json) | nersc (NERSC roofline scripts) | rocprof-csv (AMD roofline.csv) | "
                   "json (the machine file as JSON)")
      ->required();
  export_cmd->add_option("--out", export_options.out, "File to write (default: stdout)");
  export_cmd
      ->add_option("--precision", export_options.precision,
                   "nersc: the ceilings of this type, its FMA peak first (fp64, fp32, fp16, bf16, ...)")
      ->capture_default_str();
  export_cmd->add_option("--points", export_options.points_file,
                         "nersc: kernel points (from `roofprobe points`) appended as the script's AI_L1/AI_L2/AI_HBM, "
                         "FLOPS and labels lines");
  export_cmd
      ->add_option("--names", export_options.names,
                   "ert-json: roofprobe (FP64.FMA, HBM) or ert (ERT's own: FP64 GFLOPs, DRAM)")
      ->capture_default_str();

  roofprobe::CompareOptions compare_options;
  CLI::App* compare_cmd =
      app.add_subcommand("compare", "Ceilings of several machine files side by side, ratios to the first");
  compare_cmd
      ->add_option("machines", compare_options.files, "Two or more machine files (e.g. results/reference/*.yaml)")
      ->required();
  compare_cmd->add_option("--format", compare_options.format, "text | markdown | csv")->capture_default_str();
  compare_cmd->add_option("--plot", compare_options.plot,
                          "Also draw their rooflines on one plot (FILE.png | .svg | .pdf)");
  compare_cmd->add_flag("--verdict", compare_options.verdict,
                        "MEASURED REFERENCE: each measured ceiling vs its peak at the measured clock and the "
                        "reference's spec and published figures, with a verdict");

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
    // An option given with an empty value is a mistake, not a request for the default.
    for (const auto& [cmd, option] : {std::pair{run_cmd, "--out"},
                                      {run_cmd, "--config"},
                                      {run_cmd, "--resume"},
                                      {fit_cmd, "--out"},
                                      {export_cmd, "--out"},
                                      {points_cmd, "--out"},
                                      {plot_cmd, "--out"},
                                      {compare_cmd, "--plot"}})
      if (*cmd && cmd->count(option) > 0 && cmd->get_option(option)->as<std::string>().empty())
        throw roofprobe::InputError(std::string(option) + ": empty value (leave the option out for the default)");
    if (*run_cmd) return roofprobe::run_command(run);
    if (*fit_cmd) return roofprobe::fit_command(fit);
    if (*plot_cmd)
      return roofprobe::plot_command({machine_file, plot_out, plot_format, plot_kinds, plot_fma_ratio, plot_points});
    if (*points_cmd) return roofprobe::points_command(points_options);
    if (*validate_cmd) return roofprobe::validate_command(validate_file, validate_strict);
    if (*fleet_cmd) return roofprobe::fleet_command(fleet_dir, fleet_margin);
    if (*list_cmd) return roofprobe::list_command(list_backend, list_feeds);
    if (*export_cmd) return roofprobe::export_command(export_options);
    if (*compare_cmd) return roofprobe::compare_command(compare_options);
  } catch (const roofprobe::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
