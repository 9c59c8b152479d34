#include "driver/commands.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "driver/atomic_file.hpp"
#include "driver/config.hpp"
#include "driver/engine.hpp"
#include "driver/errors.hpp"
#include "driver/fit.hpp"
#include "driver/machine.hpp"
#include "driver/plan.hpp"
#include "driver/progress.hpp"
#include "driver/summary.hpp"
#include "driver/units.hpp"
#include "driver/version.hpp"
#include "plot/plot.hpp"

namespace fs = std::filesystem;

namespace roofprobe {

namespace {

std::string utc_now(const char* format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, format, &tm);
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

// A directory-name-safe form of a device name: "AMD EPYC 7B13" -> "AMD-EPYC-7B13".
std::string slug(const std::string& text) {
  std::string out;
  for (char c : text) {
    bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    if (keep) out += c;
    else if (!out.empty() && out.back() != '-') out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out.empty() ? "device" : out;
}

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
  if (names.empty()) throw InputError(config.source + ": no backend to run (config has no section for '" + o.backend + "')");
  return names;
}

std::string yaml_run_record(const RunConfig& config, const Machine& m) {
  // The run's identity for later fits and resumes: provenance, device, config text.
  Machine header = m;
  header.memory.clear();
  header.compute.clear();
  std::string text = machine_to_yaml(header);
  std::ostringstream out;
  out << text << "config_text: |\n";
  std::istringstream lines(config.text);
  std::string line;
  while (std::getline(lines, line)) out << "  " << line << "\n";
  return out.str();
}

int run_backend(const RunOptions& o, const RunConfig& config, const BackendConfig& bc, const std::string& out_dir) {
  Backend& backend = *Registry::instance().backend(bc.name);
  int threads = bc.name == "cpu" && o.threads >= 0 ? o.threads : bc.threads;
  DeviceInfo device = backend.describe(threads);
  Plan plan = build_plan(config, bc, device);

  std::string dir = out_dir;
  if (dir.empty())
    dir = "results/" + slug(host_name()) + "/" + slug(device.name) + "/" + utc_now("%Y%m%dT%H%M%SZ");
  ensure_writable_directory(dir);

  Machine machine;
  machine.device = device;
  machine.provenance = {{"tool", "roofprobe"},
                        {"version", kVersion},
                        {"git", kGitRevision},
                        {"command", o.command_line},
                        {"config", config.source},
                        {"config_hash", config_hash(config.text)},
                        {"started", utc_now("%Y-%m-%dT%H:%M:%SZ")},
                        {"host", host_name()},
                        {"backend", bc.name}};
  for (const auto& s : plan.skipped) {
    std::cerr << "note: skipped " << s << "\n";
    machine.missing.push_back(s);
  }
  write_file_atomically(dir + "/run.yaml", yaml_run_record(config, machine));

  SweepWriter sweep(dir + "/sweep.csv");
  std::vector<Sample> all;
  Progress progress(static_cast<int>(plan.points.size()), !o.quiet);
  int failures = 0;
  for (const PlanPoint& point : plan.points) {
    std::string label = point.probe->info().name + " " + params_to_string(point.params);
    progress.update(point.index, label);
    std::unique_ptr<PreparedPoint> prepared = point.probe->prepare(point.params, device);
    PointMeasurement m = measure_point(backend, *prepared, config.measurement);
    if (!m.check.ok) {
      progress.finish();
      std::cerr << "error: verification failed: " << label << ": " << m.check.detail
                << " (samples discarded)\n";
      machine.missing.push_back(label + ": verification failed: " + m.check.detail);
      ++failures;
      continue;
    }
    std::vector<Sample> samples = samples_of(m, bc.name, point.probe->info().name, point.params, point.index, 0);
    sweep.append_point(samples);
    all.insert(all.end(), samples.begin(), samples.end());
  }
  progress.update(static_cast<int>(plan.points.size()), "fitting");
  progress.finish();

  fit_samples(all, machine);
  machine.complete = failures == 0;
  machine.provenance["finished"] = utc_now("%Y-%m-%dT%H:%M:%SZ");
  write_machine_file(machine, dir + "/machine.yaml");

  PlotOptions plot_options;
  plot_options.out_dir = dir + "/plots";
  try {
    PlotReport report = render_plots(machine, all, plot_options);
    for (const auto& s : report.skipped) std::cerr << "note: plot skipped: " << s << "\n";
  } catch (const InputError& e) {
    std::cerr << "warning: plots not written: " << e.what() << "\n";
  }
  print_summary(std::cout, machine, dir);
  return failures == 0 ? 0 : 1;
}

}  // namespace

int run_command(const RunOptions& o) {
  RunConfig config = choose_config(o);
  std::vector<std::string> backends = chosen_backends(o, config);
  int status = 0;
  for (const auto& name : backends) {
    std::string dir = o.out_dir;
    if (!dir.empty() && backends.size() > 1) dir += "/" + name;
    status |= run_backend(o, config, *config.backend(name), dir);
  }
  return status;
}

int fit_command(const FitOptions& o) {
  if (o.out.empty()) throw InputError("fit: --out MACHINE.yaml is required");
  if (o.sweep_csv.empty() == o.bandwidth_csv.empty())
    throw InputError("fit: give either SWEEP.csv or --bandwidth-csv FILE");
  Machine machine;
  machine.provenance = {{"tool", "roofprobe"}, {"version", kVersion}, {"git", kGitRevision},
                        {"started", utc_now("%Y-%m-%dT%H:%M:%SZ")}, {"host", host_name()}};
  if (!o.bandwidth_csv.empty()) {
    machine.device.kind = "cpu";
    machine.device.name = "external sweep";
    machine.provenance["command"] = "roofprobe fit --bandwidth-csv " + o.bandwidth_csv;
    machine.provenance["source"] = o.bandwidth_csv;
    fit_bandwidth_csv(o.bandwidth_csv, machine);
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
    fit_samples(samples, machine);
  }
  machine.provenance["finished"] = utc_now("%Y-%m-%dT%H:%M:%SZ");
  fs::path out_parent = fs::path(o.out).parent_path();
  if (!out_parent.empty()) ensure_writable_directory(out_parent.string());
  write_machine_file(machine, o.out);
  print_summary(std::cout, machine, o.out);
  return 0;
}

int plot_command(const std::string& machine_file, const std::string& out_dir, const std::string& format) {
  Machine machine = read_machine_file(machine_file);
  fs::path dir = fs::path(machine_file).parent_path();
  std::vector<Sample> samples;
  fs::path sweep = dir / "sweep.csv";
  if (fs::exists(sweep)) samples = read_sweep_csv(sweep.string());
  PlotOptions options;
  options.out_dir = out_dir.empty() ? (dir / "plots").string() : out_dir;
  options.format = format;
  PlotReport report = render_plots(machine, samples, options);
  for (const auto& s : report.skipped) std::cerr << "note: skipped " << s << "\n";
  for (const auto& w : report.written) std::cout << w << "\n";
  return 0;
}

int validate_command(const std::string& machine_file) {
  std::vector<std::string> problems = validate_machine_file(machine_file);
  if (problems.empty()) {
    std::cout << machine_file << ": valid " << kMachineSchema << "\n";
    return 0;
  }
  // The first problem is the error line; the rest help fix the file.
  for (std::size_t i = 1; i < problems.size(); ++i) std::cerr << "  " << problems[i] << "\n";
  throw InputError(problems.front() + (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) + " more)" : ""));
}

int list_command(const std::string& backend) {
  if (!backend.empty() && backend != "cpu" && backend != "cuda" && backend != "all")
    throw InputError("--backend: '" + backend + "' is not one of cpu, cuda, all");
  std::string filter = backend == "all" ? "" : backend;
  if (!filter.empty() && Registry::instance().backend(filter) == nullptr)
    throw InputError("--backend " + filter + ": this roofprobe was built without it");
  print_probe_list(std::cout, Registry::instance().probes(filter));
  return 0;
}

}  // namespace roofprobe
