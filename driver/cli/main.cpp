// roofprobe command line: argument parsing only (CLI11); the work is in commands.cpp.
#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "driver/cli/commands.hpp"
#include "driver/model/errors.hpp"
#include "driver/model/pending_files.hpp"
#include "driver/fleet/fleet.hpp"
#include "driver/report/points.hpp"
#include "driver/session/power_caps.hpp"
#include "driver/version.hpp"

namespace {

std::string joined_command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) out += (i ? " " : "") + std::string(argv[i]);
  return out;
}

// A number in [lo, hi]. CLI11's Range compares, and NaN compares false both ways: `nan` passed
// it, and --outlier-margin nan was refused only after a whole run, when fleet.yaml was written.
CLI::Validator number_in(double lo, double hi) {
  const std::string range = "[" + CLI::detail::to_string(lo) + ", " + CLI::detail::to_string(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) {
        char* end = nullptr;
        const double v = std::strtod(text.c_str(), &end);
        return end != text.c_str() && *end == '\0' && v >= lo && v <= hi ? std::string()
                                                                         : "'" + text + "' is not a number in " + range;
      },
      "NUMBER in " + range);
}

// One subcommand: its CLI11 app, the options whose empty value is a mistake rather than a
// request for the default, and what it runs (its options live in the closure).
struct Subcommand {
  CLI::App* app;
  std::vector<std::string> nonempty;
  std::function<int()> run;
};

Subcommand add_run_command(CLI::App& app, const std::string& command_line) {
  auto o = std::make_shared<roofprobe::RunOptions>();
  o->command_line = command_line;
  CLI::App* run_cmd = app.add_subcommand("run", "Measure this machine and write machine.yaml, sweep.csv and plots/");
  run_cmd->add_option("--config", o->config_path,
                      "Run configuration (YAML); default: the embedded configs/default.yaml");
  run_cmd->add_flag("--quick", o->quick,
                    "Short run (embedded configs/quick.yaml; with --config: quick measurement budget)");
  run_cmd->add_option("--backend", o->backend, "cpu | cuda | all")->capture_default_str();
  run_cmd->add_option(
      "--out", o->out_dir,
      "Output directory (default results/<host>/<device>/<UTC time>/): machine.yaml, sweep.csv, run.yaml, feeds.yaml, "
      "config.yaml, fleet.yaml, plots/ and .roofprobe.lock (locked while a run writes there); with MPI also "
      "aggregates.yaml and rank-R/");
  run_cmd->add_option("--threads", o->threads, "CPU threads (default: config, 0 = all cores)")
      ->check(CLI::Range(0, 1 << 20));
  run_cmd->add_flag("--oversubscribe", o->oversubscribe,
                    "Allow more CPU threads than the cores hwloc reports (at most 4 per core)");
  run_cmd->add_flag("--quiet,-q", o->quiet, "No progress bar");
  run_cmd->add_flag("--no-wait", o->no_wait,
                    "Refuse at once, naming the run in the way, when another run measures the device (default: "
                    "wait for it; the device lock is shared by every user's runs on the node)");
  run_cmd->add_option("--resume", o->resume_dir,
                      "Continue the interrupted run in DIR (same config and device), then write the full machine.yaml");
  run_cmd
      ->add_option(
          "--outlier-margin", o->outlier_margin,
          "fleet.yaml: a rank more than this fraction below its device model's median on a ceiling is an outlier")
      ->capture_default_str()
      ->check(number_in(0.0, 0.99));
  run_cmd
      ->add_option("--mpi-timeout", o->mpi_timeout,
                   "Under mpirun/srun: seconds a rank waits for another rank's turn before ending the job")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](std::string& text) {
            char* end = nullptr;
            const double v = std::strtod(text.c_str(), &end);
            // CLI11's PositiveNumber prints its range with DBL_MAX's 309 digits.
            return end != text.c_str() && *end == '\0' && std::isfinite(v) && v > 0
                       ? std::string()
                       : "'" + text + "' is not a positive number of seconds";
          },
          "SECONDS > 0"));
  auto power_caps = std::make_shared<std::string>();
  CLI::Option* caps_option =
      run_cmd->add_option("--power-caps", *power_caps,
                          "W1,W2,...: after the run, measure the FMA, tensor and device-memory ceilings again under "
                          "each GPU power limit (watts; sets a machine-wide setting, needs root; the limit is "
                          "restored at the end: docs/ENERGY.md)");
  return {run_cmd, {"--out", "--config", "--resume"}, [o, power_caps, caps_option] {
            if (caps_option->count() > 0) o->power_caps = roofprobe::parse_power_caps(*power_caps);
            return roofprobe::run_command(*o);
          }};
}

