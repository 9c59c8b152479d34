// Fitting: the level model of bandwidth over working set -> memory levels; maxima of the FLOP probe ->
// compute ceilings. Pure functions of samples, so they run anywhere and are unit-tested on
// synthetic sweeps.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "driver/fit/external_sweep.hpp"
#include "driver/fit/feeds_file.hpp"
#include "driver/fit/level_model.hpp"
#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"

namespace roofprobe {

// A fitted memory level, in the order of increasing working set.
struct Plateau {
  double x_lo = 0, x_hi = 0;  // first and last sampled size the level serves most
  double value = 0;           // the level's bandwidth B_i in the level model
  Interval value_ci95;
  double capacity = 0;  // knee to the next level, bytes (0: the last level)
  Interval capacity_ci95;
  Stats stats;    // over the raw samples of the plateau (FittedLevel::samples)
  int sizes = 0;  // distinct sizes inside
};

// The levels of a rate-vs-size curve by the level model (level_model.hpp): nearest (fastest)
// first. `model`, when given, receives the model's one-line description; `unresolved`, a level
// the data cannot rule out (LevelModelFit::unresolved); `unlocated`, the levels of the fit whose
// rates the data do not locate, left out of the plateaus (LevelModelFit::unlocated); `in_knees`,
// knees where a level may hide (LevelModelFit::in_knees).
std::vector<Plateau> find_plateaus(const std::vector<CurvePoint>& points, const LevelModelOptions& options = {},
                                   std::string* model = nullptr, std::optional<UnresolvedLevel>* unresolved = nullptr,
                                   std::vector<UnresolvedLevel>* unlocated = nullptr,
                                   std::vector<UnresolvedLevel>* in_knees = nullptr);

// The `missing:` line for a level the fit could not resolve; `chosen_levels`: the levels of the fit
// the criterion chose; `curve` names the curve ("probe 'bandwidth' (cpu, mode=read)", a CSV's path).
std::string unresolved_level_note(const UnresolvedLevel& level, int chosen_levels, const std::string& curve);

// Names levels from a cache hierarchy (caches nearest first, total bytes of each level as seen by
// the run): a level is the cache whose capacity is nearest its knee; the last level gets
// `memory_name`. With no caches, levels are named L1, L2, ... and the last `memory_name`.
// `first_level` (a cache's name, or empty): the series' nearest level, the name of its first
// level when it has more than one (FeedSpec::series_first_level).
std::vector<std::string> name_levels(const std::vector<Plateau>& plateaus, const std::vector<CacheInfo>& caches,
                                     const std::string& memory_name, const std::string& first_level = "");

// Statistics of a set of rates: best = max, median, spread = (max - min) / median, samples.
// An empty set gives all zeros.
Stats compute_stats(std::vector<double> values);

// Fits every feed of every probe present in `samples`; device describes the machine the samples
// came from (for names and theoretical peaks). Returns levels and ceilings in `machine`.
// The feeds of each probe come from `feeds` (a run's feeds.yaml) when it has the probe, else from
// the probes this build registered; a probe in neither is named under machine.missing.
void fit_samples(const std::vector<Sample>& samples, Machine& machine, const FeedTable* feeds = nullptr);

// The sustained figures (SustainedFigure) of the ceilings and levels in `machine`, from the
// sustained phase's rows of a sweep (phase "sustained:<name>", driver/model/sweep.hpp): the mean
// of the windows the settle rule (driver/run/engine.hpp, windows_settled) holds settled, with its
// 95% interval; an unsettled phase is marked settled: false and has no interval. A ceiling without
// rows gets none; rows of a ceiling the machine lacks are named under missing:.
void fit_sustained(const std::vector<Sample>& sustained_rows, Machine& machine);

// Fits an external sweep (CSV with columns working_set_bytes,gbs; other columns ignored).
// How an external sweep (fit --bandwidth-csv) is read and its levels named.
struct ExternalSweepOptions {
  SweepFormat format = SweepFormat::Csv;
  // Names of the levels, nearest first (--levels L2,HBM): the fit must find exactly as many.
  std::vector<std::string> level_names;
  // Capacities of the caches the sweep passes through, nearest first (--cache-sizes): knee
  // positions for the fit and names by capacity (L1, L2, ...), as a run's topology gives them.
  std::vector<double> cache_bytes;
  // The caches of the device the sweep ran on (--gpu NAME: a reference machine file's), nearest
  // first, and its memory's peak (GB/s; 0: unknown): the levels are named from their capacities,
  // and a last level faster than memory's peak is a cache. Not with cache_bytes.
  std::vector<CacheInfo> device_caches;
  double memory_peak_gbs = 0;
  std::string caches_from;  // where the caches come from, for notes ("--gpu h100-pcie")
  // Every core or multiprocessor reads the same data set (gpu-benches' gpu-cache): a private
  // cache fills at its own capacity, not at all instances' together. Set by the reader too.
  bool same_data_per_unit = false;
};

// Fits an external sweep into machine.memory; machine.device (kind, memory_name) is the caller's.
void fit_bandwidth_csv(const std::string& path, Machine& machine, const ExternalSweepOptions& options = {});

}  // namespace roofprobe
