// Plots of a GPU machine file: the instruction roofline (walls, GTXN roofs), shared memory, FMA
// mix, flops, scaling and kernel points.
#include "tests/unit/plot_test_support.hpp"

#include <gtest/gtest.h>

namespace roofprobe {
namespace {

using namespace plot_testing;
namespace fs = std::filesystem;
using plot_detail::format_bandwidth;
using plot_detail::format_compute;
using plot_detail::format_size;

// ---- GPU views: instruction, shared, FMA mix, flops, scaling, points ---------------------------

MemoryLevel gpu_level(const std::string& name, double gbs, double gtxn_s) {
  MemoryLevel l = level(name, gbs, 0, 0);
  l.gtxn_s = gtxn_s;
  return l;
}

Wall global_wall(const std::string& pattern, int word_bytes, double theoretical, double measured, double gtxn_s) {
  Wall w;
  w.pattern = pattern;
  w.word_bytes = word_bytes;
  w.instruction_intensity = theoretical;
  w.measured_intensity = measured;
  w.gtxn_s = gtxn_s;
  return w;
}

Wall shared_wall(int degree, double measured, double gtxn_s) {
  Wall w;
  w.pattern = "conflict-" + std::to_string(degree);
  w.conflict_degree = degree;
  w.instruction_intensity = 1.0 / degree;
  w.measured_intensity = measured;
  w.gtxn_s = gtxn_s;
  return w;
}

// A V100-like GPU: 80 SMs at 1.53 GHz, 489.6 theoretical warp GIPS (80 x 4 x 1.53), L1, shared,
// L2 and HBM in GB/s and GTXN/s, FP64/FP32 and tensor ceilings, measured walls, scaling.
Machine v100_machine() {
  Machine m;
  m.device.backend = "cuda";
  m.device.kind = "gpu";
  m.device.name = "Tesla V100-SXM2-16GB";
  m.device.compute_units = 80;
  m.device.compute_unit_name = "SMs";
  m.device.memory_name = "HBM";
  m.memory = {gpu_level("L1", 14000, 437.5), gpu_level("shared", 15600, 121.9), gpu_level("L2", 2500, 78.1),
              gpu_level("HBM", 828, 25.9)};
  m.compute = {ceiling("FP64.FMA", 7600, 7834), ceiling("FP64.noFMA", 3800, 3917), ceiling("FP32.FMA", 15200, 15667),
               ceiling("FP32.noFMA", 7600, 7834), ceiling("TENSOR.FP16.FP32", 112000, 125337)};
  m.compute.back().instructions_gips = 218.8;
  m.compute.back().flops_per_instruction = 512;
  InstructionCeiling w;
  w.measured_gips = 470.2;
  w.theoretical_gips = 489.6;
  w.clock_mhz = 1530;
  m.warp_gips = w;
  m.global_walls = {global_wall("stride-0", 4, 1.0, 0.97, 420), global_wall("stride-1", 4, 0.25, 0.26, 400),
                    global_wall("stride-1", 8, 0.125, 0.13, 390), global_wall("stride-8", 4, 1.0 / 32, 0.0313, 380)};
  for (int d : {1, 2, 4, 8, 16, 32}) m.shared_walls.push_back(shared_wall(d, 0.98 / d, 119));
  for (int units : {1, 2, 4, 8, 16, 32, 64, 80}) {
    ScalingPoint p;
    p.units = units;
    p.ceilings = {{"HBM", std::min(828.0, 60.0 * units)}, {"FP64.FMA", 95.0 * units}};
    m.scaling.push_back(p);
  }
  return m;
}

// The same with energy figures, built here (not a measurement), for the power view.
Machine v100_machine_with_energy() {
  Machine m = v100_machine();
  EnergySection e;
  e.counter = "synthetic";
  e.ceilings = {{"FP64.FMA", 250, 30, 0, 1, 5}, {"HBM", 200, 0, 240, 1, 5}};
  m.energy = e;
  return m;
}

PlotOptions options_with(double fma_ratio = -1, std::vector<KernelPoint> points = {}) {
  PlotOptions o;
  o.out_dir = "unused";
  o.fma_ratio = fma_ratio;
  o.points = std::move(points);
  return o;
}

std::vector<PlotScript> build_with(const Machine& m, const PlotOptions& o, const std::vector<Sample>& samples = {},
                                   std::vector<std::string>* skipped = nullptr) {
  return build_plot_scripts(m, samples, o, skipped);
}

bool has_view(const std::vector<PlotScript>& scripts, const std::string& name) {
  for (const PlotScript& s : scripts)
    if (s.view == name) return true;
  return false;
}

bool has_file(const PlotScript& s, const std::string& name) {
  for (const auto& [file, text] : s.data_files)
    if (file == name) return true;
  return false;
}

std::string skip_reason(const std::vector<std::string>& skipped, const std::string& view) {
  for (const std::string& s : skipped)
    if (s.rfind(view + ": ", 0) == 0) return s.substr(view.size() + 2);
  return {};
}

// FLOP-probe samples: for each precision and form, FLOPs per element 1..256 over a fixed array,
// 3 samples per point; GFLOP/s = min(peak, 400 GB/s x AI).
std::vector<Sample> flop_samples() {
  std::vector<Sample> out;
  const std::vector<std::tuple<std::string, std::string, double, double>> series = {
      {"fp64", "fma", 98.26, 8}, {"fp64", "nofma", 49.6, 8}, {"fp32", "fma", 196.1, 4}};
  for (const auto& [precision, form, peak, word] : series)
    for (int k = 1; k <= 256; k *= 4)
      for (int rep = 0; rep < 3; ++rep) {
        Sample s;
        s.probe = "flops";
        s.params = {{"precision", precision},
                    {"form", form},
                    {"flops_per_element", std::to_string(k)},
                    {"bytes_per_thread", "16384"}};
        s.bytes = 65536000;
        s.flops = s.bytes / word * k;
        s.gflops = std::min(peak, 400 * s.flops / s.bytes) * (1 - 0.01 * rep);
        s.seconds = s.flops / s.gflops / 1e9;
        s.gbs = s.bytes / s.seconds / 1e9;
        out.push_back(s);
      }
  return out;
}

std::vector<KernelPoint> kernel_points() {
  auto p = [](const char* kernel, const char* level, double x, double y, const char* kind) {
    return KernelPoint{kernel, level, x, y, kind};
  };
  return {p("daxpy", "L1", 0.0833, 1150, "flop"),       p("daxpy", "L2", 0.0833, 205, "flop"),
          p("daxpy", "DRAM", 0.0833, 68, "flop"),       p("dgemm", "L2", 18.5, 6900, "flop"),
          p("dgemm", "L1", 3.2, 310, "instruction"),    p("dgemm", "shared", 2.6, 310, "instruction"),
          p("stencil", "HBM", 8.1, 140, "instruction"), p("stencil", "shared", 0.5, 140, "instruction")};
}

// The "set label" lines of a script whose text starts with `prefix`.
int label_count(const std::string& script, const std::string& prefix) { return count(script, "set label '" + prefix); }

TEST(PlotText, GipsGtxnAndIntensityText) {
  EXPECT_EQ(plot_detail::format_gips(489.6), "490 GIPS");
  EXPECT_EQ(plot_detail::format_gips(1045.4), "1045 GIPS");
  EXPECT_EQ(plot_detail::format_gips(13.107), "13.1 GIPS");
  EXPECT_EQ(plot_detail::format_gtxn(437.5), "438 GTXN/s");
  EXPECT_EQ(plot_detail::format_gtxn(25.93), "25.9 GTXN/s");
  EXPECT_EQ(plot_detail::format_gtxn(3.051), "3.05 GTXN/s");
  EXPECT_EQ(plot_detail::intensity_text(1), "1");
  EXPECT_EQ(plot_detail::intensity_text(64), "64");
  EXPECT_EQ(plot_detail::intensity_text(0.25), "1/4");
  EXPECT_EQ(plot_detail::intensity_text(1.0 / 32), "1/32");
  EXPECT_EQ(plot_detail::intensity_text(0.3), "0.3");
}

TEST(PlotKinds, ParsesAndChecksViewNames) {
  EXPECT_EQ(plot_view_names(), (std::vector<std::string>{"bandwidth", "hierarchical", "instruction", "shared", "flops",
                                                         "scaling", "power"}));
  EXPECT_EQ(parse_plot_kinds("instruction, shared,instruction"), (std::vector<std::string>{"instruction", "shared"}));
  try {
    parse_plot_kinds("hierarchical,roofline");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'roofline'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("instruction"), std::string::npos) << e.what();  // lists the known ones
  }
  EXPECT_THROW(parse_plot_kinds(" , "), InputError);
}

TEST(PlotKinds, OnlyTheRequestedViewsAreBuiltAndReported) {
  PlotOptions o = options_with();
  o.kinds = {"shared", "instruction"};
  std::vector<std::string> skipped;
  auto scripts = build_with(v100_machine(), o, {}, &skipped);
  ASSERT_EQ(scripts.size(), 2u);
  EXPECT_EQ(scripts[0].view, "instruction");  // the views' own order
  EXPECT_EQ(scripts[1].view, "shared");
  EXPECT_TRUE(skipped.empty());

  o.kinds = {"instruction"};
  skipped.clear();
  EXPECT_TRUE(build_with(cpu_machine(), o, {}, &skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0], "instruction: no instructions.warp_gips (GPU probe 'issue' not run)");

  o.kinds = {"nonsense"};
  EXPECT_THROW(build_with(v100_machine(), o), InputError);
}

TEST(PlotKinds, EveryViewOfAFullGpuMachineFileIsBuilt) {
  std::vector<std::string> skipped;
  const auto scripts = build_with(v100_machine_with_energy(), options_with(), flop_samples(), &skipped);
  EXPECT_TRUE(skipped.empty()) << skipped.front();
  for (const std::string& name : plot_view_names()) EXPECT_TRUE(has_view(scripts, name)) << name;
}

TEST(PlotInstruction, WallsAtTheirDefinedIntensities) {
  const PlotScript v = view(build_with(v100_machine(), options_with()), "instruction");
  const auto walls = blocks(data_file(v, "instruction_walls.dat"));
  ASSERT_EQ(walls.size(), 4u);
  const double expected[] = {1.0 / 32, 1.0 / 8, 1.0 / 4, 1.0};
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(walls[i].size(), 2u);
    EXPECT_DOUBLE_EQ(walls[i][0].first, expected[i]);  // vertical: the same x at both ends
    EXPECT_DOUBLE_EQ(walls[i][1].first, expected[i]);
    EXPECT_LT(walls[i][0].second, walls[i][1].second);
    // From the axis up to the roofline: the L1 roof or the measured peak, whichever is lower.
    EXPECT_NEAR(walls[i][1].second, std::min(470.2, 437.5 * expected[i]), 1e-3);
  }
  const std::string& s = v.script;
  for (const char* label :
       {"'stride-0: 1'", "'unit stride (4 B): 1/4'", "'unit stride (8 B): 1/8'", "'stride-8 (4 B): 1/32'"})
    EXPECT_NE(s.find("set label " + std::string(label)), std::string::npos) << label;
  EXPECT_EQ(count(s, "rotate by 90"), 4);  // wall labels run along their walls
}