Subcommand add_fit_command(CLI::App& app) {
  auto o = std::make_shared<roofprobe::FitOptions>();
  CLI::App* fit_cmd =
      app.add_subcommand("fit", "Fit a recorded sweep (or an external bandwidth CSV) into a machine file");
  fit_cmd->add_option("sweep", o->sweep_csv, "sweep.csv written by roofprobe run");
  fit_cmd->add_option("--bandwidth-csv", o->bandwidth_csv,
                      "An external bandwidth sweep: a CSV with columns working_set_bytes,gbs, or another tool's "
                      "output (--from)");
  fit_cmd
      ->add_option("--from", o->from,
                   "Format of --bandwidth-csv: csv, ert (ERT's try.NNN or max files), gpu-benches (gpu-cache, "
                   "gpu-l2-cache tables) or likwid (likwid-bench output, runs concatenated)")
      ->capture_default_str();
  fit_cmd->add_option("--device", o->device, "The swept device: cpu (memory DRAM) or gpu (memory HBM)")
      ->capture_default_str();
  fit_cmd->add_option("--levels", o->levels,
                      "Names of the levels the sweep shows, nearest first (e.g. L2,HBM): the fit must find as many");
  fit_cmd->add_option("--cache-sizes", o->cache_sizes,
                      "Capacities of the caches the sweep passes through, nearest first (e.g. 32KiB,1MiB,32MiB): "
                      "the levels are named after them");
  fit_cmd->add_option("--gpu", o->gpu,
                      "The GPU the sweep ran on: a reference machine file (results/reference/NAME.yaml, e.g. "
                      "h100-pcie, or a path) whose caches and memory peak name the levels");
  fit_cmd->add_option("--out", o->out, "Machine file to write")->required();
  return {fit_cmd, {"--out"}, [o] { return roofprobe::fit_command(*o); }};
}

Subcommand add_plot_command(CLI::App& app) {
  auto o = std::make_shared<roofprobe::PlotCommandOptions>();
  CLI::App* plot_cmd = app.add_subcommand("plot", "Plot a machine file with gnuplot");
  plot_cmd->add_option("machine", o->machine_file, "machine.yaml")->required();
  plot_cmd->add_option("--out", o->out_dir,
                       "Output directory (default: plots/ beside the machine file): per view VIEW.FORMAT, its "
                       "gnuplot script VIEW.gp and data VIEW_*.dat (a file of one of these names that roofprobe "
                       "did not write is never replaced)");
  plot_cmd->add_option("--format", o->format, "png | svg | pdf")->capture_default_str();
  plot_cmd
      ->add_option("--kind", o->kinds,
                   "Views, comma-separated: bandwidth, hierarchical, instruction, shared, flops, scaling, power "
                   "(default: every view the machine file has data for)")
      ->each([o](const std::string&) { o->kinds_given = true; });
  plot_cmd
      ->add_option("--fma-ratio", o->fma_ratio,
                   "hierarchical: add the FMA-mix ceiling peak x (2A + 1 - A)/2 of each FMA ceiling, A in [0, 1], "
                   "and the measured FMA-mix points")
      ->check(number_in(0.0, 1.0));
  plot_cmd->add_option("--precision", o->precision,
                       "hierarchical: the ceilings of this precision (fp64, fp32, fp16, bf16, tf32, fp8, int8, ...: "
                       "FMA, noFMA and its tensor ceilings) or all (default: fp64)");
  plot_cmd->add_option("--points", o->points_file,
                       "Overlay application kernels: CSV with kernel,level,intensity,performance[,kind] "
                       "(kind flop: FLOP/byte and GFLOP/s; instruction: warp instructions/transaction and GIPS)");
  return {plot_cmd, {"--out"}, [o] { return roofprobe::plot_command(*o); }};
}

