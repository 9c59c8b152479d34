#include "driver/cli/commands.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <cstdio>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>

#include "driver/model/atomic_file.hpp"
#include "driver/model/csv_text.hpp"
#include "driver/report/compare.hpp"
#include "driver/run/config.hpp"
#include "driver/run/engine.hpp"
#include "driver/model/errors.hpp"
#include "driver/report/export.hpp"
#include "driver/fit/feeds_file.hpp"
#include "driver/fit/fit.hpp"
#include "driver/fit/run_record.hpp"
#include "driver/fleet/fleet.hpp"
#include "driver/fleet/fleet_run.hpp"
#include "driver/model/machine.hpp"
#include "driver/fleet/mpi.hpp"
#include "driver/report/ncu_metrics.hpp"
#include "driver/report/points.hpp"
#include "driver/run/run_identity.hpp"
#include "driver/run/signals.hpp"
#include "driver/report/summary.hpp"
#include "driver/report/verdict.hpp"
#include "driver/session/sustained_phase.hpp"
#include "driver/model/units.hpp"
#include "driver/version.hpp"
#include "plot/compare_overlay.hpp"
#include "plot/plot.hpp"

namespace fs = std::filesystem;

namespace roofprobe {

int run_command(const RunOptions& o) {
  install_stop_handlers();
  if (Comm::world().distributed()) {
    // Under mpirun/srun: driver/fleet/fleet_run.cpp (turns, aggregates, fleet.yaml).
    if (!o.resume_dir.empty())
      throw InputError(
          "--resume: resume one rank's directory without the launcher (roofprobe run --resume DIR/rank-R)");
    return run_fleet(o);
  }
  if (!o.resume_dir.empty()) return resume_run(o);
  RunConfig config = choose_config(o);
  std::vector<std::string> backends = chosen_backends(o, config);
  int status = 0;
  for (const auto& name : backends) {
    std::string dir = o.out_dir;
    if (!dir.empty() && backends.size() > 1) dir += "/" + name;
    int backend_status = run_backend(o, config, name, dir);
    if (backend_status >= 128) return backend_status;  // interrupted: the next backend waits
    status = std::max(status, backend_status);
    if (!dir.empty()) write_single_process_fleet(dir, o.outlier_margin);  // fleet.yaml: this one rank
  }
  return status;
}

namespace {

// `fit --gpu NAME`: NAME.yaml in $ROOFPROBE_REFERENCE_DIR, in the bundle's share/roofprobe/reference
// beside bin/, or in the source tree's results/reference; a path to a machine file as it is.
std::string reference_file(const std::string& name) {
  if (name.find('/') != std::string::npos || (name.size() > 5 && name.substr(name.size() - 5) == ".yaml")) {
    if (!fs::is_regular_file(name)) throw InputError("fit --gpu: no file '" + name + "'");
    return name;
  }
  std::vector<fs::path> dirs;
  if (const char* env = std::getenv("ROOFPROBE_REFERENCE_DIR"); env != nullptr && *env != '\0') dirs.emplace_back(env);
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back(exe.parent_path().parent_path() / "share" / "roofprobe" / "reference");
#ifdef ROOFPROBE_SOURCE_REFERENCE_DIR
  dirs.emplace_back(ROOFPROBE_SOURCE_REFERENCE_DIR);
#endif
  for (const fs::path& dir : dirs)
    if (fs::is_regular_file(dir / (name + ".yaml"))) return (dir / (name + ".yaml")).string();
  std::set<std::string> known;
  for (const fs::path& dir : dirs) {
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".yaml") known.insert(entry.path().stem().string());
  }
  std::string list;
  for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
  throw InputError("fit --gpu: no reference file '" + name + ".yaml'" +
                   (list.empty() ? std::string(" (set ROOFPROBE_REFERENCE_DIR)") : " (known: " + list + ")"));
}

}  // namespace