TEST(PlotInstruction, RoofsAreGtxnDiagonalsOfSlopeOne) {
  const Machine m = v100_machine();
  const PlotScript v = view(build_with(m, options_with()), "instruction");
  const auto roofs = blocks(data_file(v, "instruction_memory.dat"));
  ASSERT_EQ(roofs.size(), 3u);  // L1, L2, HBM: the shared level has its own view
  const double rates[] = {437.5, 78.1, 25.9};
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_EQ(roofs[i].size(), 2u);
    const auto [x0, y0] = roofs[i][0];
    const auto [x1, y1] = roofs[i][1];
    // GIPS = GTXN/s x instructions/transaction (the data files hold six significant digits).
    EXPECT_NEAR(y0 / x0, rates[i], 1e-5 * rates[i]);
    EXPECT_NEAR(y1 / x1, rates[i], 1e-5 * rates[i]);
    EXPECT_NEAR(std::log(y1 / y0) / std::log(x1 / x0), 1.0, 1e-5);  // slope 1 on log-log
    EXPECT_NEAR(y1, 470.2, 1e-3);                                   // each ends at its ridge with the measured peak
  }
  for (const char* label : {"'L1: 438 GTXN/s'", "'L2: 78.1 GTXN/s'", "'HBM: 25.9 GTXN/s'"})
    EXPECT_NE(v.script.find(label), std::string::npos) << label;
  EXPECT_EQ(v.script.find("'shared: "), std::string::npos);

  const auto peaks = blocks(data_file(v, "instruction_peak.dat"));
  ASSERT_EQ(peaks.size(), 2u);
  EXPECT_DOUBLE_EQ(peaks[0][0].second, 470.2);
  EXPECT_DOUBLE_EQ(peaks[0][1].second, 470.2);
  EXPECT_DOUBLE_EQ(peaks[1][0].second, 489.6);
  EXPECT_NE(v.script.find("'measured peak: 470 GIPS'"), std::string::npos);
  EXPECT_NE(v.script.find("'theoretical peak: 490 GIPS'"), std::string::npos);
  EXPECT_NE(v.script.find("warp instructions per transaction"), std::string::npos);
}