Subcommand add_points_command(CLI::App& app) {
  auto o = std::make_shared<roofprobe::PointsOptions>();
  CLI::App* points_cmd =
      app.add_subcommand("points", "Convert an Nsight Compute CSV export into a points file for plot --points");
  points_cmd->add_option("--ncu-csv", o->ncu_csv,
                         "LC_ALL=C ncu --csv --page raw export: of the --metrics that --ncu-metrics prints, or of "
                         "--set roofline (FLOP points without instruction points); the commands are below");
  CLI::Option* metrics_flag = points_cmd->add_flag(
      "--ncu-metrics", o->ncu_metrics,
      "Print the ncu --metrics list for --arch or --machine (neither: every architecture's names) and exit");
  CLI::Option* arch = points_cmd->add_option("--arch", o->arch, "With --ncu-metrics: compute capability (sm_90, 9.0)");
  CLI::Option* machine =
      points_cmd->add_option("--machine", o->machine_file, "With --ncu-metrics: the GPU's machine file (its device)");
  arch->needs(metrics_flag)->excludes(machine);
  machine->needs(metrics_flag);
  metrics_flag->excludes(points_cmd->get_option("--ncu-csv"));
  points_cmd->footer(std::string("Collect the counters with (LC_ALL=C: other locales' numbers are refused):\n"
                                 "  LC_ALL=C ncu --csv --page raw --metrics \"$(roofprobe points --ncu-metrics "
                                 "--arch sm_90)\" ./app > app-ncu.csv\n"
                                 "or, without instruction points, LC_ALL=C ncu --csv --page raw --set roofline ./app > "
                                 "app-ncu.csv\n"
                                 "The list for any architecture, without tensor totals:\n"
                                 "  LC_ALL=C ncu --csv --page raw --metrics ") +
                     roofprobe::kNcuMetrics + " ./app > app-ncu.csv");
  // The metrics list goes to stdout, for the shell's $(...): an --out beside it would be ignored.
  points_cmd->add_option("--out", o->out, "Points file to write (default: stdout)")->excludes(metrics_flag);
  points_cmd->add_option("--dram-level", o->dram_level, "Level name for the dram__ metrics")
      ->capture_default_str()
      ->excludes(metrics_flag);
  points_cmd->add_option(
      "--tensor-flops-per-inst", o->tensor_flops_per_instruction,
      "FLOPs per tensor-pipe (HMMA) warp instruction (512: V100 HMMA.884; 4096: m16n8k16). Default: 512 where "
      "that is V100's one shape (CC 7.0/7.2 or no CC column), else none; sm__ops_path_tensor_* counters win");
  points_cmd->add_flag("--full-names", o->full_names,
                       "Keep ncu's whole kernel names (return type, namespaces, template and argument lists); by "
                       "default base names, numbered #1, #2 where template instances share one");
  return {points_cmd, {"--out", "--ncu-csv", "--arch", "--machine"}, [o] { return roofprobe::points_command(*o); }};
}

Subcommand add_fleet_command(CLI::App& app) {
  struct Options {
    std::string dir;
    double margin = roofprobe::kDefaultOutlierMargin;
  };
  auto o = std::make_shared<Options>();
  CLI::App* fleet_cmd = app.add_subcommand(
      "fleet", "Rebuild DIR/fleet.yaml (per-rank ceilings, median/min/max, outliers) from DIR/rank-*/machine.yaml");
  fleet_cmd->add_option("dir", o->dir, "Output directory of an MPI run (or of a single run)")->required();
  fleet_cmd
      ->add_option("--outlier-margin", o->margin,
                   "Outlier: more than this fraction below the median of the ranks of its device")
      ->capture_default_str()
      ->check(number_in(0.0, 0.99));
  return {fleet_cmd, {}, [o] { return roofprobe::fleet_command(o->dir, o->margin); }};
}

