// `roofprobe compare`: the ceilings of several machine files side by side, with ratios to the
// first file. The table is built from the files (no I/O here) and printed as text, markdown or
// CSV; `--plot` (plot/compare_overlay.hpp) draws the same machines on one roofline.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "driver/model/machine.hpp"

namespace roofprobe {

struct CompareCell {
  bool present = false;
  double value = 0;
  std::string source;  // empirical | published | spec | theoretical
};

struct CompareRow {
  std::string section;             // "device", "memory bandwidth", "compute", "instructions", "walls"
  std::string name;                // "L2", "HBM (spec)", "FP64.FMA (theoretical)", "warp GIPS", ...
  std::string unit;                // "GB/s", "GFLOP/s", "GIPS", "warp instr/txn", "MHz", ...
  std::vector<CompareCell> cells;  // one per file, in file order
};

struct CompareTable {
  std::vector<std::string> files;   // paths as given
  std::vector<std::string> labels;  // device names, made unique
  std::vector<CompareRow> rows;
};

// The formats compare prints: text, markdown, csv.
const std::vector<std::string>& compare_formats();
// Throws InputError (one line, naming the valid formats) unless `format` is one of them.
void check_compare_format(const std::string& format);

// Rows, in this order (each a union over the files, in the order names first appear):
//  device: compute units, max clock, memory size
//  memory bandwidth: per level its best available value (empirical, else published, else spec;
//    the source is kept), then "<level> (spec)" where any file has a spec-sheet figure
//  compute: per ceiling the same, then "<name> (theoretical)" where any file has a peak
//  tensor instructions: "<name>" instruction rates (GIPS) where measured
//  instructions: warp GIPS (measured) and warp GIPS (theoretical)
//  walls: "global <pattern> (<word> B)" and "shared <pattern>": the measured instruction
//    intensity, else the theoretical one (source theoretical)
//  energy efficiency (GFLOP/s/W), energy per byte (pJ/B), power (W, with idle): from each file's
//    energy: section per ceiling; energy model: constant power and the fitted pJ/FLOP and pJ/B
//    (energy_model:). Files without energy show them missing.
CompareTable build_compare_table(const std::vector<std::string>& files, const std::vector<Machine>& machines);

// Value of file i relative to file 0; nothing when either is missing or file 0's is not > 0.
std::optional<double> compare_ratio(const CompareRow& row, std::size_t i);

// The table as text (aligned columns), markdown (a GitHub table) or csv (RFC 4180, full
// precision, missing values empty with source "missing"). Missing values print as "-" in text
// and markdown. Throws InputError for another format, naming the valid ones.
std::string format_compare_table(const CompareTable& table, const std::string& format);

// Reads the files (InputError naming a file that cannot be read or has another schema) and
// checks there are at least two.
std::vector<Machine> read_compare_inputs(const std::vector<std::string>& files);

}  // namespace roofprobe