int fit_command(const FitOptions& o) {
  if (o.out.empty()) throw InputError("fit: --out MACHINE.yaml is required");
  check_output_path(o.out);
  if (o.sweep_csv.empty() == o.bandwidth_csv.empty())
    throw InputError("fit: give either SWEEP.csv or --bandwidth-csv FILE");
  {
    std::vector<std::string> inputs{o.sweep_csv, o.bandwidth_csv};
    if (!o.sweep_csv.empty())
      for (const char* beside : {"run.yaml", "feeds.yaml"})
        inputs.push_back((fs::path(o.sweep_csv).parent_path() / beside).string());
    if (!o.gpu.empty()) inputs.push_back(reference_file(o.gpu));
    check_output_is_not_an_input(o.out, inputs, "--out");
    // The run's config.yaml is no input of a refit, but its record: --resume reads it.
    if (!o.sweep_csv.empty()) {
      const std::string config = (fs::path(o.sweep_csv).parent_path() / "config.yaml").string();
      if (same_file(o.out, config))
        throw InputError("--out " + o.out + ": is the config of the run whose sweep this is (" + config +
                         "); a refit writes a machine file: choose another --out");
      // The run's own machine file holds what only the run knew (its resume state, its gaps, when
      // it measured); a refit does not, so it never takes that file's place.
      const std::string run_machine = (fs::path(o.sweep_csv).parent_path() / "machine.yaml").string();
      if (same_file(o.out, run_machine))
        throw InputError("--out " + o.out + ": is the machine file of the run whose sweep this is; it records " +
                         "the run's resume state and gaps, which a refit does not know: choose another --out");
    }
  }
  Machine machine;
  machine.provenance = {{"tool", "roofprobe"},
                        {"version", kVersion},
                        {"git", kGitRevision},
                        {"started", utc_now()},
                        {"host", host_name()}};
  const bool external_flags =
      o.from != "csv" || !o.levels.empty() || !o.cache_sizes.empty() || o.device != "cpu" || !o.gpu.empty();
  if (!o.sweep_csv.empty() && external_flags)
    throw InputError(
        "fit: --from, --device, --gpu, --levels and --cache-sizes describe an external sweep (--bandwidth-csv)");
  if (!o.bandwidth_csv.empty()) {
    ExternalSweepOptions external;
    external.format = parse_sweep_format(o.from);
    if (o.device != "cpu" && o.device != "gpu") throw InputError("fit --device: '" + o.device + "' (use cpu or gpu)");
    const auto split = [](const std::string& list) {
      std::vector<std::string> items;
      std::string item;
      std::istringstream in(list);
      while (std::getline(in, item, ',')) items.push_back(item);
      return items;
    };
    for (const std::string& name : split(o.levels)) {
      if (name.empty() || name.find_first_of(" \t'\"") != std::string::npos)
        throw InputError("fit --levels: '" + o.levels + "' (give names such as L1,L2,HBM)");
      if (std::find(external.level_names.begin(), external.level_names.end(), name) != external.level_names.end())
        throw InputError("fit --levels: '" + name + "' is named twice (one name per level, nearest first)");
      external.level_names.push_back(name);
    }
    for (const std::string& size : split(o.cache_sizes)) {
      const std::optional<double> bytes = parse_bytes(size);
      if (!bytes || !(*bytes > 0))
        throw InputError("fit --cache-sizes: '" + size + "' is not a size (use e.g. 32KiB,1MiB,32MiB)");
      external.cache_bytes.push_back(*bytes);
    }
    std::string device_kind = o.device;
    std::string memory_name = o.device == "gpu" ? "HBM" : "DRAM";
    if (!o.gpu.empty()) {
      if (!o.cache_sizes.empty()) throw InputError("fit: give the caches once: --cache-sizes or --gpu, not both");
      const std::string file = reference_file(o.gpu);
      const Machine reference = read_machine_file(file);
      if (reference.device.kind != "gpu") throw InputError("fit --gpu: " + file + " does not describe a GPU");
      if (reference.device.caches.empty()) throw InputError("fit --gpu: " + file + " lists no caches");
      device_kind = "gpu";
      memory_name = reference.device.memory_name.empty() ? "HBM" : reference.device.memory_name;
      external.device_caches = reference.device.caches;
      external.caches_from = "--gpu " + o.gpu;
      for (const MemoryLevel& level : reference.memory)
        if (level.level == memory_name) external.memory_peak_gbs = std::max(external.memory_peak_gbs, level.gbs);
      machine.device.name = reference.device.name;
    }
    machine.device.kind = device_kind;
    machine.device.memory_name = memory_name;
    if (!external.level_names.empty()) machine.device.memory_name = external.level_names.back();
    machine.device.name =
        (machine.device.name.empty() ? std::string() : machine.device.name + ": ") + "external sweep (" + o.from + ")";
    machine.provenance["command"] = "roofprobe fit --bandwidth-csv " + o.bandwidth_csv + " --from " + o.from;
    machine.provenance["source"] = o.bandwidth_csv;
    fit_bandwidth_csv(o.bandwidth_csv, machine, external);
  } else {
    std::vector<Sample> samples = read_sweep_csv(o.sweep_csv);
    if (samples.empty()) throw InputError(o.sweep_csv + ": no samples");
    // The run record beside the sweep tells which device it came from (names, peaks), and
    // whether the sweep is that run's whole data (driver/fit/run_record.hpp).
    const fs::path dir = fs::path(o.sweep_csv).parent_path();
    const fs::path record = dir / "run.yaml";
    const fs::path feeds_path = dir / "feeds.yaml";
    const fs::path run_machine_path = dir / "machine.yaml";
    std::optional<Machine> header, run_machine;
    std::optional<FeedTable> feeds;
    std::string feeds_run_id;
    if (fs::exists(record)) header = read_machine_file(record.string());
    if (fs::exists(feeds_path)) feeds = read_feeds_file(feeds_path.string(), &feeds_run_id);
    if (header && fs::exists(run_machine_path) && !same_file(run_machine_path.string(), o.out)) {
      try {
        run_machine = read_machine_file(run_machine_path.string());
      } catch (const InputError&) {
        // Not the run's own file (or damaged): its gaps are not carried over.
      }
    }
    RunRecord run;
    run.run_header = header ? &*header : nullptr;
    run.feeds_run_id = feeds ? &feeds_run_id : nullptr;
    run.run_machine = run_machine ? &*run_machine : nullptr;
    run.writer_holds_lock = run_directory_in_use(dir.empty() ? std::string(".") : dir.string());
    const RunRecordFindings findings = check_run_record(o.sweep_csv, samples, run);
    for (const std::string& note : findings.notes) std::cerr << "note: " << note << "\n";
    if (samples.empty()) throw InputError(o.sweep_csv + ": no whole point (" + findings.gaps.front() + ")");
    if (header) {
      machine.device = header->device;
      machine.provenance = header->provenance;
    } else {
      machine.device.kind = samples.front().backend == "cuda" ? "gpu" : "cpu";
      machine.device.name = "unknown (no run.yaml beside the sweep)";
    }
    machine.provenance["refit_from"] = o.sweep_csv;
    // The feeds the run recorded (run's feeds.yaml), else this build's probes.
    fit_samples(samples, machine, feeds ? &*feeds : nullptr);
    for (const std::string& gap : findings.carried)
      if (std::find(machine.missing.begin(), machine.missing.end(), gap) == machine.missing.end())
        machine.missing.push_back(gap);
    std::vector<std::string> gaps = findings.gaps;
    // A run with a sustained phase loops its FMA and tensor ceilings and its device memory: where
    // the fit finds one, the sweep without the phase's rows is not the run's whole data.
    const bool has_sustained_target =
        std::any_of(machine.compute.begin(), machine.compute.end(),
                    [](const ComputeCeiling& c) { return c.source == "empirical" && is_sustained_compute(c.name); }) ||
        std::any_of(machine.memory.begin(), machine.memory.end(), [&](const MemoryLevel& l) {
          return l.source == "empirical" && l.level == machine.device.memory_name;
        });
    if (!findings.sustained_gap.empty() && has_sustained_target) gaps.push_back(findings.sustained_gap);
    for (const std::string& gap : gaps)
      if (std::find(machine.missing.begin(), machine.missing.end(), gap) == machine.missing.end())
        machine.missing.push_back(gap);
    if (!gaps.empty()) {
      machine.complete = false;
      std::cerr << "note: incomplete: " << gaps.front()
                << (gaps.size() > 1 ? " (and " + std::to_string(gaps.size() - 1) + " more, under missing:)"
                                    : std::string())
                << "\n";
    }
  }
  machine.provenance["finished"] = utc_now();
  // Whatever fit writes, validate accepts: a degenerate sweep (zero or absurd rates) is refused
  // here with the reason instead of leaving a file the next tool rejects.
  const std::vector<std::string> problems = validate_machine_text(machine_to_yaml(machine), o.out);
  if (!problems.empty()) throw InputError("fit: the sweep gives no valid machine file: " + problems.front());
  if (machine.memory.empty() && machine.compute.empty())
    throw InputError("fit: " + (o.sweep_csv.empty() ? o.bandwidth_csv : o.sweep_csv) +
                     ": no level or ceiling could be fitted" +
                     (machine.missing.empty() ? std::string() : " (" + machine.missing.front() + ")"));
  write_machine_file(machine, o.out);
  print_summary(std::cout, machine, o.out);
  return 0;
}

