// `roofprobe export`: a machine file in the formats other roofline tools read.
//
//   ert-json     Berkeley Lab ERT's roofline.json ({"empirical": {"metadata", "gflops", "gbytes"},
//                "spec": {...}}), for the plotters that read ERT output
//   nersc        the whitespace text of the NERSC hierarchical roofline plotting scripts
//                (memroofs / mem_roof_names / comproofs / comp_roof_names lines, and the
//                AI_L1 / AI_L2 / AI_HBM / FLOPS / labels lines of kernel points)
//   rocprof-csv  the one-row roofline.csv of AMD's roofline benchmark (rocm-amdgpu-bench), read
//                by rocprofiler-compute (Omniperf)
//   json         the machine file itself as JSON (same keys and nesting as the YAML)
//
// All text is built in memory (no I/O here); results/README.md documents the mappings.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "driver/model/machine.hpp"
#include "driver/report/points.hpp"

namespace roofprobe {

// The format names, in the order help and errors list them.
const std::vector<std::string>& export_formats();

// Throws InputError (one line, naming the valid formats) unless `format` is one of them.
void check_export_format(const std::string& format);

// What the formats with a choice take (`roofprobe export --precision/--points/--names`).
struct ExportSettings {
  // nersc: the compute ceilings of this type; ert-json: the one listed first (ERT's readers take
  // gflops data[0] as the peak)
  std::string precision = "fp64";
  bool mix = false;                           // nersc: the fma_mix probe's MIX ceilings too
  std::vector<KernelPoint> points;            // nersc: appended as the script's AI_*/FLOPS/labels lines
  std::string names = "roofprobe";            // ert-json: roofprobe | ert (ERT's "FP64 GFLOPs", "DRAM")
  std::vector<std::string>* notes = nullptr;  // where a format says what it filled in or left out
};

// The machine in `format`. Throws InputError naming the valid formats for an unknown one, and
// for a machine that the format cannot express (nersc: no memory level or no ceiling of the
// precision; rocprof-csv: a level AMD's tool divides by that the file does not have).
std::string export_machine(const Machine& machine, const std::string& format, const ExportSettings& settings = {});

std::string export_ert_json(const Machine& machine, const ExportSettings& settings = {});
std::string export_nersc(const Machine& machine, const ExportSettings& settings = {});
std::string export_rocprof_csv(const Machine& machine, const ExportSettings& settings = {});
std::string export_json(const Machine& machine);

// ---- what the formats with one number per ceiling take ------------------------------------
// A reference file may hold a level twice: the published measurement and the spec-sheet value
// (results/README.md). Tools that take one number per level get the best available value:
// empirical, else published, else spec (the first entry of that rank when a file repeats one).
int source_rank(const std::string& source);   // empirical 0, published 1, spec 2, other 3
bool is_measured(const std::string& source);  // empirical or published
std::vector<const MemoryLevel*> best_memory_levels(const Machine& machine);  // file order
std::vector<const ComputeCeiling*> best_compute_ceilings(const Machine& machine);
// Theoretical peaks by ceiling name: device.theoretical, completed by the compute entries'
// theoretical_gflops (the larger when both give one). Names sorted.
std::vector<std::pair<std::string, double>> theoretical_peaks(const Machine& machine);
// The spec-sheet figure of a memory level (an entry with source: spec), 0 when the file has none.
double spec_bandwidth(const Machine& machine, const std::string& level);

// JSON text and the document builder (driver/model/document.hpp), under the name the exports use.
namespace json = doc;

}  // namespace roofprobe
