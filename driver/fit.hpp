// Fitting: plateaus of bandwidth over working set -> memory levels; maxima of the FLOP probe ->
// compute ceilings. Pure functions of samples, so they run anywhere and are unit-tested on
// synthetic sweeps.
#pragma once

#include <string>
#include <vector>

#include "driver/machine.hpp"
#include "driver/sweep.hpp"

namespace roofprobe {

// One point of a bandwidth curve: several samples may share a size.
struct CurvePoint {
  double x = 0;    // working set, bytes
  double y = 0;    // rate (GB/s)
};

// A detected plateau, in the order of increasing working set.
struct Plateau {
  double x_lo = 0, x_hi = 0;      // first and last size in the plateau
  double value = 0;               // robust level (median of per-size values)
  Stats stats;                    // over all samples in [x_lo, x_hi]
  int sizes = 0;                  // distinct sizes inside
};

struct PlateauOptions {
  int min_sizes = 2;              // a plateau spans at least this many distinct sizes
  double min_step = 0.08;         // adjacent levels differ by at least this fraction
};

// Finds the plateaus of a rate-vs-size curve: segments of near-constant rate separated by
// drops, ignoring the launch-overhead ramp at small sizes, soft knees between levels and
// outliers. Returned nearest (smallest size) first, each faster than the next.
std::vector<Plateau> find_plateaus(const std::vector<CurvePoint>& points,
                                   const PlateauOptions& options = {});

// Names plateaus from a cache hierarchy (caches nearest first, total bytes of each level as
// seen by the run); the level past the last cache gets `memory_name`. With no caches, levels are
// named L1, L2, ... and the last `memory_name`.
std::vector<std::string> name_levels(const std::vector<Plateau>& plateaus,
                                     const std::vector<CacheInfo>& caches,
                                     const std::string& memory_name);

// Statistics of a set of rates: best = max, median, spread = (max - min) / median, samples.
// An empty set gives all zeros.
Stats compute_stats(std::vector<double> values);

// Fits every feed of every probe present in `samples`; device describes the machine the samples
// came from (for names and theoretical peaks). Returns levels and ceilings in `machine`.
void fit_samples(const std::vector<Sample>& samples, Machine& machine);

// Fits an external sweep (CSV with columns working_set_bytes,gbs; other columns ignored).
void fit_bandwidth_csv(const std::string& path, Machine& machine);

}  // namespace roofprobe