// Why the sweep beside a machine file is not that file's run (empty when nothing says so): rows
// of another backend's device, or a run.yaml beside it of another run. Its samples, drawn over
// the ceilings, would show another device's rates under this one's name.
std::string foreign_sweep(const Machine& machine, const std::vector<Sample>& rows, const fs::path& dir) {
  for (const Sample& s : rows) {
    if (!machine.device.kind.empty() && !s.backend.empty() && kind_of_backend(s.backend) != machine.device.kind)
      return "its rows are of the " + s.backend + " backend, the machine file is of a " + machine.device.kind;
  }
  const fs::path run_yaml = dir / "run.yaml";
  const std::string machine_run = provenance_of(&machine, "run_id");
  if (machine_run.empty() || !fs::exists(run_yaml)) return "";
  const Machine run = read_machine_file(run_yaml.string());
  const std::string sweep_run = provenance_of(&run, "run_id");
  if (!sweep_run.empty() && sweep_run != machine_run)
    return "run.yaml beside it is of run " + sweep_run + ", the machine file of run " + machine_run;
  return "";
}

int plot_command(const PlotCommandOptions& o) {
  PlotOptions options;
  options.format = o.format;
  if (o.kinds_given) options.kinds = parse_plot_kinds(o.kinds);
  options.fma_ratio = o.fma_ratio;
  options.precision = o.precision;
  if (!o.points_file.empty()) {
    std::vector<std::string> unused;
    options.points = read_points_csv(o.points_file, &unused);
    std::string names;
    for (const std::string& n : unused) names += (names.empty() ? "" : ", ") + n;
    if (!names.empty())
      std::cerr << "note: " << o.points_file << ": column" << (unused.size() == 1 ? " " : "s ") << names
                << (unused.size() == 1 ? " is" : " are")
                << " not drawn (a points file is read by kernel, level, intensity, performance and kind)\n";
  }
  Machine machine = read_valid_machine_file(o.machine_file);
  fs::path dir = fs::path(o.machine_file).parent_path();
  std::vector<Sample> samples;
  fs::path sweep = dir / "sweep.csv";
  if (fs::exists(sweep)) {
    std::vector<Sample> rows = burst_samples(read_sweep_csv(sweep.string()));
    if (const std::string why = foreign_sweep(machine, rows, dir); why.empty())
      samples = std::move(rows);
    else
      std::cerr << "note: " << sweep.string() << ": " << why << "; its samples are not drawn\n";
  }
  options.out_dir = o.out_dir.empty() ? (dir / "plots").string() : o.out_dir;
  options.out_dir_named_by_user = !o.out_dir.empty();
  // A point of a level the machine file has no roof for is drawn alone: said so, with the levels
  // it has (an export's HBM points over a CPU's file, whose memory is DRAM).
  std::set<std::string> roofs, roofless;
  std::string roof_list;
  for (const MemoryLevel& l : machine.memory)
    if (roofs.insert(csv_text::lower(l.level)).second) roof_list += (roof_list.empty() ? "" : ", ") + l.level;
  for (const KernelPoint& p : options.points)
    if (!p.level.empty() && !roofs.count(csv_text::lower(p.level))) roofless.insert(p.level);
  if (!roofless.empty()) {
    std::string names;
    for (const std::string& n : roofless) names += (names.empty() ? "" : ", ") + n;
    std::cerr << "note: " << o.points_file << ": points at " << names << " have no roof in " << o.machine_file
              << " (its levels: " << (roof_list.empty() ? "none" : roof_list) << "); they are drawn without one\n";
  }
  std::error_code ignored;
  const bool dir_was_there = fs::exists(options.out_dir, ignored);
  PlotReport report = render_plots(machine, samples, options);
  // With nothing drawn, the error alone says why each view was skipped; a note before it would
  // say the same twice. A directory made for the plots and left empty goes with them.
  if (report.written.empty()) {
    if (!dir_was_there && fs::is_directory(options.out_dir, ignored) && fs::is_empty(options.out_dir, ignored))
      fs::remove(options.out_dir, ignored);
    std::string why;
    for (const auto& s : report.skipped) why += (why.empty() ? "" : "; ") + s;
    throw InputError(o.machine_file + ": nothing to plot" + (why.empty() ? std::string() : " (" + why + ")"));
  }
  for (const auto& s : report.skipped) std::cerr << "note: skipped " << s << "\n";
  for (const auto& w : report.written) std::cout << w << "\n";
  return 0;
}