TEST(PlotInstruction, MeasuredWallPositionsAreMarked) {
  const PlotScript v = view(build_with(v100_machine(), options_with()), "instruction");
  const auto marks = blocks(data_file(v, "instruction_wall_marks.dat"));
  ASSERT_EQ(marks.size(), 1u);
  ASSERT_EQ(marks[0].size(), 4u);
  // At the measured intensity and the rate measured there (GTXN/s x intensity).
  EXPECT_DOUBLE_EQ(marks[0][0].first, 0.0313);
  EXPECT_NEAR(marks[0][0].second, 380 * 0.0313, 1e-9);
  EXPECT_DOUBLE_EQ(marks[0][3].first, 0.97);
  EXPECT_NEAR(marks[0][3].second, 420 * 0.97, 1e-9);
  EXPECT_NE(v.script.find("title 'measured wall position'"), std::string::npos);
}

TEST(PlotInstruction, TheoreticalWallsWithoutMeasuredOnes) {
  Machine m = v100_machine();
  m.global_walls.clear();
  m.warp_gips->measured_gips = 0;  // a reference file: theoretical only
  const PlotScript v = view(build_with(m, options_with()), "instruction");
  EXPECT_EQ(blocks(data_file(v, "instruction_walls.dat")).size(), 4u);
  EXPECT_FALSE(has_file(v, "instruction_wall_marks.dat"));
  EXPECT_EQ(v.script.find("measured wall position"), std::string::npos);
  const auto peaks = blocks(data_file(v, "instruction_peak.dat"));
  ASSERT_EQ(peaks.size(), 1u);
  EXPECT_DOUBLE_EQ(peaks[0][0].second, 489.6);
  // The roofs then end at the theoretical peak.
  EXPECT_NEAR(blocks(data_file(v, "instruction_memory.dat"))[0][1].second, 489.6, 1e-3);
}

TEST(PlotInstruction, OtherMeasuredWallsGetTheirOwnLine) {
  Machine m = v100_machine();
  m.global_walls.push_back(global_wall("stride-2", 8, 1.0 / 16, 0.065, 300));
  const PlotScript v = view(build_with(m, options_with()), "instruction");
  const auto walls = blocks(data_file(v, "instruction_walls.dat"));
  ASSERT_EQ(walls.size(), 5u);
  EXPECT_DOUBLE_EQ(walls[1][0].first, 1.0 / 16);  // in intensity order
  EXPECT_NE(v.script.find("set label 'stride-2 (8 B): 1/16'"), std::string::npos);
}

TEST(PlotInstruction, SkipReasonsNameWhatIsMissing) {
  std::vector<std::string> skipped;
  build_with(cpu_machine(), options_with(), {}, &skipped);
  EXPECT_EQ(skip_reason(skipped, "instruction"), "no instructions.warp_gips (GPU probe 'issue' not run)");
  EXPECT_EQ(skip_reason(skipped, "shared"), "no instructions.warp_gips (GPU probe 'issue' not run)");

  Machine m = v100_machine();
  for (MemoryLevel& l : m.memory) l.gtxn_s = 0;
  skipped.clear();
  const auto scripts = build_with(m, options_with(), {}, &skipped);
  EXPECT_NE(skip_reason(skipped, "instruction").find("gtxn_s"), std::string::npos);
  EXPECT_NE(skip_reason(skipped, "shared").find("'shared'"), std::string::npos);
  EXPECT_TRUE(has_view(scripts, "hierarchical"));  // the others still render
  EXPECT_TRUE(has_view(scripts, "bandwidth"));

  m = v100_machine();
  m.warp_gips->measured_gips = 0;
  m.warp_gips->theoretical_gips = 0;
  skipped.clear();
  build_with(m, options_with(), {}, &skipped);
  EXPECT_NE(skip_reason(skipped, "instruction").find("neither"), std::string::npos);
}

