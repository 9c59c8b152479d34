// Plots from a machine file (and, when present, the sweep.csv beside it) with gnuplot. Each view
// is a gnuplot script generated from the data, so the scripts are golden-testable without
// gnuplot and renderable wherever gnuplot exists.
#pragma once

#include <string>
#include <vector>

#include "driver/model/csv_text.hpp"
#include "driver/model/machine.hpp"
#include "driver/report/points.hpp"
#include "driver/model/sweep.hpp"
#include "driver/model/units.hpp"

namespace roofprobe {

struct PlotOptions {
  std::string out_dir;  // where <view>.<format> and <view>.gp are written
  // false: out_dir is a name roofprobe chose (plots/ in a run directory): a symbolic link there
  // is refused, not followed. true: the user named it (plot --out DIR), a link is theirs.
  bool out_dir_named_by_user = false;
  std::string format = "png";      // png | svg | pdf
  std::vector<std::string> kinds;  // views to draw (plot_view_names()); empty: every view with data
  double fma_ratio = -1;           // hierarchical: FMA-mix ceilings for this FMA fraction (0..1); <0: none
  // hierarchical: the precision family drawn (fp64, fp32, fp16, bf16, tf32, fp8, int8, int32, ...:
  // its FMA, noFMA and tensor ceilings) or "all"; empty: FP64, or the first family the file has.
  std::string precision;
  std::vector<KernelPoint> points;  // application kernels drawn over the matching views
};

// Every view, in the order they are drawn: bandwidth, hierarchical, instruction, shared, flops,
// scaling, power.
const std::vector<std::string>& plot_view_names();
// "a,b" -> {"a", "b"}, checked against plot_view_names(); throws InputError naming the known ones.
std::vector<std::string> parse_plot_kinds(const std::string& list);

// A generated view: its name, the script, and the data files the script reads (name -> text).
struct PlotScript {
  std::string view;    // "bandwidth", "hierarchical", ... (plot_view_names())
  std::string script;  // gnuplot commands; data files referenced by bare name
  std::vector<std::pair<std::string, std::string>> data_files;
};

struct PlotReport {
  std::vector<std::string> written;  // image paths
  std::vector<std::string> skipped;  // "view: why" (e.g. machine file has no memory levels)
};

// Builds the scripts (no I/O). `samples` may be empty (then the bandwidth view draws levels only).
std::vector<PlotScript> build_plot_scripts(const Machine& machine, const std::vector<Sample>& samples,
                                           const PlotOptions& options, std::vector<std::string>* skipped);

// Finds gnuplot: $ROOFPROBE_GNUPLOT, then PATH. Empty string when absent.
std::string find_gnuplot();

// Writes scripts and data into options.out_dir and runs gnuplot on each. Throws InputError with
// one line when gnuplot is absent or fails.
PlotReport render_plots(const Machine& machine, const std::vector<Sample>& samples, const PlotOptions& options);

// Writes one script and its data files into options.out_dir and runs gnuplot on it (format
// options.format); returns the image path. Same errors as render_plots. (compare --plot)
std::string render_script(const PlotScript& script, const PlotOptions& options);

// ---- internals shared by plot/*.cpp and tests/unit/plot_test.cpp ---------------------------
namespace plot_detail {

using csv_text::lower;

// Label text: three significant digits, the unit prefix that keeps the mantissa below 1000.
std::string format_bandwidth(double gbs);   // 182 -> "182 GB/s", 3412 -> "3.41 TB/s"
std::string format_compute(double gflops);  // 98.26 -> "98.3 GFLOP/s", 1234 -> "1.23 TFLOP/s"
// A ceiling's rate: OP/s for integer ceilings (INT32.FMA, TENSOR.INT8.INT32), FLOP/s otherwise.
std::string format_ceiling(const std::string& name, double g);
std::string format_size(double bytes);  // 65536 -> "64 KiB"
// A gnuplot string literal holding `text` verbatim (single-quoted; control characters dropped).
std::string gnuplot_string(const std::string& text);

// Moves 1-D label positions apart so that neighbours are at least `min_gap` apart, keeping
// their order and staying as close as possible (least squares) to where they were wanted.
// Returns the positions in the order of `wanted`.
std::vector<double> spread_apart(const std::vector<double>& wanted, double min_gap);

// `text` with control characters replaced by spaces, for a '#' comment in a script or data file.
std::string one_line(const std::string& text);
// A coordinate or value in a script: enough digits to round-trip what the eye can see.
std::string num(double v);

// The canvas every view draws on. Its size and the plot area's margins are fixed (same aspect
// on every terminal), so label geometry can be worked out in pixels before gnuplot runs.
struct Frame {
  static constexpr double kWidthPx = 1280, kHeightPx = 860;
  // Text metrics of the 12 pt sans font on that canvas (DejaVu Sans under pngcairo).
  static constexpr double kLinePx = 20, kCharPx = 10;
  double left = 0.085, right = 0.965, bottom = 0.11, top = 0.90;  // plot area, canvas fractions
  double width_px() const { return (right - left) * kWidthPx; }
  double height_px() const { return (top - bottom) * kHeightPx; }
  static double text_px(const std::string& text) { return kCharPx * double(text.size()); }
};

// A logarithmic axis of `px` pixels showing [lo, hi].
struct LogAxis {
  double lo = 1, hi = 10, px = 1;
  double to_px(double v) const;
  double from_px(double p) const;
  double px_per_decade() const;
};

// "<what> - <device name>", the name shortened so the title fits the canvas.
std::string view_title(const std::string& what, const Machine& machine);
// Script lines for the terminal and output (`outfile` may be set with -e; defaults to
// <view>.<format>), the frame's margins and a few defaults every view shares.
std::string script_preamble(const std::string& view, const std::string& format, const Frame& frame,
                            const std::string& title);
// "set <axis>range [lo:hi]" widened by a millionth: gnuplot drops a tic that sits exactly on a
// log axis' end.
std::string range_command(const std::string& axis, double lo, double hi);
// Tic marks on a log axis ("x" or "y"). Powers of two labelled by `label` (every 1, 2, 5 or 10
// octaves so at most ~12 are labelled, the others minor); powers of ten with 2 and 5 between
// them when the range is short.
std::string log2_tics(const std::string& axis, double lo, double hi, std::string (*label)(double));
std::string log10_tics(const std::string& axis, double lo, double hi);
// Nearest powers of two below and above.
double pow2_floor(double v);
double pow2_ceil(double v);
// Line colours (readable on white, colour-blind safe first), cycled by index.
std::string series_colour(std::size_t i);
// "FP64.MIX0.25": a measured point of the fma_mix probe's sweep, between a precision's noFMA and
// FMA ceilings. The roofline views draw these thin and unlabelled: an H200's file has 20 of them,
// and a margin label each stretched the y axis to 1e13 GFLOP/s to make room.
inline bool is_fma_mix_point(const std::string& ceiling_name) { return ceiling_name.find(".MIX") != std::string::npos; }
// The same colour with transparency, for scatter points: "#AARRGGBB" as gnuplot reads it.
std::string translucent(const std::string& colour, double opacity);

// A key laid out horizontally under the plot area (outside the data): as many columns of the
// widest title as the plot area's width holds (gnuplot's own limit), the plot area's bottom
// raised to make room for its rows under the axis label.
struct KeyLayout {
  int columns = 1;
  int rows = 0;
};
KeyLayout key_layout(const std::vector<std::string>& titles, const Frame& frame);
double frame_bottom_for_key(int rows, int note_rows = 0);
// "set key ..." for that layout (or "unset key" when it has no rows).
std::string key_command(const KeyLayout& layout);

// Like spread_apart, but labels only move up (each stays at or above where it was wanted), for
// labels that sit just above the line they name and must not cover it.
std::vector<double> push_apart_upward(const std::vector<double>& wanted, double min_gap);

// Ceiling/intensity label text.
// Instruction and transaction rates stay in G units (as the instruction-roofline papers write
// them), three significant digits below 1000: 489.6 -> "490 GIPS", 1045.4 -> "1045 GIPS",
// 25.93 -> "25.9 GTXN/s".
std::string format_gips(double gips);
std::string format_gtxn(double gtxn_s);
// An intensity tick or label: 4 -> "4", 0.25 -> "1/4", 0.3 -> "0.3"; powers of two beyond
// 8192 or below 1/1024 as "2^20", "2^-12"; other values beyond as compact_number writes them.
std::string intensity_text(double v);
// A number in at most three significant digits, an exponent (without '+' or leading zeros) where
// the plain number gets long: 1234 -> "1230", 0.5 -> "0.5", 1.1e7 -> "1.1e7", 2e-5 -> "2e-5".
std::string compact_number(double v);

// Roofs whose rates lie within `tolerance` (relative) of the group's first: parallel lines that
// close would print their labels over each other. Returns groups of indices, each in input order,
// groups ordered by their first index.
std::vector<std::vector<std::size_t>> close_groups(const std::vector<double>& rates, double tolerance);
// One label for a group of "name: value unit" labels: "L1 32.3 / shared 33.1 TB/s" (the unit
// once when all share it), "A: 998 GB/s / B: 1.01 TB/s" otherwise. One label is returned as is.
std::string merged_label(const std::vector<std::string>& labels);
constexpr double kSharedLabelTolerance = 0.05;

// Names as the picture shows them: a name that fits in `max_chars` as it is; a longer one (a
// C++ kernel with its template and argument lists, 1000+ characters from ncu) by its base name
// (no return type, namespaces, template or argument lists), cut with "..." if still too long.
// Names that come out the same are numbered ("kernel #1", "kernel #2"), so every kernel keeps a
// key entry of its own.
std::vector<std::string> display_names(const std::vector<std::string>& names, std::size_t max_chars);

// The precision family of a compute ceiling: "FP64.FMA", "FP64.MIX0.25" -> "FP64"; a tensor
// ceiling by its input type: "TENSOR.FP16.FP32" -> "FP16".
std::string precision_family(const std::string& ceiling_name);
// The families of a machine file's ceilings: FP64 first, the others in file order.
std::vector<std::string> precision_families(const Machine& machine);
// PlotOptions::precision resolved against a machine file: "FP64", ..., "ALL"; empty when the file
// has no ceiling. Throws InputError naming the families when the file has none of that name.
std::string chosen_family(const Machine& machine, const std::string& precision);
// A ceiling's name as labels show it: "HBM", or "HBM (spec)" for a value that was not measured
// (source spec or published, as in results/reference/).
std::string sourced_name(const std::string& name, const std::string& source);

// One view: returns its script, or nothing with `why` set when the machine file lacks what
// the view needs. Adding a view is writing one of these and listing it in plot.cpp.
struct ViewInput {
  const Machine& machine;
  const std::vector<Sample>& samples;
  const std::string& format;   // png | svg | pdf (already validated)
  const PlotOptions& options;  // fma_ratio, points
};
using ViewBuilder = bool (*)(const ViewInput& in, PlotScript* out, std::string* why);

bool build_bandwidth_view(const ViewInput& in, PlotScript* out, std::string* why);
bool build_hierarchical_view(const ViewInput& in, PlotScript* out, std::string* why);
bool build_instruction_view(const ViewInput& in, PlotScript* out, std::string* why);
bool build_shared_view(const ViewInput& in, PlotScript* out, std::string* why);
bool build_flops_view(const ViewInput& in, PlotScript* out, std::string* why);
bool build_scaling_view(const ViewInput& in, PlotScript* out, std::string* why);
bool build_power_view(const ViewInput& in, PlotScript* out, std::string* why);

// ---- the roofline chart the hierarchical, instruction and shared views share ----------------
// Log-log: diagonal roofs y = rate * x (labelled along themselves), horizontal ceilings
// (labelled in the right margin), vertical walls (labelled along themselves, under the lowest
// roof), measured wall positions, and application points (one marker per kernel, one colour
// per level, a key under the plot).

struct ChartRoof {
  std::string label;  // "L2: 2.5 TB/s"
  double rate = 0;    // slope: y = rate * x
  std::string colour;
  std::string level;  // memory level name, for the colour of points at that level
};

struct ChartCeiling {
  std::string label;  // right-margin label; empty: not labelled
  double value = 0;
  std::string colour;
  std::string style = "lw 2.5";  // gnuplot line style: width, dash type
  std::string data_file;         // the data file holding its line
  bool caps_roofs = true;        // roofs end where they meet the highest capping ceiling
};

struct ChartWall {
  std::string label;      // "unit stride 4 B: 1/4"
  double x = 0;           // the theoretical intensity
  double measured_x = 0;  // 0: not measured
  double measured_y = 0;  // the rate measured there; 0: unknown (marker on the bottom axis)
};

struct ChartPoint {
  std::string kernel, level;
  double x = 0, y = 0;
  std::size_t marker = 0;  // the kernel's place in the points file: its marker in every view
};

struct ChartKeyEntry {
  std::string title;
  std::string style;  // "with lines lw 1.5 dt 2 lc rgb '#555555'"
};

struct RooflineChart {
  std::string view;  // file names: <view>.gp, <view>_*.dat
  std::string title, x_label, y_label;
  std::string roof_file;                                          // data file of the roofs
  std::vector<std::pair<std::string, std::string>> file_headers;  // data file -> first comment line
  std::vector<ChartRoof> roofs;
  std::vector<ChartCeiling> ceilings;
  std::vector<ChartWall> walls;
  std::vector<ChartPoint> points;
  std::vector<ChartKeyEntry> key;  // extra key entries (e.g. "theoretical peak")
  // Points far outside the ceilings' range are drawn at the plot's edge with an arrow, and listed
  // under it with their values in these units ("FLOP/byte"; format_compute).
  std::string x_unit;
  std::string (*y_text)(double) = nullptr;
  double x_lo_at_most = 1.0 / 64;  // the x range covers at least [x_lo_at_most, x_hi_at_least]
  double x_hi_at_least = 1024;
};

// The script and data files of a roofline chart. Needs >= 1 roof and >= 1 ceiling.
PlotScript render_roofline_chart(const RooflineChart& chart, const std::string& format);

// Points of `kind` (flop | instruction) whose level passes `accept` (nullptr: all), as chart
// points, each kernel keeping one marker across views; a level naming the machine's last level by another name (DRAM,
// HBM, GDDR) is renamed to it so it takes that roof's colour.
std::vector<ChartPoint> chart_points(const std::vector<KernelPoint>& points, const std::string& kind,
                                     const Machine& machine, bool (*accept)(const std::string& level));

}  // namespace plot_detail

}  // namespace roofprobe