// The newest compute capability the probes' existence rules and the ncu metric lists are written
// for (every row of kernels/cuda/backend/gpu_arith_rates.hpp); a newer one is shown as it, with a
// note, so a new GPU still gets a list.
constexpr double kNewestKnownComputeCapability = 12.1;

void note_if_newer_than_known(double cc) {
  if (cc > kNewestKnownComputeCapability + 1e-9) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "note: compute capability %.1f is newer than any this roofprobe knows (up to %.1f): shown as "
                  "the newest it knows\n",
                  cc, kNewestKnownComputeCapability);
    std::cerr << text;
  }
}

int points_command(const PointsOptions& o) {
  if (o.ncu_metrics) {
    std::optional<double> cc;
    if (!o.arch.empty()) {
      cc = parse_compute_capability(o.arch);
      if (!cc) throw InputError("--arch: '" + o.arch + "' is not a compute capability (sm_90, 9.0, 90)");
    } else if (!o.machine_file.empty()) {
      const Machine machine = read_machine_file(o.machine_file);
      const auto it = machine.device.extra.find("compute_capability");
      if (it == machine.device.extra.end() || !(cc = parse_compute_capability(it->second)))
        throw InputError(o.machine_file +
                         ": the device has no compute_capability (not a CUDA GPU's file?): use --arch");
    }
    if (cc && *cc < 7.0 - 1e-9)
      throw InputError((o.arch.empty() ? o.machine_file : std::string("--arch")) + ": compute capability " +
                       csv_text::number_text(*cc, 2) +
                       ": Nsight Compute profiles 7.0 (Volta) and newer, and these metric names are theirs");
    if (cc) note_if_newer_than_known(*cc);
    std::cout << ncu_metrics_for(cc) << "\n";
    return 0;
  }
  if (o.ncu_csv.empty()) throw InputError("points: give --ncu-csv FILE (or --ncu-metrics for the metrics to collect)");
  if (!o.out.empty()) check_output_path(o.out);
  check_output_is_not_an_input(o.out, {o.ncu_csv}, "--out");
  const std::string text = read_input_file(o.ncu_csv, kMaxCsvInputBytes, "an Nsight Compute CSV");
  NcuOptions ncu;
  ncu.dram_level = o.dram_level;
  ncu.tensor_flops_per_instruction = o.tensor_flops_per_instruction;
  ncu.full_names = o.full_names;
  const NcuConversion converted = convert_ncu_csv(text, o.ncu_csv, ncu);
  for (const auto& note : converted.notes) std::cerr << "note: " << note << "\n";
  const std::string csv = points_to_csv(converted.points);
  if (o.out.empty()) {
    std::cout << csv;
  } else {
    write_file_atomically(o.out, csv);
    std::cerr << o.out << ": " << converted.points.size() << " points\n";
  }
  return 0;
}