TEST(PlotShared, SharedRoofAndBankConflictWalls) {
  const PlotScript v = view(build_with(v100_machine(), options_with()), "shared");
  const auto roofs = blocks(data_file(v, "shared_memory.dat"));
  ASSERT_EQ(roofs.size(), 1u);
  EXPECT_NEAR(roofs[0][0].second / roofs[0][0].first, 121.9, 1e-5 * 121.9);
  EXPECT_NE(v.script.find("'shared: 122 GTXN/s'"), std::string::npos);
  EXPECT_NE(v.script.find("128-byte wavefront"), std::string::npos);

  const auto walls = blocks(data_file(v, "shared_walls.dat"));
  ASSERT_EQ(walls.size(), 6u);  // 32-way, the measured 16..2-way, no conflict
  const double expected[] = {1.0 / 32, 1.0 / 16, 1.0 / 8, 1.0 / 4, 1.0 / 2, 1.0};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(walls[i][0].first, expected[i]);
  for (const char* label : {"'no conflict: 1'", "'32-way conflict: 1/32'", "'2-way: 1/2'", "'16-way: 1/16'"})
    EXPECT_NE(v.script.find("set label " + std::string(label)), std::string::npos) << label;
  const auto marks = blocks(data_file(v, "shared_wall_marks.dat"));
  ASSERT_EQ(marks.size(), 1u);
  EXPECT_EQ(marks[0].size(), 6u);
}

TEST(PlotShared, WithoutMeasuredWallsOnlyTheDefinedOnes) {
  Machine m = v100_machine();
  m.shared_walls.clear();
  const PlotScript v = view(build_with(m, options_with()), "shared");
  const auto walls = blocks(data_file(v, "shared_walls.dat"));
  ASSERT_EQ(walls.size(), 2u);
  EXPECT_DOUBLE_EQ(walls[0][0].first, 1.0 / 32);
  EXPECT_DOUBLE_EQ(walls[1][0].first, 1.0);
}

TEST(PlotHierarchical, FmaMixCeilings) {
  PlotOptions every_family = options_with(0.5);
  every_family.precision = "all";
  const PlotScript h = view(build_with(v100_machine(), every_family), "hierarchical");
  const auto mixes = blocks(data_file(h, "hierarchical_fma_mix.dat"));
  ASSERT_EQ(mixes.size(), 2u);  // FP64.FMA and FP32.FMA; noFMA and tensor ceilings have none
  EXPECT_DOUBLE_EQ(mixes[0][0].second, 7600 * (2 * 0.5 + 1 - 0.5) / 2);
  EXPECT_DOUBLE_EQ(mixes[1][0].second, 15200 * 0.75);
  EXPECT_NE(h.script.find("set label 'FP64 FMA mix a=0.5: 5.7 TFLOP/s'"), std::string::npos);
  EXPECT_NE(h.script.find("set label 'FP32 FMA mix a=0.5: 11.4 TFLOP/s'"), std::string::npos);
  EXPECT_NE(h.script.find("title 'FMA mix a=0.5'"), std::string::npos);
  // Tensor ceilings are horizontals like the others.
  EXPECT_NE(h.script.find("set label 'TENSOR.FP16.FP32: 112 TFLOP/s'"), std::string::npos);
  EXPECT_EQ(blocks(data_file(h, "hierarchical_compute.dat")).size(), 5u);

  // H100: FP64 FMA 33.5 TFLOP/s, a = 0.5 -> 25.1 TFLOP/s; a = 0 is the no-FMA rate; a = 1 the peak.
  Machine h100 = v100_machine();
  h100.compute = {ceiling("FP64.FMA", 33500)};
  for (const auto& [a, text] : {std::pair<double, std::string>{0.5, "'FP64 FMA mix a=0.5: 25.1 TFLOP/s'"},
                                {0.0, "'FP64 FMA mix a=0: 16.8 TFLOP/s'"},
                                {1.0, "'FP64 FMA mix a=1: 33.5 TFLOP/s'"}})
    EXPECT_NE(view(build_with(h100, options_with(a)), "hierarchical").script.find(text), std::string::npos) << text;

  // Without --fma-ratio: none.
  const PlotScript plain = view(build_with(v100_machine(), options_with()), "hierarchical");
  EXPECT_FALSE(has_file(plain, "hierarchical_fma_mix.dat"));
  EXPECT_EQ(plain.script.find("FMA mix"), std::string::npos);
  EXPECT_THROW(build_with(v100_machine(), options_with(1.5)), InputError);
}

// The fma_mix probe's measured points (FP64.MIX0.5, ...) lie between noFMA and FMA, MIX0 and MIX1
// within a percent of them: drawn only with --fma-ratio, thin and unlabelled.
TEST(PlotHierarchical, MeasuredFmaMixPointsOnlyWithFmaRatioAndUnlabelled) {
  Machine m = v100_machine();
  for (const char* a : {"0", "0.5", "1"}) m.compute.push_back(ceiling(std::string("FP64.MIX") + a, 4000));
  const PlotScript plain = view(build(m), "hierarchical");
  EXPECT_EQ(plain.script.find("FMA-mix points"), std::string::npos);
  EXPECT_EQ(blocks(data_file(plain, "hierarchical_compute.dat")).size(), 2u);  // FP64.FMA, FP64.noFMA
  const PlotScript h = view(build_with(m, options_with(0.5)), "hierarchical");
  EXPECT_EQ(h.script.find("set label 'FP64.MIX"), std::string::npos);
  EXPECT_NE(h.script.find("title 'measured FMA-mix points (3, unlabelled)'"), std::string::npos);
  EXPECT_EQ(blocks(data_file(h, "hierarchical_compute.dat")).size(), 5u);  // 2 ceilings + 3 mix points
  EXPECT_NE(h.script.find("set label 'FP64.FMA: 7.6 TFLOP/s'"), std::string::npos);
}

