// Run configuration: YAML (a file, or the embedded configs/default.yaml / quick.yaml), validated
// against the registered probes' axes. Every error names file, line and key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"

namespace roofprobe {

// The measurement engine's stopping rule (nvbench's stdrel idea) and launch sizing.
struct MeasurementSettings {
  double warmup_seconds = 0.02;         // launches before sampling, at least one
  int min_samples = 5;                  // never stop with fewer (unless timeout with >= 3)
  double min_seconds = 0.1;             // sample at least this long per point
  double max_noise = 0.01;              // stop once relative stdev of samples is below this
  double timeout_seconds = 0.5;         // stop sampling a point after this long, noisy or not
  double target_launch_seconds = 0.01;  // repetitions per launch are raised to reach this
};

// The range each time and noise setting must lie in (docs/RELIABILITY.md): wide enough for any
// real measurement, narrow enough that no setting makes a point run without end, and that a
// single launch stays short enough for a stop signal to be honoured within a second.
struct SettingRange {
  const char* key;  // under measurement:
  double min, max;
};
inline constexpr SettingRange kMeasurementRanges[] = {
    {"warmup_seconds", 1e-4, 10},
    {"min_seconds", 1e-3, 60},
    {"max_noise", 1e-3, 1},
    {"timeout_seconds", 1e-3, 60},
    {"target_launch_seconds", 1e-4, 0.1},
};

struct ProbeConfig {
  std::string name;
  // axis -> values in canonical text, in the order they are swept
  std::map<std::string, std::vector<std::string>> axes;
  std::map<std::string, int> axis_line;  // 1-based line of each axis in the config (0: default)
  int line = 0;
};

// The sustained phase (docs/METHODOLOGY.md): how long each ceiling's point is looped after the
// sweep when the config does not say (<backend>.sustained_seconds). A GPU reaches its power cap
// and settled clock within a few seconds of full load; a CPU's turbo budget decays over seconds
// too, and its phase is shorter because a CPU run has its ceilings on fewer, slower points.
inline constexpr double kDefaultSustainedSecondsCpu = 3;
inline constexpr double kDefaultSustainedSecondsGpu = 5;
// The range of <backend>.sustained_seconds: 0 turns the phase off; ten minutes per ceiling is
// beyond any power or thermal time constant the phase is for.
inline constexpr SettingRange kSustainedSecondsRange = {"sustained_seconds", 0, 600};

struct BackendConfig {
  std::string name;   // cpu | cuda
  bool built = true;  // false: section present but backend not compiled in
  int threads = 0;    // cpu: 0 = all cores
  int device = -1;    // cuda: device ordinal (cuda.device); -1: not given (device 0)
  // Seconds each compute ceiling and the device-memory level is looped for in the sustained
  // phase (at most; it stops once settled); 0: no sustained phase.
  double sustained_seconds = 0;
  std::vector<ProbeConfig> probes;
};

struct RunConfig {
  std::string source;  // file path, or "embedded:default.yaml"
  std::string text;    // the YAML as read (recorded in provenance)
  MeasurementSettings measurement;
  std::vector<BackendConfig> backends;
  const BackendConfig* backend(const std::string& name) const;
};

// Parses and validates. `source` names the file in messages. Throws InputError with one line.
RunConfig parse_config(const std::string& text, const std::string& source);
RunConfig load_config_file(const std::string& path);
// Config files larger than this are refused unread (the shipped ones are about 1 KiB).
inline constexpr std::size_t kMaxConfigFileBytes = 64u << 10;
// The embedded configs/<name> ("default.yaml", "quick.yaml").
RunConfig load_embedded_config(const std::string& name);
const std::map<std::string, std::string>& embedded_files();

// Expands a Bytes sweep {min, max, points_per_octave} into sizes rounded to 256 bytes.
std::vector<std::string> geometric_sizes(double min_bytes, double max_bytes, int points_per_octave);

// A stable hash of the config text (FNV-1a, hex) for provenance and resume checks.
std::string config_hash(const std::string& text);

}  // namespace roofprobe
