#include "driver/cli/commands.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>

#include "driver/model/atomic_file.hpp"
#include "driver/report/compare.hpp"
#include "driver/run/config.hpp"
#include "driver/run/engine.hpp"
#include "driver/model/errors.hpp"
#include "driver/report/export.hpp"
#include "driver/fit/fit.hpp"
#include "driver/fleet/fleet.hpp"
#include "driver/fleet/fleet_run.hpp"
#include "driver/model/machine.hpp"
#include "driver/fleet/mpi.hpp"
#include "driver/run/plan.hpp"
#include "driver/report/points.hpp"
#include "driver/run/progress.hpp"
#include "driver/run/run_identity.hpp"
#include "driver/run/signals.hpp"
#include "driver/report/summary.hpp"
#include "driver/run/sweep_runner.hpp"
#include "driver/report/verdict.hpp"
#include "driver/model/units.hpp"
#include "driver/version.hpp"
#include "plot/compare_overlay.hpp"
#include "plot/plot.hpp"

namespace fs = std::filesystem;

namespace roofprobe {

namespace {

RunConfig choose_config(const RunOptions& o) {
  if (o.config_path.empty()) return load_embedded_config(o.quick ? "quick.yaml" : "default.yaml");
  RunConfig config = load_config_file(o.config_path);
  if (o.quick) {
    // --quick with a file keeps its probes and axes but measures with quick's budget.
    config.measurement = load_embedded_config("quick.yaml").measurement;
  }
  return config;
}

std::vector<std::string> chosen_backends(const RunOptions& o, const RunConfig& config) {
  std::vector<std::string> names;
  if (o.backend != "all" && o.backend != "cpu" && o.backend != "cuda")
    throw InputError("--backend: '" + o.backend + "' is not one of cpu, cuda, all");
  for (const auto& b : config.backends) {
    if (o.backend != "all" && b.name != o.backend) continue;
    if (!b.built) {
      if (o.backend == b.name)
        throw InputError("--backend " + b.name + ": this roofprobe was built without the " + b.name + " backend");
      std::cerr << "note: skipping " << b.name << ": this roofprobe was built without it\n";
      continue;
    }
    std::string why = Registry::instance().backend(b.name)->unavailable_reason();
    if (!why.empty()) {
      if (o.backend == b.name) throw InputError("--backend " + b.name + ": " + why);
      std::cerr << "note: skipping " << b.name << ": " << why << "\n";
      continue;
    }
    names.push_back(b.name);
  }
  if (names.empty())
    throw InputError(config.source + ": no backend to run (config has no section for '" + o.backend + "')");
  return names;
}

// What a run directory records before measuring, so a run can be re-fitted or resumed:
// run.yaml (provenance and device, the machine file's header) and config.yaml (exact text).
void write_run_record(const std::string& dir, const RunConfig& config, const Machine& m) {
  Machine header = m;
  header.memory.clear();
  header.compute.clear();
  write_file_atomically(dir + "/config.yaml", config.text);
  write_file_atomically(dir + "/run.yaml", machine_to_yaml(header));
  // How the samples are fitted, so a build without this backend's probes can re-fit them.
  write_file_atomically(
      dir + "/feeds.yaml",
      feeds_to_yaml(registered_feeds(m.provenance.count("backend") != 0 ? m.provenance.at("backend") : std::string())));
}

// An exclusive flock on DIR/.roofprobe.lock for as long as a run uses DIR: two runs writing one
// sweep.csv would interleave their samples.
class RunDirectoryLock {
 public:
  explicit RunDirectoryLock(const std::string& dir) {
    const std::string path = dir + "/.roofprobe.lock";
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw InputError(path + ": cannot create the run lock: " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd_);
      throw InputError(dir + ": " +
                       (err == EWOULDBLOCK ? std::string("another roofprobe run is using this directory")
                                           : "cannot lock: " + std::string(std::strerror(err))));
    }
  }
  ~RunDirectoryLock() { ::close(fd_); }  // closing releases the lock
  RunDirectoryLock(const RunDirectoryLock&) = delete;
  RunDirectoryLock& operator=(const RunDirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

// A resumed run must measure the same plan on the same device, or its samples would mix.
void check_same_device(const std::string& dir, const DeviceInfo& before, const DeviceInfo& now) {
  if (before.name != now.name || before.compute_units != now.compute_units || before.threads != now.threads)
    throw InputError(dir + ": cannot resume: the run was started on '" + before.name + "' (" +
                     std::to_string(before.compute_units) + " " + before.compute_unit_name + ", " +
                     std::to_string(before.threads) + " threads), this is '" + now.name + "' (" +
                     std::to_string(now.compute_units) + " " + now.compute_unit_name + ", " +
                     std::to_string(now.threads) + " threads)");
}

struct ResumeState {
  Machine header;               // run.yaml of the interrupted run
  std::vector<Sample> samples;  // complete points already measured
};

// More threads than cores halves every rate without a word; far more exhausts the machine.
void check_thread_count(const Backend& backend, int threads, bool oversubscribe, const std::string& source) {
  const int cores = backend.max_threads();
  if (cores <= 0 || threads <= cores) return;
  if (!oversubscribe)
    throw InputError(source + ": " + std::to_string(threads) + " threads on " + std::to_string(cores) +
                     " cores (hwloc): rates would be shared between threads; use 0 for all cores, or "
                     "--oversubscribe to run more threads than cores");
  if (threads > 4 * cores)
    throw InputError(source + ": " + std::to_string(threads) + " threads is more than 4 per core (" +
                     std::to_string(cores) + " cores), even with --oversubscribe");
}

// The CPU threads of the run: the command line's, else the config's; a resumed run keeps its own.
int run_thread_count(const RunOptions& o, const RunConfig& config, const BackendConfig& bc, Backend& backend,
                     const ResumeState* resume, const std::string& out_dir) {
  const bool from_cli = bc.name == "cpu" && o.threads >= 0;
  int threads = from_cli ? o.threads : bc.threads;
  if (resume != nullptr) {
    // A resumed run continues with the threads it started with; another count would mix rates.
    const int started = resume->header.device.threads;
    if (from_cli && o.threads != started && !(o.threads == 0 && started == backend.max_threads()))
      throw InputError(out_dir + ": cannot resume with --threads " + std::to_string(o.threads) +
                       ": the run was started with " + std::to_string(started) + " threads");
    threads = started;
  }
  if (bc.name == "cpu")
    check_thread_count(backend, threads, o.oversubscribe, from_cli ? "--threads" : config.source + ": cpu.threads");
  return threads;
}

// A new run's provenance and run record, or a resumed run's samples and the points they cover.
void begin_record(const RunOptions& o, const RunConfig& config, const BackendConfig& bc, const Plan& plan,
                  const ResumeState* resume, const std::string& dir, Machine& machine, std::vector<Sample>& all,
                  std::set<int>& done) {
  if (resume != nullptr) {
    check_same_device(dir, resume->header.device, machine.device);
    machine.provenance = resume->header.provenance;
    machine.provenance["resumed"] = utc_now();
    machine.provenance["resume_command"] = o.command_line;
    all = resume->samples;
    for (const Sample& s : all) {
      if (s.point < 0 || s.point >= static_cast<int>(plan.points.size()) || plan.points[s.point].params != s.params ||
          plan.points[s.point].probe->info().name != s.probe)
        throw InputError(dir + "/sweep.csv: cannot resume: point " + std::to_string(s.point) +
                         " does not match the plan of config.yaml");
      done.insert(s.point);
    }
  } else {
    machine.provenance = {
        {"tool", "roofprobe"},       {"version", kVersion},     {"git", kGitRevision},
        {"command", o.command_line}, {"config", config.source}, {"config_hash", config_hash(config.text)},
        {"started", utc_now()},      {"host", host_name()},     {"backend", bc.name}};
    for (const auto& [key, value] : o.extra_provenance) machine.provenance[key] = value;
    write_run_record(dir, config, machine);
  }
}

// What an interrupted run did not measure, on stderr and under missing:.
void note_interruption(Machine& machine, const SweepOutcome& outcome, std::size_t points, const std::string& dir) {
  const int stopped_by = outcome.stopped_by;
  const std::vector<std::string>& not_measured = outcome.not_measured;
  if (stopped_by != 0) {
    std::cerr << "note: stopped by " << signal_name(stopped_by) << ": " << not_measured.size()
              << " points not measured; continue with: roofprobe run --resume " << dir << "\n";
    machine.missing.push_back("interrupted by " + std::string(signal_name(stopped_by)) + ": " +
                              std::to_string(not_measured.size()) + " of " + std::to_string(points) +
                              " points not measured (roofprobe run --resume " + dir + ")");
    for (const auto& label : not_measured) machine.missing.push_back(label + ": not measured (interrupted)");
  }
}

void write_run_plots(const Machine& machine, const std::vector<Sample>& all, const std::string& dir) {
  PlotOptions plot_options;
  plot_options.out_dir = dir + "/plots";
  try {
    PlotReport report = render_plots(machine, all, plot_options);
    for (const auto& s : report.skipped) std::cerr << "note: plot skipped: " << s << "\n";
  } catch (const InputError& e) {
    std::cerr << "warning: plots not written: " << e.what() << "\n";
  }
}

int run_backend(const RunOptions& o, const RunConfig& config, const BackendConfig& bc, const std::string& out_dir,
                const ResumeState* resume) {
  // cuda.device picks the GPU through the variable the CUDA backend reads, unless the
  // environment already chose one (ROOFPROBE_CUDA_DEVICE: the user's, or the MPI binding's per rank).
  if (bc.name == "cuda" && bc.device >= 0 && std::getenv("ROOFPROBE_CUDA_DEVICE") == nullptr)
    ::setenv("ROOFPROBE_CUDA_DEVICE", std::to_string(bc.device).c_str(), 0);
  Backend& backend = *Registry::instance().backend(bc.name);
  const int threads = run_thread_count(o, config, bc, backend, resume, out_dir);
  DeviceInfo device = backend.describe(threads);
  Plan plan = build_plan(config, bc, device);

  std::string dir = out_dir;
  if (dir.empty())
    dir = "results/" + slug(host_name(), "host") + "/" + slug(device.name, "device") + "/" + utc_now(kUtcCompact);
  ensure_writable_directory(dir);
  // The directory belongs to this run from here on: a second process is refused at once, and
  // a new run never replaces the record of an earlier one.
  const RunDirectoryLock lock(dir);
  if (resume == nullptr)
    for (const char* f : {"sweep.csv", "machine.yaml", "run.yaml"})
      if (fs::exists(fs::path(dir) / f))
        throw InputError(dir + ": already holds a run (" + f +
                         "); a run is never overwritten: continue an "
                         "interrupted one with --resume " +
                         dir + ", or choose another --out");

  Machine machine;
  machine.device = device;
  std::vector<Sample> all;
  std::set<int> done;
  begin_record(o, config, bc, plan, resume, dir, machine, all, done);
  for (const auto& s : plan.skipped) {
    std::cerr << "note: skipped " << s << "\n";
    machine.missing.push_back(s);
  }

  SweepWriter sweep(dir + "/sweep.csv");
  Progress progress(static_cast<int>(plan.points.size()), !o.quiet);
  SweepHooks hooks;
  hooks.stop_requested = [] { return stop_requested(); };
  hooks.progress = [&](int done_points, const std::string& label) { progress.update(done_points, label); };
  hooks.report = [&](const std::string& line) {
    progress.finish();
    std::cerr << line << "\n";
  };
  SweepOutcome outcome = run_sweep(backend, device, plan, config.measurement, done, sweep, hooks);
  all.insert(all.end(), outcome.samples.begin(), outcome.samples.end());
  machine.missing.insert(machine.missing.end(), outcome.missing.begin(), outcome.missing.end());
  const int failures = outcome.failures;
  const int stopped_by = outcome.stopped_by;
  progress.update(static_cast<int>(plan.points.size()), "fitting");
  progress.finish();
  if (stopped_by != 0) note_interruption(machine, outcome, plan.points.size(), dir);

  fit_samples(all, machine);
  machine.complete = failures == 0 && stopped_by == 0;
  machine.provenance["finished"] = utc_now();
  write_machine_file(machine, dir + "/machine.yaml");

  write_run_plots(machine, all, dir);
  print_summary(std::cout, machine, dir);
  if (stopped_by != 0) return 128 + stopped_by;
  return failures == 0 ? 0 : 1;
}

// Continues the run in `dir` with the config it was started with.
int resume_run(const RunOptions& o) {
  const std::string& dir = o.resume_dir;
  for (const char* f : {"run.yaml", "config.yaml", "sweep.csv"})
    if (!fs::exists(dir + "/" + f))
      throw InputError(dir + ": cannot resume: no " + f + " (not a roofprobe run directory?)");
  ResumeState state;
  state.header = read_machine_file(dir + "/run.yaml");
  RunConfig config = load_config_file(dir + "/config.yaml");
  const std::string recorded = state.header.provenance["config_hash"];
  if (config_hash(config.text) != recorded)
    throw InputError(dir + "/config.yaml: cannot resume: it changed since the run started");
  if (!o.config_path.empty() && config_hash(load_config_file(o.config_path).text) != recorded)
    throw InputError(o.config_path + ": cannot resume: differs from the config " + dir + " was started with");
  const std::string backend = state.header.provenance["backend"];
  const BackendConfig* bc = config.backend(backend);
  if (bc == nullptr || !bc->built)
    throw InputError(dir + ": cannot resume: backend '" + backend + "' is not available in this build");
  state.samples = prepare_sweep_for_resume(dir + "/sweep.csv");
  return run_backend(o, config, *bc, dir, &state);
}

}  // namespace

int run_command(const RunOptions& o) {
  install_stop_handlers();
  if (Comm::world().distributed()) {
    // Under mpirun/srun: driver/fleet/fleet_run.cpp (turns, aggregates, fleet.yaml).
    if (!o.resume_dir.empty())
      throw InputError(
          "--resume: resume one rank's directory without the launcher (roofprobe run --resume DIR/rank-R)");
    return run_fleet(
        o,
        [&](RunConfig& config) {
          config = choose_config(o);
          return chosen_backends(o, config);
        },
        [&](const RunOptions& ro, const RunConfig& config, const std::string& name, const std::string& dir) {
          return run_backend(ro, config, *config.backend(name), dir, nullptr);
        });
  }
  if (!o.resume_dir.empty()) return resume_run(o);
  RunConfig config = choose_config(o);
  std::vector<std::string> backends = chosen_backends(o, config);
  int status = 0;
  for (const auto& name : backends) {
    std::string dir = o.out_dir;
    if (!dir.empty() && backends.size() > 1) dir += "/" + name;
    int backend_status = run_backend(o, config, *config.backend(name), dir, nullptr);
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
    // The run record beside the sweep tells which device it came from (names, peaks).
    fs::path record = fs::path(o.sweep_csv).parent_path() / "run.yaml";
    if (fs::exists(record)) {
      Machine header = read_machine_file(record.string());
      machine.device = header.device;
      machine.provenance = header.provenance;
    } else {
      machine.device.kind = samples.front().backend == "cuda" ? "gpu" : "cpu";
      machine.device.name = "unknown (no run.yaml beside the sweep)";
    }
    machine.provenance["refit_from"] = o.sweep_csv;
    // The feeds the run recorded (run's feeds.yaml), else this build's probes.
    const fs::path feeds_path = fs::path(o.sweep_csv).parent_path() / "feeds.yaml";
    if (fs::exists(feeds_path)) {
      const FeedTable feeds = read_feeds_file(feeds_path.string());
      fit_samples(samples, machine, &feeds);
    } else {
      fit_samples(samples, machine);
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

int plot_command(const PlotCommandOptions& o) {
  PlotOptions options;
  options.format = o.format;
  if (!o.kinds.empty()) options.kinds = parse_plot_kinds(o.kinds);
  options.fma_ratio = o.fma_ratio;
  if (!o.points_file.empty()) options.points = read_points_csv(o.points_file);
  Machine machine = read_valid_machine_file(o.machine_file);
  fs::path dir = fs::path(o.machine_file).parent_path();
  std::vector<Sample> samples;
  fs::path sweep = dir / "sweep.csv";
  if (fs::exists(sweep)) samples = read_sweep_csv(sweep.string());
  options.out_dir = o.out_dir.empty() ? (dir / "plots").string() : o.out_dir;
  PlotReport report = render_plots(machine, samples, options);
  for (const auto& s : report.skipped) std::cerr << "note: skipped " << s << "\n";
  for (const auto& w : report.written) std::cout << w << "\n";
  if (report.written.empty())
    throw InputError(o.machine_file + ": nothing to plot" +
                     (report.skipped.empty() ? std::string() : " (" + report.skipped.front() + ")"));
  return 0;
}

int points_command(const PointsOptions& o) {
  if (!o.out.empty()) check_output_path(o.out);
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
  if (problems.empty()) {
    std::vector<std::string> warnings = physical_warnings(machine_file, read_machine_file(machine_file));
    if (strict)
      problems = warnings;
    else
      for (const auto& w : warnings) std::cerr << "warning: " << w << "\n";
  }
  if (problems.empty()) {
    std::cout << machine_file << ": valid " << kMachineSchema << "\n";
    return 0;
  }
  // The first problem is the error line; the rest help fix the file.
  for (std::size_t i = 1; i < problems.size(); ++i) std::cerr << "  " << problems[i] << "\n";
  throw InputError(problems.front() +
                   (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""));
}

int list_command(const std::string& backend, bool feeds_yaml) {
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
  ExportSettings settings;
  settings.precision = o.precision;
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
    std::cout << format_verdict(build_verdict(machines[0], label(0), machines[1], label(1)), o.format) << std::flush;
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