// A machine file holds a dozen precision families; the view draws one (FP64 by default) with its
// FMA, noFMA and tensor ceilings, --precision picks another, `all` every one.
TEST(PlotHierarchical, OnePrecisionFamilyWithItsTensorCeiling) {
  Machine m = v100_machine();
  m.compute.push_back(ceiling("TENSOR.FP64.FP64", 15000));
  m.compute.push_back(ceiling("INT32.FMA", 7000));
  auto labels_of = [&](const std::string& precision) {
    PlotOptions o = options_with();
    o.precision = precision;
    const PlotScript h = view(build_with(m, o), "hierarchical");
    std::vector<std::string> out;
    std::smatch match;
    std::string rest = h.script;
    while (std::regex_search(rest, match, std::regex("set label '([A-Z0-9]+\\.[A-Za-z0-9.]+): "))) {
      out.push_back(match[1]);
      rest = match.suffix();
    }
    return std::make_pair(out, h.script);
  };
  const auto [fp64, fp64_script] = labels_of("");
  EXPECT_EQ(fp64, (std::vector<std::string>{"FP64.FMA", "FP64.noFMA", "TENSOR.FP64.FP64"}));
  EXPECT_NE(fp64_script.find("Hierarchical roofline, FP64 - Tesla V100"), std::string::npos);
  EXPECT_EQ(labels_of("fp16").first, (std::vector<std::string>{"TENSOR.FP16.FP32"}));
  EXPECT_EQ(labels_of("FP32").first, (std::vector<std::string>{"FP32.FMA", "FP32.noFMA"}));
  EXPECT_EQ(labels_of("all").first.size(), m.compute.size());
  try {
    labels_of("fp99");
    ADD_FAILURE() << "an absent precision was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("fp64, fp32, fp16, int32, or all"), std::string::npos) << e.what();
  }
}

// A GPU's bandwidth view: one line per access kernel as the fit splits them (mode x cache_op,
// read off the levels' series keys), one colour per mode and one dash per cache operator, and per
// size the best point's median (here the 128-bit loads, not the mixture with the 32-bit ones).
TEST(PlotBandwidth, GpuSeriesAreModeAndCacheOperator) {
  Machine m = v100_machine();
  m.memory[0].probe = m.memory[2].probe = "bandwidth";
  m.memory[0].headline_series = "cache_op=ca;mode=read";
  m.memory[2].by_series = {{"cache_op=cg;mode=read", 2500}, {"cache_op=ca;mode=copy", 2400}};
  std::vector<Sample> samples;
  for (double ws : {1 * MiB, 2 * MiB, 4 * MiB})
    for (const char* mode : {"read", "copy"})
      for (const char* cache : {"ca", "cg"})
        for (const char* width : {"32", "128"})
          for (int k = 0; k < 3; ++k) {
            Sample s;
            s.probe = "bandwidth";
            s.params = {{"mode", mode},
                        {"cache_op", cache},
                        {"load_width", width},
                        {"working_set_bytes", std::to_string(std::llround(ws))}};
            s.working_set_bytes = ws;
            s.gbs = (cache[1] == 'a' ? 14000 : 2500) * (width[0] == '3' ? 0.25 : 1.0) * (1 + 0.01 * k);
            samples.push_back(s);
          }
  const PlotScript bw = view(build(m, samples), "bandwidth");
  for (const char* title : {"'read ca (median)'", "'read cg (median)'", "'copy ca (median)'", "'copy cg (median)'"})
    EXPECT_NE(bw.script.find(title), std::string::npos) << title;
  EXPECT_EQ(bw.script.find("'read (median)'"), std::string::npos) << "ca and cg drawn as one line";
  EXPECT_EQ(count(bw.script, "lw 2 dt 1 "), 2);  // ca, solid
  EXPECT_EQ(count(bw.script, "lw 2 dt 2 "), 2);  // cg, dashed
  const auto medians = blocks(data_file(bw, "bandwidth_medians.dat"));
  ASSERT_EQ(medians.size(), 4u);
  for (const auto& [x, y] : medians[0]) EXPECT_DOUBLE_EQ(y, 14000 * 1.01) << x;  // read ca: the 128-bit point
}

TEST(PlotFlops, EmpiricalCurvePerPrecisionAndForm) {
  const std::vector<Sample> samples = flop_samples();
  const PlotScript f = view(build_with(cpu_machine(), options_with(), samples), "flops");
  const auto raw = blocks(data_file(f, "flops_samples.dat"));
  ASSERT_EQ(raw.size(), 3u);  // FP64.FMA, FP64.noFMA, FP32.FMA
  EXPECT_EQ(raw[0].size(), 5u * 3);
  // x is the sample's arithmetic intensity, flops / bytes: k / 8 for FP64.
  EXPECT_DOUBLE_EQ(raw[0][0].first, 1.0 / 8);
  EXPECT_DOUBLE_EQ(raw[2][0].first, 1.0 / 4);
  const auto medians = blocks(data_file(f, "flops_medians.dat"));
  ASSERT_EQ(medians.size(), 3u);
  ASSERT_EQ(medians[0].size(), 5u);
  EXPECT_NEAR(medians[0][0].second, 400.0 / 8 * 0.99, 1e-9);  // the median of three samples
  for (const char* title : {"'FP64.FMA (median)'", "'FP64.noFMA (median)'", "'FP32.FMA (median)'"})
    EXPECT_NE(f.script.find(title), std::string::npos) << title;
  // The fitted ceilings of the flops probe as horizontals, labelled.
  const auto ceilings = blocks(data_file(f, "flops_ceilings.dat"));
  ASSERT_EQ(ceilings.size(), 4u);
  EXPECT_DOUBLE_EQ(ceilings[0][0].second, 98.26);
  EXPECT_DOUBLE_EQ(ceilings[0][1].second, 98.26);
  EXPECT_NE(f.script.find("set label 'FP64.FMA: 98.3 GFLOP/s'"), std::string::npos);
}