Subcommand add_validate_command(CLI::App& app) {
  struct Options {
    std::string file;
    bool strict = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* validate_cmd = app.add_subcommand("validate", "Check a machine file: schema, types, units, finiteness");
  validate_cmd->add_option("machine", o->file, "machine.yaml")->required();
  validate_cmd->add_flag("--strict", o->strict, "Physical-consistency warnings are errors");
  return {validate_cmd, {}, [o] { return roofprobe::validate_command(o->file, o->strict); }};
}

Subcommand add_list_command(CLI::App& app) {
  struct Options {
    std::string backend = "all";
    bool feeds = false;
    std::string arch;
  };
  auto o = std::make_shared<Options>();
  CLI::App* list_cmd = app.add_subcommand("list", "List the probes, their axes and backends");
  CLI::Option* arch = list_cmd->add_option("--arch", o->arch,
                                           "A GPU compute capability (9.0, 10.0, ...): per CUDA probe, the "
                                           "combinations of its choice axes that exist there (a run plans only these)");
  // --arch lists the CUDA probes' combinations only: a backend or the feeds with it would be ignored.
  list_cmd->add_option("--backend", o->backend, "cpu | cuda | all")->capture_default_str()->excludes(arch);
  list_cmd
      ->add_flag("--feeds", o->feeds,
                 "Print the probes' feeds as a feeds.yaml (what `run` writes beside sweep.csv; `fit` reads it)")
      ->excludes(arch);
  return {list_cmd, {}, [o] { return roofprobe::list_command(o->backend, o->feeds, o->arch); }};
}

Subcommand add_export_command(CLI::App& app) {
  auto o = std::make_shared<roofprobe::ExportOptions>();
  CLI::App* export_cmd = app.add_subcommand("export", "Write a machine file in another tool's format");
  export_cmd->add_option("machine", o->machine_file, "machine.yaml")->required();
  export_cmd
      ->add_option("--format", o->format,
                   "ert-json (ERT roofline.json) | nersc (NERSC roofline scripts) | rocprof-csv (AMD roofline.csv) | "
                   "json (the machine file as JSON)")
      ->required();
  export_cmd->add_option("--out", o->out, "File to write (default: stdout)");
  export_cmd
      ->add_option("--precision", o->precision,
                   "nersc: the ceilings of this type, its FMA peak first (fp64, fp32, fp16, bf16, ...); "
                   "ert-json: the FMA peak listed first under gflops")
      ->capture_default_str();
  export_cmd->add_flag("--mix", o->mix, "nersc: draw the FMA-mix ceilings (MIX0 ... MIX1) too");
  export_cmd->add_option("--points", o->points_file,
                         "nersc: kernel points (from `roofprobe points`) appended as the script's AI_L1/AI_L2/AI_HBM, "
                         "FLOPS and labels lines");
  export_cmd
      ->add_option("--names", o->names, "ert-json: roofprobe (FP64.FMA, HBM) or ert (ERT's own: FP64 GFLOPs, DRAM)")
      ->capture_default_str()
      ->each([o](const std::string&) { o->names_given = true; });
  return {export_cmd, {"--out"}, [o] { return roofprobe::export_command(*o); }};
}

Subcommand add_compare_command(CLI::App& app) {
  auto o = std::make_shared<roofprobe::CompareOptions>();
  CLI::App* compare_cmd =
      app.add_subcommand("compare", "Ceilings of several machine files side by side, ratios to the first");
  compare_cmd->add_option("machines", o->files, "Two or more machine files (e.g. results/reference/*.yaml)")
      ->required();
  compare_cmd->add_option("--format", o->format, "text | markdown | csv")->capture_default_str();
  compare_cmd->add_option("--plot", o->plot,
                          "Also draw their rooflines on one plot (FILE.png | .svg | .pdf); beside it go the "
                          "gnuplot script FILE.gp and its data FILE_roofs.dat and FILE_ceilings.dat (a file of "
                          "one of these names that roofprobe did not write is never replaced)");
  compare_cmd->add_flag("--verdict", o->verdict,
                        "MEASURED REFERENCE: each measured ceiling vs its peak at the measured clock and the "
                        "reference's spec and published figures, with a verdict");
  return {compare_cmd, {"--plot"}, [o] { return roofprobe::compare_command(*o); }};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"roofprobe: empirical roofline characterization (memory levels, compute ceilings)"};
  app.set_version_flag("--version",
                       std::string("roofprobe ") + roofprobe::kVersion + " (" + roofprobe::kGitRevision + ")");
  app.require_subcommand(1);
  const std::vector<Subcommand> subcommands = {add_run_command(app, joined_command_line(argc, argv)),
                                               add_fit_command(app),
                                               add_plot_command(app),
                                               add_points_command(app),
                                               add_fleet_command(app),
                                               add_validate_command(app),
                                               add_list_command(app),
                                               add_export_command(app),
                                               add_compare_command(app)};

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

  // A signal ends a command at once, leaving no temp file of its own; run replaces the SIGINT and
  // SIGTERM handlers with its own, which stop between points.
  roofprobe::remove_pending_files_on_signals();
  try {
    for (const Subcommand& cmd : subcommands) {
      if (!*cmd.app) continue;
      // An option given with an empty value is a mistake, not a request for the default.
      for (const std::string& option : cmd.nonempty)
        if (cmd.app->count(option) > 0 && cmd.app->get_option(option)->as<std::string>().empty())
          throw roofprobe::InputError(option + ": empty value (leave the option out for the default)");
      return cmd.run();
    }
  } catch (const std::exception& e) {  // InputError and anything else: one line, exit 1
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
