// `roofprobe compare MEASURED REFERENCE --verdict`: every ceiling of a measured machine file
// against the physical peak at the clock it was measured at (from the measured file itself) and
// against a reference file's spec-sheet and published figures (results/reference/), with a
// verdict per ceiling. The GPU acceptance (driver/roofprobe-acceptance) prints this table.
#pragma once

#include <string>
#include <vector>

#include "driver/model/machine.hpp"

namespace roofprobe {

// A ceiling above its peak (or its spec-sheet figure) by more than this fraction is flagged:
// the clock is measured to about 1%, so anything beyond is a bug until proven otherwise.
inline constexpr double kVerdictAboveTolerance = 0.02;
// "ok" at or above these fractions of the strongest reference available: a published
// measurement of the same GPU (an equally good run should be close to it), else the spec sheet
// or the peak at the measured clock (a micro-benchmark reaches 80% on a healthy GPU).
inline constexpr double kVerdictOkOfPublished = 0.90;
inline constexpr double kVerdictOkOfSpec = 0.80;

struct VerdictRow {
  std::string section;  // "memory bandwidth", "compute", "instructions"
  std::string name;     // "L2", "HBM", "FP64.FMA", "warp GIPS"
  std::string unit;     // "GB/s", "GFLOP/s", "GIPS"
  double measured = 0;
  double peak = 0;            // physical peak at the measured clock, 0 when none is derived
  double peak_clock_mhz = 0;  // the clock that peak uses
  double spec = 0;            // the reference's spec-sheet figure, 0 when it has none
  double published = 0;       // the reference's published measurement, 0 when it has none
  std::string verdict;        // ok | low | above peak | above spec | unchecked
  std::string basis;          // what the verdict compared with: "published", "spec", "peak", ""
};

struct Verdict {
  std::string measured_label, reference_label;  // device names (or the file names)
  std::vector<VerdictRow> rows;
  int ok = 0, low = 0, above_peak = 0, above_spec = 0, unchecked = 0;
};

// Rows for the measured (empirical) ceilings of `measured`: memory levels (the device memory is
// matched whatever each file calls it: DRAM, HBM, GDDR), compute ceilings, warp GIPS.
Verdict build_verdict(const Machine& measured, const std::string& measured_label, const Machine& reference,
                      const std::string& reference_label);

// text (aligned) or markdown (a table), each ending with verdict_summary()'s line, or csv (one
// row per ceiling, no summary). Throws InputError for another format.
std::string format_verdict(const Verdict& verdict, const std::string& format);

// The summary line alone.
std::string verdict_summary(const Verdict& verdict);

}  // namespace roofprobe