// The fma_mix probe's points are faint and unlabelled; a ceiling whose series carries its
// probe's name ("flops FP64.FMA", with two FLOP probes in the sweep) keeps the series' colour.
TEST(PlotFlops, MixPointsUnlabelledAndCeilingsInTheirSeriesColour) {
  std::vector<Sample> samples = flop_samples();
  Sample mix = samples.front();
  mix.probe = "fma_mix";
  mix.params = {{"precision", "fp64"}, {"fma_fraction", "0.5"}};
  samples.push_back(mix);
  Machine m = cpu_machine();
  for (ComputeCeiling& c : m.compute) c.probe = "flops";
  m.compute.push_back(ceiling("FP64.MIX0.5", 70));
  m.compute.back().probe = "fma_mix";
  const PlotScript f = view(build_with(m, options_with(), samples), "flops");
  EXPECT_NE(f.script.find("'flops FP64.FMA (median)'"), std::string::npos);
  EXPECT_EQ(f.script.find("set label 'FP64.MIX0.5"), std::string::npos);
  EXPECT_NE(f.script.find("lw 1 dt 3 lc rgb '#b0b0b0'"), std::string::npos);
  // FP64.FMA's label is in the colour of the first series, flops FP64.FMA, not the grey fallback.
  EXPECT_NE(f.script.find("set label 'FP64.FMA: 98.3 GFLOP/s' at screen"), std::string::npos);
  const std::size_t label = f.script.find("set label 'FP64.FMA: 98.3 GFLOP/s'");
  EXPECT_NE(f.script.substr(label, 200).find("tc rgb '" + plot_detail::series_colour(0) + "'"), std::string::npos);
}

TEST(PlotFlops, SkippedWithoutFlopSamples) {
  std::vector<std::string> skipped;
  build_with(cpu_machine(), options_with(), {}, &skipped);
  EXPECT_NE(skip_reason(skipped, "flops").find("no sweep samples"), std::string::npos);
  skipped.clear();
  build_with(cpu_machine(), options_with(), bandwidth_samples(), &skipped);
  EXPECT_NE(skip_reason(skipped, "flops").find("flops > 0"), std::string::npos);
}

TEST(PlotScaling, CeilingsVsUnitsOnTwoAxes) {
  const PlotScript v = view(build_with(v100_machine(), options_with()), "scaling");
  const auto series = blocks(data_file(v, "scaling.dat"));
  ASSERT_EQ(series.size(), 2u);
  EXPECT_EQ(series[0].size(), 8u);
  EXPECT_DOUBLE_EQ(series[0][0].first, 1);
  EXPECT_DOUBLE_EQ(series[0][7].first, 80);
  EXPECT_DOUBLE_EQ(series[0][7].second, 95.0 * 80);  // compute first: FP64.FMA on the left axis
  EXPECT_DOUBLE_EQ(series[1][7].second, 828);        // HBM on the right one
  EXPECT_NE(v.script.find("set logscale x 2"), std::string::npos);
  EXPECT_NE(v.script.find("axes x1y2"), std::string::npos);
  EXPECT_NE(v.script.find("'FP64.FMA [GFLOP/s, left axis]'"), std::string::npos);
  EXPECT_NE(v.script.find("'HBM [GB/s, right axis]'"), std::string::npos);
  EXPECT_NE(v.script.find("'80' 80"), std::string::npos);  // tics at the measured counts
  // An H200's 128 and 132 SMs: the tick at 128 loses its label, the whole device keeps its own.
  Machine h200 = v100_machine();
  h200.scaling.push_back(h200.scaling.back());
  h200.scaling[h200.scaling.size() - 2].units = 128;
  h200.scaling.back().units = 132;
  const std::string ticks = view(build_with(h200, options_with()), "scaling").script;
  EXPECT_NE(ticks.find("'' 128, '132' 132"), std::string::npos) << ticks.substr(ticks.find("set xtics ("), 120);
  // Linear-scaling guides start at each series' first point with slope 1.
  const auto guides = blocks(data_file(v, "scaling_linear.dat"));
  ASSERT_EQ(guides.size(), 2u);
  EXPECT_NEAR(guides[1][1].second / guides[1][1].first, 60.0, 1e-9);

  std::vector<std::string> skipped;
  build_with(cpu_machine(), options_with(), {}, &skipped);
  EXPECT_NE(skip_reason(skipped, "scaling").find("no scaling section"), std::string::npos);
}

// 15,000 kernels (a whole application's ncu export): one plot element and one key entry per level,
// never one per kernel (gnuplot would re-read the points file once per kernel: quadratic time),
// and every point is still drawn.
TEST(PlotPoints, ThousandsOfKernelsAreDrawnPerLevelWithoutAKeyEntryEach) {
  std::vector<KernelPoint> many;
  for (int k = 0; k < 15000; ++k)
    many.push_back({"kernel_" + std::to_string(k), k % 2 ? "L2" : "HBM", 0.5 + k % 97, 100.0 + k % 89, "flop"});
  const PlotScript h = view(build_with(v100_machine(), options_with(-1, many)), "hierarchical");
  EXPECT_EQ(count(h.script, "'hierarchical_points.dat' index"), 2) << "one element per level";
  EXPECT_EQ(count(h.script, "title 'kernel_"), 0) << "no key entry per kernel";
  EXPECT_NE(h.script.find("title '15000 application kernels (too many to name each)'"), std::string::npos);
  std::size_t drawn = 0;
  for (const auto& block : blocks(data_file(h, "hierarchical_points.dat"))) drawn += block.size();
  EXPECT_EQ(drawn, 15000u);
  EXPECT_LT(h.script.size(), 20000u) << "the script does not grow with the kernels";
}