int validate_command(const std::string& machine_file, bool strict) {
  std::vector<std::string> problems = validate_machine_file(machine_file);
  bool strict_made = false;
  if (problems.empty()) {
    std::vector<std::string> warnings = physical_warnings(machine_file, read_machine_file(machine_file));
    if (strict)
      problems = warnings, strict_made = true;
    else
      for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
  }
  if (problems.empty()) {
    std::cout << machine_file << ": valid " << kMachineSchema << "\n";
    return 0;
  }
  // One error line, the first problem's, with a count of the rest: warnings --strict made errors
  // are listed, one line each, by validate without it.
  const std::string more = problems.size() > 1 ? std::to_string(problems.size() - 1) + " more" : "";
  throw InputError(problems.front() + (more.empty()  ? ""
                                       : strict_made ? " (and " + more + ": validate without --strict lists them)"
                                                     : " (and " + more + ")"));
}

int list_command(const std::string& backend, bool feeds_yaml, const std::string& arch) {
  if (!arch.empty()) {
    int major = 0, minor = 0;
    char tail = 0;
    if (std::sscanf(arch.c_str(), "%d.%d%c", &major, &minor, &tail) != 2 || major < 1 || major > 99 || minor < 0 ||
        minor > 9)
      throw InputError("list --arch: '" + arch + "' is not a compute capability (use e.g. 9.0 or 10.0)");
    if (major < 7)
      throw InputError("list --arch: compute capability " + arch +
                       ": roofprobe's CUDA probes are written for 7.0 (Volta) and newer");
    if (Registry::instance().backend("cuda") == nullptr)
      throw InputError("list --arch: this roofprobe was built without the cuda backend");
    DeviceInfo device;
    device.backend = "cuda";
    device.kind = "gpu";
    device.extra["compute_capability"] = std::to_string(major) + "." + std::to_string(minor);
    note_if_newer_than_known(major + minor / 10.0);
    std::cout << "compute capability " << device.extra["compute_capability"] << "\n";
    print_existing_combinations(std::cout, Registry::instance().probes("cuda"), device);
    return 0;
  }
  if (feeds_yaml) {
    if (backend != "all" && Registry::instance().backend(backend) == nullptr)
      throw InputError("list --feeds: backend '" + backend + "' is not compiled in");
    std::cout << feeds_to_yaml(registered_feeds(backend == "all" ? std::string() : backend));
    return 0;
  }
  if (!backend.empty() && backend != "cpu" && backend != "cuda" && backend != "all")
    throw InputError("--backend: '" + backend + "' is not one of cpu, cuda, all");
  std::string filter = backend == "all" ? "" : backend;
  if (!filter.empty() && Registry::instance().backend(filter) == nullptr)
    throw InputError("--backend " + filter + ": this roofprobe was built without it");
  print_probe_list(std::cout, Registry::instance().probes(filter));
  return 0;
}

