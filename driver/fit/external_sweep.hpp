// Bandwidth sweeps written by other tools, read for `roofprobe fit --bandwidth-csv FILE --from ...`
// so that a sweep from ERT, gpu-benches or likwid-bench reaches `compare` without hand conversion.
//
//   csv          working_set_bytes,gbs (roofprobe's own external format; fit.cpp reads it)
//   ert          ERT's raw driver output: the `try.NNN` files (working set bytes, trials,
//                microseconds, bytes, FLOPs per row; the best trial of each working set, as ERT's
//                own scripts take it) or the reduced `max` file (one row per working set: working set,
//                trials, three times, three GB/s, three GFLOP/s; the highest GB/s of the row). `pre`
//                (those columns, a row per trial count) and `sum` (a figure per level) are refused.
//                Lines of text among the rows (an MPI runtime's warnings) are skipped.
//   gpu-benches  the tables of gpu-benches' gpu-cache and gpu-l2-cache ("<n> kB ... <x> GB/s"; the
//                last size column before the time is the data set, the first GB/s the bandwidth)
//   likwid       likwid-bench output, one or many runs concatenated (each run's "Size (Byte):" and
//                "MByte/s:")
#pragma once

#include <string>
#include <vector>

#include "driver/fit/level_model.hpp"

namespace roofprobe {

enum class SweepFormat { Csv, Ert, GpuBenches, Likwid };

// Throws InputError naming the formats for an unknown name.
SweepFormat parse_sweep_format(const std::string& name);

// What a format says about how its sweep fills the caches.
struct ExternalSweepShape {
  // Every multiprocessor reads the same data set (gpu-benches' gpu-cache table, one size column):
  // the working set is also each multiprocessor's footprint.
  bool same_data_per_unit = false;
  // ERT: the file ends with the run description ERT's driver appends to every file it writes
  // (META_DATA), and the largest working set that run planned (its CONFIG's ERT_MEMORY_MAX; 0
  // when unknown).
  bool run_description = false;
  double planned_bytes = 0;
  // gpu-benches' gpu-cache: the rate its "DRAM read" and "DRAM write" columns give per row
  // (working set, GB/s), the device's own memory counters. Empty when the table has no such
  // columns or they read 0 on every row (a run that read no counters).
  std::vector<CurvePoint> memory_traffic;
};

// Why a sample cannot be a measurement, or "" when it can be: a working set or rate that is not a
// positive finite number, a working set over 1 PiB or a rate over 10 PB/s (no memory of any device
// holds or moves that much; such a number is a unit or typing error, not a level). Every reader,
// fit's own csv included, refuses such a line rather than dropping it: a sweep with rows silently
// left out would publish a level from part of the data.
std::string implausible_sample(double working_set_bytes, double gbs);

// Samples (working set bytes, GB/s) of a sweep in one of the other tools' formats (not Csv).
// Throws InputError "FILE:LINE: ..." for a line that is not the format's, or when no sample is found.
std::vector<CurvePoint> read_external_sweep(const std::string& path, SweepFormat format,
                                            ExternalSweepShape* shape = nullptr);

}  // namespace roofprobe
