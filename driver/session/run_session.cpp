#include "driver/session/run_session.hpp"
#include "driver/session/energy_phase.hpp"
#include "driver/session/sustained_phase.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <random>
#include <set>

#include "driver/fit/energy.hpp"
#include "driver/fit/feeds_file.hpp"
#include "driver/fit/fit.hpp"
#include "driver/model/atomic_file.hpp"
#include "driver/model/errors.hpp"
#include "driver/model/machine.hpp"
#include "driver/model/csv_text.hpp"
#include "driver/model/sweep.hpp"
#include "driver/report/summary.hpp"
#include "driver/run/energy_counter.hpp"
#include "driver/run/device_lock.hpp"
#include "driver/run/engine.hpp"
#include "driver/run/plan.hpp"
#include "driver/run/progress.hpp"
#include "driver/run/run_identity.hpp"
#include "driver/run/signals.hpp"
#include "driver/run/sweep_runner.hpp"
#include "driver/session/power_caps.hpp"
#include "driver/version.hpp"
#include "plot/plot.hpp"

namespace fs = std::filesystem;

namespace roofprobe {

namespace {

// --quick with a config file keeps its probes and axes but measures with quick's budget, and
// quick's sustained phase at most: a first look, not a figure to report. (config.yaml keeps the
// file's text, so a resumed run applies it again: run.yaml records `quick`.)
void apply_quick_budget(RunConfig& config) {
  const RunConfig quick = load_embedded_config("quick.yaml");
  config.measurement = quick.measurement;
  for (BackendConfig& b : config.backends)
    if (const BackendConfig* q = quick.backend(b.name))
      b.sustained_seconds = std::min(b.sustained_seconds, q->sustained_seconds);
}

}  // namespace

RunConfig choose_config(const RunOptions& o) {
  if (o.config_path.empty()) return load_embedded_config(o.quick ? "quick.yaml" : "default.yaml");
  RunConfig config = load_config_file(o.config_path);
  if (o.quick) apply_quick_budget(config);
  return config;
}

std::vector<std::string> chosen_backends(const RunOptions& o, const RunConfig& config) {
  std::vector<std::string> names;
  // A power limit is one device's: the run sets it only where the user named the backend.
  if (!o.power_caps.empty() && o.backend == "all")
    throw InputError("--power-caps: name the backend whose power limit the run sets (--backend cuda)");
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

namespace {

// What a run directory records before measuring, so a run can be re-fitted or resumed:
// run.yaml (provenance and device, the machine file's header), config.yaml (exact text) and
// feeds.yaml, each written once, never through a link, and tied to the run by its run id.
void write_run_record(const std::string& dir, const RunConfig& config, const Machine& m) {
  Machine header = m;
  header.memory.clear();
  header.compute.clear();
  OutputRules once = inside_output_directory();
  once.never_replace = true;
  write_file_atomically(dir + "/config.yaml", config.text, once);
  write_file_atomically(dir + "/run.yaml", machine_to_yaml(header), once);
  // How the samples are fitted, so a build without this backend's probes can re-fit them.
  const auto value = [&](const char* key) {
    const auto it = m.provenance.find(key);
    return it == m.provenance.end() ? std::string() : it->second;
  };
  write_file_atomically(dir + "/feeds.yaml", feeds_to_yaml(registered_feeds(value("backend")), value("run_id")), once);
}

// A run's id: unique per run (time, host, process, random bits), written into every file of the
// run so `fit` can tell files of two runs apart.
std::string new_run_id() {
  std::random_device random;
  char tail[16];
  std::snprintf(tail, sizeof tail, "%08x", static_cast<unsigned>(random()));
  return utc_now(kUtcCompact) + "-" + slug(host_name(), "host") + "-" + std::to_string(::getpid()) + "-" + tail;
}

// The files and directories a run writes in its directory: a new run refuses a directory that
// holds any of them (a link there too, even dangling), so it never replaces a user's file.
constexpr const char* kRunFiles[] = {"sweep.csv",  "machine.yaml", "run.yaml",        "config.yaml",
                                     "feeds.yaml", "fleet.yaml",   "aggregates.yaml", "plots"};

// An exclusive flock on DIR/.roofprobe.lock for as long as a run uses DIR: two runs writing one
// sweep.csv would interleave their samples.
class RunDirectoryLock {
 public:
  explicit RunDirectoryLock(const std::string& dir) {
    const std::string path = dir + "/" + kRunLockFile;
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
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
    machine.provenance = {{"tool", "roofprobe"},
                          {"version", kVersion},
                          {"git", kGitRevision},
                          {"command", o.command_line},
                          {"config", config.source},
                          {"config_hash", config_hash(config.text)},
                          {"started", utc_now()},
                          {"host", host_name()},
                          {"backend", bc.name},
                          {"run_id", new_run_id()},
                          {"planned_points", std::to_string(plan.points.size())},
                          // A fit of the sweep alone can tell a run that ended before its
                          // sustained phase from one that had none to run.
                          {"sustained_seconds", csv_text::number_text(bc.sustained_seconds)},
                          {"quick", o.quick ? "true" : "false"}};
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
    for (std::string& line : not_measured_lines(not_measured, "interrupted"))
      machine.missing.push_back(std::move(line));
  }
}

// True when every view the machine file has data for was drawn.
bool write_run_plots(const Machine& machine, const std::vector<Sample>& all, const std::string& dir) {
  PlotOptions plot_options;
  plot_options.out_dir = dir + "/plots";
  try {
    ensure_subdirectory_without_link(plot_options.out_dir);
    PlotReport report = render_plots(machine, burst_samples(all), plot_options);
    for (const auto& s : report.skipped) std::cerr << "note: plot skipped: " << s << "\n";
    return true;
  } catch (const InputError& e) {
    std::cerr << "warning: plots not written: " << e.what() << "\n";
    return false;
  }
}

// A stop asked for after the measurements (while fitting or drawing): the machine file is written
// whole, the plots not begun are left, and the exit status still says the run was stopped, so
// that a script that sent the signal can tell.
int stopped_after_measuring(int signal, const std::string& dir, bool plots_drawn) {
  std::cerr << "note: stopped by " << signal_name(signal) << " after measuring: " << dir << "/machine.yaml is whole"
            << (plots_drawn ? ", and the plots were drawn\n"
                            : "; the plots are not (draw them with: roofprobe plot " + dir + "/machine.yaml)\n");
  return 128 + signal;
}

// A new run's directory must hold none of the files a run writes: never a run to overwrite,
// a user's file of the same name or a link to write through. Checked before the device lock (so a
// waiting run learns it at once) and again under the directory's lock (the answer that counts).
void refuse_files_in_the_way(const std::string& dir, const ResumeState* resume) {
  if (resume != nullptr) return;
  // A finished run has nothing to resume: the hint would only meet another refusal.
  const auto finished_run = [&] {
    try {
      const Machine m = read_machine_file(dir + "/machine.yaml");
      return m.complete && m.provenance.count("finished") > 0;
    } catch (const InputError&) {
      return false;
    }
  };
  for (const char* f : kRunFiles) {
    struct stat st {};
    if (::lstat((dir + "/" + f).c_str(), &st) != 0) continue;
    const bool ours = std::string(f) == "sweep.csv" || std::string(f) == "machine.yaml" || std::string(f) == "run.yaml";
    if (S_ISLNK(st.st_mode))
      throw InputError(dir + "/" + f +
                       ": is a symbolic link; a run never writes through a link in its directory "
                       "(remove it, or choose another --out)");
    if (ours && finished_run())
      throw InputError(dir +
                       ": already holds a finished run (machine.yaml); a run is never overwritten: choose "
                       "another --out");
    throw InputError(dir + (ours ? ": already holds a run (" + std::string(f) +
                                       "); a run is never overwritten: continue an interrupted one with --resume " +
                                       dir + ", or choose another --out"
                                 : "/" + std::string(f) +
                                       ": already there, and a run would write it; roofprobe never replaces it: "
                                       "choose another --out"));
  }
}

// The plan's FMA, tensor and device-memory points again under each of --power-caps, after the
// run's own plan; their samples join the run's (each with its cap), their gaps its missing:.
// Returns the signal that stopped them, or 0. A stop here is no gap of the run's own plan: it is
// named under missing: without a --resume hint (a resumed run does not set caps).
int measure_under_caps(const RunOptions& o, Backend& backend, PowerLimitControl& control, double limit_before,
                       const DeviceInfo& device, const Plan& plan, const MeasurementSettings& settings,
                       SweepWriter& sweep, const SweepHooks& run_hooks, SweepOutcome& outcome, std::vector<Sample>& all,
                       Machine& machine) {
  const Plan cap_plan = power_cap_plan(plan, device);
  if (cap_plan.points.empty()) {
    machine.missing.push_back(
        "--power-caps: the plan has no FMA, tensor or device-memory point to measure under a cap");
    return 0;
  }
  Progress progress(static_cast<int>(cap_plan.points.size() * o.power_caps.size()), !o.quiet);
  SweepHooks hooks = run_hooks;
  hooks.progress = [&](int done_points, const std::string& label) { progress.update(done_points, label); };
  hooks.report = [&](const std::string& line) {
    progress.finish();
    std::cerr << line << "\n";
  };
  const SweepOutcome capped =
      run_power_caps(backend, control, limit_before, device, cap_plan, o.power_caps, settings, sweep, hooks);
  progress.finish();
  all.insert(all.end(), capped.samples.begin(), capped.samples.end());
  machine.missing.insert(machine.missing.end(), capped.missing.begin(), capped.missing.end());
  outcome.failures += capped.failures;
  outcome.foreign_points += capped.foreign_points;
  if (capped.stopped_by != 0) {
    std::cerr << "note: stopped by " << signal_name(capped.stopped_by) << " under the power caps; the limit is "
              << "restored; a new run measures the caps left (--resume does not)\n";
    for (std::string& line :
         not_measured_lines(capped.not_measured, "interrupted by " + std::string(signal_name(capped.stopped_by))))
      machine.missing.push_back(std::move(line));
  }
  return capped.stopped_by;
}

int run_session(const RunOptions& o, const RunConfig& config, const BackendConfig& bc, const std::string& out_dir,
                const ResumeState* resume) {
  // cuda.device picks the GPU through the variable the CUDA backend reads, unless the
  // environment already chose one (ROOFPROBE_CUDA_DEVICE: the user's, or the MPI binding's per rank).
  if (bc.name == "cuda" && bc.device >= 0 && std::getenv("ROOFPROBE_CUDA_DEVICE") == nullptr)
    ::setenv("ROOFPROBE_CUDA_DEVICE", std::to_string(bc.device).c_str(), 0);
  Backend& backend = *Registry::instance().backend(bc.name);
  // Power caps are refused before anything is written or measured: a backend without a settable
  // limit, a cap outside the device's range, a user who may not change it.
  PowerLimitControl* power_control = nullptr;
  if (!o.power_caps.empty()) {
    if (resume != nullptr)
      throw InputError("--power-caps: a resumed run measures the points its run left; start a new run for caps");
    power_control = &power_limit_control_of(backend);
    check_power_caps(*power_control, o.power_caps);
  }
  const int threads = run_thread_count(o, config, bc, backend, resume, out_dir);
  // Who the device is, without touching it: a run that waits for the device must not use it.
  const DeviceInfo identity = backend.identify();
  std::string dir = out_dir;
  if (dir.empty())
    dir = "results/" + slug(host_name(), "host") + "/" + slug(identity.name, "device") + "/" + utc_now(kUtcCompact);
  // The directory belongs to this run from here on: a second process is refused at once, and
  // a new run never replaces the record of an earlier one, nor a file a user keeps there. A
  // directory that is already there (a resumed run's, a user's) is locked and checked before the
  // device lock, so a run that could never write it is refused at once, not after a wait; a new
  // one is made once the plan fits the device.
  std::optional<RunDirectoryLock> dir_lock;
  if (struct stat st{}; ::stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    ensure_writable_directory(dir);
    refuse_files_in_the_way(dir, resume);  // first without the lock: a refused run leaves no lock file
    dir_lock.emplace(dir);
    refuse_files_in_the_way(dir, resume);
  }
  // The device belongs to this run while it measures: every roofprobe process of every user on
  // the node shares the lock (driver/run/device_lock.hpp). It is taken before the device is
  // described: describing runs kernels (a GPU context, the clock's spin), which the holder's
  // foreign-load checks would count as another process's use.
  DeviceLockOptions lock_options;
  lock_options.wait = !o.no_wait;
  lock_options.run = dir;
  lock_options.give_up = [] { return stop_requested() != 0; };
  lock_options.report = [](const std::string& line) { std::cerr << "note: " << line << "\n"; };
  const std::string lock_name = device_lock_name(identity, host_name());
  const std::string what =
      identity.kind == "gpu" ? "GPU " + identity.name + " (" + lock_name.substr(4) + ")" : "the CPU of " + host_name();
  const DeviceLock device_lock(lock_name, what, lock_options);
  if (device_lock.waited_seconds() > 0.5)
    std::cerr << "note: " << what << " is free after " << static_cast<long>(device_lock.waited_seconds()) << " s\n";
  DeviceInfo device = backend.describe(threads);
  // Read under the device lock: the limit the run sets again is the one nobody else's run changed.
  double limit_before_caps = 0;
  if (power_control != nullptr) {
    try {
      limit_before_caps = power_control->current_w();
    } catch (const PowerLimitError& e) {
      throw InputError(std::string("--power-caps: ") + e.what());
    }
    char watts[32];
    std::snprintf(watts, sizeof watts, "%g", limit_before_caps);
    device.extra[kExtraPowerLimitSetW] = watts;
  }
  // Before the directory is made: a plan the device cannot hold is refused with nothing written.
  const Plan plan = build_plan(config, bc, device);
  if (!dir_lock) {
    ensure_writable_directory(dir);
    dir_lock.emplace(dir);
    refuse_files_in_the_way(dir, resume);
  }
  // With the device to itself: the idle power is the device's own.
  describe_energy_counter(backend, device);
  if (!plan.not_existing.empty())
    std::cerr << "note: " << plan.not_existing.size()
              << " combinations of the config's axes do not exist on this device and are not planned (roofprobe list"
              << (device.extra.count("compute_capability") ? " --arch " + device.extra.at("compute_capability")
                                                           : std::string())
              << " shows which do)\n";

  Machine machine;
  machine.device = device;
  std::vector<Sample> all;
  std::set<int> done;
  begin_record(o, config, bc, plan, resume, dir, machine, all, done);
  // The burst fit names the ceilings and the points behind them; the sustained phase loops those
  // points not yet looped (a run stopped in its sustained phase resumes there).
  // Both phases read the one fit of the sweep's rows; it is redone only when the sweep has grown.
  Machine burst;
  std::size_t burst_rows = 0;
  const auto burst_fit = [&]() -> const Machine& {
    std::vector<Sample> rows = burst_samples(all);
    if (rows.size() != burst_rows || burst_rows == 0) {
      burst = Machine{};
      burst.device = device;
      fit_samples(rows, burst);
      burst_rows = rows.size();
    }
    return burst;
  };
  const auto sustained_to_do = [&](std::vector<std::string>& missing) {
    if (bc.sustained_seconds <= 0) return std::vector<SustainedTarget>{};
    return sustained_targets(plan, burst_fit(), all, missing);
  };
  // The energy phase follows the sustained one where the device has an energy counter: it runs
  // the same ceilings and every memory level on part of the device (energy_phase.hpp).
  const std::string counter = device_extra(device, kEnergyCounterKey);
  const bool energy_phase = bc.sustained_seconds > 0 && !counter.empty() && counter.rfind("none: ", 0) != 0;
  const WorkerSplit split = energy_phase ? worker_split(backend, device) : WorkerSplit{};
  const auto energy_to_do = [&](std::vector<std::string>& missing) {
    if (!energy_phase) return std::vector<EnergyTarget>{};
    return energy_targets(plan, burst_fit(), all, split, missing);
  };
  std::vector<std::string> ignored;
  if (resume != nullptr && done.size() == plan.points.size() && sustained_to_do(ignored).empty() &&
      energy_to_do(ignored).empty())
    throw InputError(dir + ": the run is complete: every planned point (" + std::to_string(plan.points.size()) +
                     ") is in its sweep.csv; nothing to resume (fit DIR/sweep.csv re-fits it)");
  // Points a resumed run measured beside another process's load stay named.
  if (resume != nullptr)
    for (const std::string& gap : foreign_load_gaps(all)) machine.missing.push_back(gap);
  // When this run had the device to itself: from taking its lock to writing the machine file.
  machine.provenance["measured_from"] = utc_now_milliseconds();
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
  progress.finish();
  // The sustained phase, under the device's own limit, then the energy phase, then the power caps:
  // each starts only where the run before it was not stopped.
  int phase_failures = 0;
  if (outcome.stopped_by == 0 && !outcome.device_lost && bc.sustained_seconds > 0) {
    const std::vector<SustainedTarget> targets = sustained_to_do(machine.missing);
    const SustainedOutcome sustained = run_sustained_phase(
        backend, device, targets, config.measurement, bc.sustained_seconds, sweep, [] { return stop_requested() != 0; },
        [&](const std::string& line) {
          if (!o.quiet || line.rfind("error", 0) == 0) std::cerr << line << "\n";
        });
    all.insert(all.end(), sustained.samples.begin(), sustained.samples.end());
    machine.missing.insert(machine.missing.end(), sustained.missing.begin(), sustained.missing.end());
    phase_failures = sustained.failures;
    outcome.foreign_points += sustained.foreign;
    // A stop during the phase is an interruption like one during the sweep: resumable.
    outcome.stopped_by = stop_requested();
  }
  if (outcome.stopped_by == 0 && !outcome.device_lost && energy_phase) {
    const std::vector<EnergyTarget> targets = energy_to_do(machine.missing);
    const EnergyPhaseOutcome energy = run_energy_phase(
        backend, device, split, targets, config.measurement, energy_share_seconds(device), sweep,
        [] { return stop_requested() != 0; },
        [&](const std::string& line) {
          if (!o.quiet || line.rfind("error", 0) == 0) std::cerr << line << "\n";
        });
    all.insert(all.end(), energy.samples.begin(), energy.samples.end());
    machine.missing.insert(machine.missing.end(), energy.missing.begin(), energy.missing.end());
    phase_failures += energy.failures;
    outcome.foreign_points += energy.foreign;
    outcome.stopped_by = stop_requested();
  }
  int caps_stopped_by = 0;
  if (power_control != nullptr && outcome.stopped_by == 0 && !outcome.device_lost)
    caps_stopped_by = measure_under_caps(o, backend, *power_control, limit_before_caps, device, plan,
                                         config.measurement, sweep, hooks, outcome, all, machine);
  const int failures = outcome.failures + phase_failures;
  const int stopped_by = outcome.stopped_by != 0 ? outcome.stopped_by : caps_stopped_by;
  progress.update(static_cast<int>(plan.points.size()), "fitting");
  progress.finish();
  if (outcome.stopped_by != 0) note_interruption(machine, outcome, plan.points.size(), dir);

  // What the run itself found missing, ahead of the fit's notes: a refit carries these over.
  machine.provenance["run_gaps"] = std::to_string(machine.missing.size());
  fit_samples(all, machine);
  machine.complete = failures == 0 && stopped_by == 0 && outcome.foreign_points == 0 &&
                     (resume == nullptr || foreign_load_gaps(resume->samples).empty());
  machine.provenance["finished"] = utc_now();
  machine.provenance["measured_until"] = utc_now_milliseconds();
  write_file_atomically(dir + "/machine.yaml", machine_to_yaml(machine), inside_output_directory());

  // An interrupted run draws what it measured; a stop asked for after measuring skips the plots.
  const bool stopped_after = stopped_by == 0 && stop_requested() != 0;
  const bool plots_drawn = !stopped_after && write_run_plots(machine, all, dir);
  print_summary(std::cout, machine, dir);
  if (stopped_by != 0) return 128 + stopped_by;
  if (const int late = stop_requested(); late != 0) return stopped_after_measuring(late, dir, plots_drawn);
  return failures == 0 ? 0 : 1;
}

// A provenance entry a resume depends on; a run.yaml without it was not written by a run.
std::string recorded_in_run(const Machine& run, const std::string& dir, const std::string& key) {
  std::string value = provenance_of(&run, key);
  if (value.empty())
    throw InputError(dir + "/run.yaml: cannot resume: it records no " + key + " (not written by roofprobe run?)");
  return value;
}

}  // namespace

int run_backend(const RunOptions& o, const RunConfig& config, const std::string& backend, const std::string& out_dir) {
  const BackendConfig* bc = config.backend(backend);
  if (bc == nullptr) throw InputError(config.source + ": no section for backend '" + backend + "'");
  return run_session(o, config, *bc, out_dir, nullptr);
}

int resume_run(const RunOptions& o) {
  const std::string& dir = o.resume_dir;
  // Options that disagree with the run are refused, never ignored.
  if (!o.out_dir.empty() && !same_file(o.out_dir, dir))
    throw InputError("--out " + o.out_dir + ": a resumed run stays in its own directory (--resume " + dir +
                     "); drop --out");
  for (const char* f : {"run.yaml", "config.yaml", "sweep.csv"})
    if (!fs::exists(dir + "/" + f))
      throw InputError(dir + ": cannot resume: no " + f + " (not a roofprobe run directory?)");
  ResumeState state;
  state.header = read_machine_file(dir + "/run.yaml");
  const std::string backend = recorded_in_run(state.header, dir, "backend");
  if (o.backend != "all" && o.backend != backend)
    throw InputError("--backend " + o.backend + ": the run in " + dir + " measured the " + backend +
                     " backend; drop --backend to resume it");
  // Another node's device, even of the same model, measures other figures: its samples would mix.
  if (const std::string host = provenance_of(&state.header, "host"); !host.empty() && host != host_name())
    throw InputError(dir + ": cannot resume: the run was started on host '" + host + "', this is '" + host_name() +
                     "': resume it there");
  RunConfig config = load_config_file(dir + "/config.yaml");
  const std::string recorded = recorded_in_run(state.header, dir, "config_hash");
  if (config_hash(config.text) != recorded)
    throw InputError(dir + "/config.yaml: cannot resume: it changed since the run started");
  if (!o.config_path.empty() && config_hash(load_config_file(o.config_path).text) != recorded)
    throw InputError(o.config_path + ": cannot resume: differs from the config " + dir + " was started with");
  // The measurement budget the run started with: --quick is a run's, not a resume's, to choose.
  const bool started_quick = provenance_of(&state.header, "quick") == "true";
  if (o.quick && !started_quick)
    throw InputError("--quick: the run in " + dir + " does not record --quick (run.yaml); drop --quick to resume it");
  if (started_quick) apply_quick_budget(config);
  const BackendConfig* bc = config.backend(backend);
  if (bc == nullptr || !bc->built)
    throw InputError(dir + ": cannot resume: backend '" + backend + "' is not available in this build");
  // A finished run is not measured again: its machine file stays as it is.
  if (fs::exists(dir + "/machine.yaml")) {
    const Machine finished = read_machine_file(dir + "/machine.yaml");
    const auto it = finished.provenance.find("finished");
    if (finished.complete && it != finished.provenance.end())
      throw InputError(dir + ": the run is complete (machine.yaml, finished " + it->second +
                       "); nothing to resume: start a new run with another --out");
  }
  // Cutting a partial point out of the sweep of a run that is still writing it would lose its rows.
  if (run_directory_in_use(dir))
    throw InputError(dir + ": another roofprobe run is writing there; resume it after that run ends");
  state.samples = prepare_sweep_for_resume(dir + "/sweep.csv");
  return run_session(o, config, *bc, dir, &state);
}

}  // namespace roofprobe