TEST(PlotPoints, EachViewGetsItsKindOfPoints) {
  const auto scripts = build_with(v100_machine(), options_with(-1, kernel_points()));
  const PlotScript h = view(scripts, "hierarchical");
  const PlotScript ins = view(scripts, "instruction");
  const PlotScript sh = view(scripts, "shared");
  const auto hp = blocks(data_file(h, "hierarchical_points.dat"));
  ASSERT_EQ(hp.size(), 4u);  // daxpy at L1, L2, DRAM; dgemm at L2
  EXPECT_DOUBLE_EQ(hp[0][0].first, 0.0833);
  EXPECT_DOUBLE_EQ(hp[0][0].second, 1150);
  const auto ip = blocks(data_file(ins, "instruction_points.dat"));
  ASSERT_EQ(ip.size(), 2u);  // dgemm at L1, stencil at HBM; the shared points are not here
  EXPECT_DOUBLE_EQ(ip[1][0].first, 8.1);
  const auto sp = blocks(data_file(sh, "shared_points.dat"));
  ASSERT_EQ(sp.size(), 2u);
  EXPECT_DOUBLE_EQ(sp[0][0].first, 2.6);
  EXPECT_FALSE(has_file(view(scripts, "bandwidth"), "bandwidth_points.dat"));

  // One marker per kernel, the same in every view; one colour per level: its roof's colour.
  EXPECT_NE(h.script.find("NaN with points pt 7 ps 1.5 lc rgb '#333333' title 'daxpy'"), std::string::npos);
  EXPECT_NE(h.script.find("NaN with points pt 5 ps 1.5 lc rgb '#333333' title 'dgemm'"), std::string::npos);
  EXPECT_NE(sh.script.find("NaN with points pt 5 ps 1.5 lc rgb '#333333' title 'dgemm'"), std::string::npos);
  EXPECT_NE(sh.script.find("NaN with points pt 9 ps 1.5 lc rgb '#333333' title 'stencil'"), std::string::npos);
  EXPECT_NE(h.script.find("title 'at L2'"), std::string::npos);
  // L2 is the third roof of the hierarchical view (L1, shared, L2, HBM): series colour 2.
  EXPECT_NE(h.script.find("'hierarchical_points.dat' index 1 with points pt 7 ps 1.5 lc rgb '" +
                          plot_detail::series_colour(2) + "'"),
            std::string::npos);
  // "DRAM" names the machine's last level (HBM) and takes its colour.
  EXPECT_NE(h.script.find("title 'at HBM'"), std::string::npos);
  EXPECT_EQ(h.script.find("title 'at DRAM'"), std::string::npos);
  // The key is under the plot, outside the data.
  EXPECT_NE(h.script.find("set key at screen 0.5, screen 0.012 center bottom horizontal"), std::string::npos);
}

std::pair<double, double> axis_range(const std::string& script, const std::string& axis) {
  std::smatch m;
  if (!std::regex_search(script, m, std::regex("set " + axis + "range \\[([0-9.e+-]+):([0-9.e+-]+)\\]")))
    throw std::runtime_error("no " + axis + "range");
  return {std::stod(m[1]), std::stod(m[2])};
}

TEST(PlotPoints, PointsNearTheCeilingsWidenTheRange) {
  std::vector<KernelPoint> near = {{"slow", "L2", 1.0 / 256, 0.5, "flop"}, {"dense", "L1", 4096, 2e4, "flop"}};
  const std::string s = view(build_with(v100_machine(), options_with(-1, near)), "hierarchical").script;
  EXPECT_LT(axis_range(s, "x").first, 1.0 / 256);
  EXPECT_GT(axis_range(s, "x").second, 4096);
  EXPECT_LT(axis_range(s, "y").first, 0.5);
  EXPECT_EQ(s.find("off scale"), std::string::npos);
}

// A tensor GEMM whose loads bypass L1 has an L1 intensity of 1e7 FLOP/byte: widened to hold it,
// the x axis put every roof in its left third. Such a point is drawn at the edge, with an arrow
// to it, and listed under the plot with its values.
TEST(PlotPoints, FarPointsAreDrawnAtTheEdgeWithAnArrowAndListed) {
  std::vector<KernelPoint> far = {
      {"gemm", "L1", 1.1e7, 9000, "flop"}, {"gemm", "L2", 120, 9000, "flop"}, {"fill", "HBM", 1e-4, 0.001, "flop"}};
  const PlotScript h = view(build_with(v100_machine(), options_with(-1, far)), "hierarchical");
  const auto [x_lo, x_hi] = axis_range(h.script, "x");
  const auto [y_lo, y_hi] = axis_range(h.script, "y");
  EXPECT_LE(x_hi, 2048);
  EXPECT_GE(x_lo, 1.0 / 256);
  EXPECT_GE(y_lo, 0.01);
  const auto points = blocks(data_file(h, "hierarchical_points.dat"));
  ASSERT_EQ(points.size(), 3u);
  for (const auto& block : points)
    for (const auto& [x, y] : block) {
      EXPECT_GT(x, x_lo);
      EXPECT_LT(x, x_hi);
      EXPECT_GT(y, y_lo);
      EXPECT_LT(y, y_hi);
    }
  EXPECT_DOUBLE_EQ(points[1][0].first, 120);  // gemm at L2 is on the scale: where it is
  EXPECT_NE(data_file(h, "hierarchical_points.dat").find("# off scale, drawn at the edge: 1.1e+07 9000"),
            std::string::npos);
  EXPECT_EQ(count(h.script, "set arrow from first"), 2);
  EXPECT_EQ(count(h.script, " head filled "), 2);
  EXPECT_NE(h.script.find("set label 'off scale, drawn at the edge: gemm at L1: 1.1e7 FLOP/byte, 9 TFLOP/s'"),
            std::string::npos);
  EXPECT_NE(h.script.find("set label 'off scale, drawn at the edge: fill at HBM: 1e-4 FLOP/byte, 0.001 GFLOP/s'"),
            std::string::npos);
  for (const std::string& tick : tick_labels(h.script, "x")) EXPECT_EQ(tick.find("e+"), std::string::npos) << tick;
}