int export_command(const ExportOptions& o) {
  check_export_format(o.format);  // before the file is read: a typo is reported as such
  if (!o.out.empty()) check_output_path(o.out);
  check_output_is_not_an_input(o.out, {o.machine_file, o.points_file}, "--out");
  // An option of another format is refused, not ignored: the file would lack what it asked for.
  if (o.mix && o.format != "nersc") throw InputError("export --mix: only --format nersc draws FMA-mix ceilings");
  if (o.names_given && o.format != "ert-json") throw InputError("export --names: only --format ert-json takes names");
  ExportSettings settings;
  settings.precision = o.precision;
  settings.mix = o.mix;
  settings.names = o.names;
  if (!o.points_file.empty()) {
    if (o.format != "nersc") throw InputError("export --points: only --format nersc takes kernel points");
    settings.points = read_points_csv(o.points_file);
  }
  std::vector<std::string> notes;
  settings.notes = &notes;
  const std::string text = export_machine(read_valid_machine_file(o.machine_file), o.format, settings);
  write_file_atomically(o.out.empty() ? "-" : o.out, text);
  for (const std::string& n : notes) std::cerr << n << "\n";
  return 0;
}

int compare_command(const CompareOptions& o) {
  check_compare_format(o.format);
  const std::vector<Machine> machines = read_compare_inputs(o.files);
  if (o.verdict) {
    if (machines.size() != 2)
      throw InputError("compare --verdict: give two machine files, the measured one first, then its reference");
    if (!o.plot.empty()) throw InputError("compare --verdict: --plot draws the side-by-side comparison only");
    const auto label = [&](std::size_t i) {
      const std::string& name = machines[i].device.name;
      return (name.empty() ? o.files[i] : name) + " (" + o.files[i] + ")";
    };
    // A verdict holds a device to its own kind's reference: a CPU against a GPU's is refused, and
    // two models (the first word of each name with a digit, up to its first other sign: H100,
    // H200, 4090; "Tesla V100-SXM2-16GB" is a V100) are named.
    const std::string& measured_kind = machines[0].device.kind;
    const std::string& reference_kind = machines[1].device.kind;
    if (!measured_kind.empty() && !reference_kind.empty() && measured_kind != reference_kind)
      throw InputError("compare --verdict: " + label(0) + " is a " + measured_kind + ", the reference " + label(1) +
                       " a " + reference_kind + ": give the reference of the measured device");
    const auto model = [](const std::string& name) {
      std::istringstream words(name);
      std::string word;
      while (words >> word)
        if (word.find_first_of("0123456789") != std::string::npos) {
          const auto end = std::find_if(word.begin(), word.end(), [](unsigned char c) { return !std::isalnum(c); });
          return csv_text::lower(std::string(word.begin(), end));
        }
      return std::string();
    };
    const std::string measured_model = model(machines[0].device.name);
    const std::string reference_model = model(machines[1].device.name);
    if (!measured_model.empty() && !reference_model.empty() && measured_model != reference_model)
      std::cerr << "warning: compare --verdict: " << label(0) << " and the reference " << label(1)
                << " name different models; the verdict holds the one to the other's figures\n";
    const Verdict verdict = build_verdict(machines[0], label(0), machines[1], label(1));
    // A reference as the first file (the two swapped, or a reference against itself) has no
    // measured ceiling: an empty verdict would pass a gate with nothing checked.
    if (verdict.rows.empty())
      throw InputError("compare --verdict: " + label(0) +
                       " has no measured (empirical) ceiling to judge: give the measured machine file first, then "
                       "its reference");
    std::cout << format_verdict(verdict, o.format) << std::flush;
    return 0;
  }
  const CompareTable table = build_compare_table(o.files, machines);
  const std::string text = format_compare_table(table, o.format);
  std::string image;
  if (!o.plot.empty()) image = render_compare_overlay(machines, table.labels, o.plot);  // before printing
  std::cout << text << std::flush;
  if (!image.empty()) std::cerr << "wrote " << image << "\n";
  return 0;
}

}  // namespace roofprobe