// gnuplot's time grows with the square of the arrows: 60,000 off-scale points, one arrow each,
// took 10 s. Markers along an edge sit on a grid, and one arrow serves each grid place.
TEST(PlotPoints, ManyOffScalePointsShareTheirArrows) {
  std::vector<KernelPoint> many;
  for (int i = 0; i < 20000; ++i) many.push_back({"k", "HBM", std::pow(2.0, -6 + 12.0 * i / 20000), 1e12, "flop"});
  const PlotScript h = view(build_with(v100_machine(), options_with(-1, many)), "hierarchical");
  const int arrows = count(h.script, "set arrow from first");
  EXPECT_GE(arrows, 10);
  EXPECT_LE(arrows, 400);
}

// ncu's names keep their template and argument lists (1,200 characters for PyTorch's kernels):
// cut to the key's width, three of them read the same. The key shows base names, numbered.
TEST(PlotPoints, LongKernelNamesAreShortAndUniqueInTheKey) {
  const std::string args(1200, 'x');
  auto kernel = [&](const char* type) {
    return "void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<" + std::string(type) + ", 4, " +
           args + ">(long, at::PhiloxCudaState, T2, T3)";
  };
  const std::vector<KernelPoint> points = {{kernel("float"), "L1", 0.25, 900, "flop"},
                                           {kernel("double"), "L1", 0.12, 450, "flop"},
                                           {kernel("c10::Half"), "L1", 0.5, 1700, "flop"},
                                           {std::string(60, 'k'), "L1", 1, 100, "flop"}};
  const PlotScript h = view(build_with(v100_machine(), options_with(-1, points)), "hierarchical");
  for (const char* title : {"title 'distribution_el...ide_kernel #1'", "title 'distribution_el...ide_kernel #2'",
                            "title 'distribution_el...ide_kernel #3'"})
    EXPECT_NE(h.script.find(title), std::string::npos) << title;
  EXPECT_NE(h.script.find("title '" + std::string(18, 'k') + "..." + std::string(11, 'k') + "'"), std::string::npos);
  EXPECT_NE(data_file(h, "hierarchical_points.dat").find("# " + kernel("float") + " @ L1"),
            std::string::npos);  // kept whole
}

// The host link of a GPU (55 GB/s under 4.7 TB/s of HBM) is drawn but does not set the range.
TEST(PlotRanges, ARoofFarBelowTheOthersDoesNotStretchTheAxes) {
  Machine m = v100_machine();
  m.memory.push_back(gpu_level("system", 24, 0.75));
  const std::string s = view(build(m), "hierarchical").script;
  EXPECT_LE(axis_range(s, "x").second, 1024 * 1.01);
  EXPECT_GE(axis_range(s, "y").first, 5);
  EXPECT_NE(s.find("set label 'system: 24 GB/s'"), std::string::npos);
  EXPECT_NE(s.find("set clip two"), std::string::npos);  // its roof crosses the plot from edge to edge
}

// Every view of the V100-like machine file, with kernel points, FMA mix and FLOP samples, renders.
TEST(PlotRender, RendersEveryViewOfAGpuMachineFile) {
  if (find_gnuplot().empty()) GTEST_SKIP() << "gnuplot not found";
  TempDir dir;
  PlotOptions o = options_with(0.5, kernel_points());
  o.out_dir = dir.path().string();
  const PlotReport report = render_plots(v100_machine_with_energy(), flop_samples(), o);
  EXPECT_TRUE(report.skipped.empty());
  ASSERT_EQ(report.written.size(), plot_view_names().size());
  for (const std::string& name : plot_view_names()) {
    const fs::path png = dir.path() / (name + ".png");
    ASSERT_TRUE(fs::exists(png)) << png;
    const std::string bytes = read_file(png);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8)) << name;
    EXPECT_GT(bytes.size(), 10000u) << name;
    // pngcairo writes the canvas size into the IHDR chunk: 1280 x 860.
    auto be32 = [&](std::size_t at) {
      return (unsigned(std::uint8_t(bytes[at])) << 24) | (unsigned(std::uint8_t(bytes[at + 1])) << 16) |
             (unsigned(std::uint8_t(bytes[at + 2])) << 8) | unsigned(std::uint8_t(bytes[at + 3]));
    };
    EXPECT_EQ(be32(16), 1280u) << name;
    EXPECT_EQ(be32(20), 860u) << name;
  }
}

TEST(PlotRender, GpuViewsRenderAsSvgAndPdf) {
  if (find_gnuplot().empty()) GTEST_SKIP() << "gnuplot not found";
  TempDir dir;
  PlotOptions o = options_with(0.25, kernel_points());
  o.out_dir = dir.path().string();
  o.kinds = {"instruction", "shared"};
  o.format = "svg";
  EXPECT_EQ(render_plots(v100_machine(), {}, o).written.size(), 2u);
  EXPECT_NE(read_file(dir.path() / "instruction.svg").find("<svg"), std::string::npos);
  o.format = "pdf";
  EXPECT_EQ(render_plots(v100_machine(), {}, o).written.size(), 2u);
  EXPECT_EQ(read_file(dir.path() / "shared.pdf").substr(0, 5), "%PDF-");
}

}  // namespace
}  // namespace roofprobe
