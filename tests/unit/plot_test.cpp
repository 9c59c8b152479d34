// Plots: script content (golden facts, no gnuplot needed), label placement, number formatting,
// skipped views, and rendering where gnuplot exists.
#include "tests/unit/plot_test_support.hpp"

#include <gtest/gtest.h>

namespace roofprobe {
namespace {

using namespace plot_testing;
namespace fs = std::filesystem;
using plot_detail::format_bandwidth;
using plot_detail::format_compute;
using plot_detail::format_size;

// ---- number formatting ------------------------------------------------------------------------

TEST(PlotFormat, BandwidthUsesGigaThenTeraWithThreeSignificantDigits) {
  EXPECT_EQ(format_bandwidth(182.4), "182 GB/s");
  EXPECT_EQ(format_bandwidth(21.27), "21.3 GB/s");
  EXPECT_EQ(format_bandwidth(5.4321), "5.43 GB/s");
  EXPECT_EQ(format_bandwidth(0.12345), "0.123 GB/s");
  EXPECT_EQ(format_bandwidth(3412), "3.41 TB/s");
  EXPECT_EQ(format_bandwidth(14250), "14.3 TB/s");
  // Rounds before choosing the prefix: never "1000 GB/s".
  EXPECT_EQ(format_bandwidth(999.7), "1 TB/s");
}

TEST(PlotFormat, ComputeUsesGigaThenTera) {
  EXPECT_EQ(format_compute(98.26), "98.3 GFLOP/s");
  EXPECT_EQ(format_compute(421.0), "421 GFLOP/s");
  EXPECT_EQ(format_compute(1234), "1.23 TFLOP/s");
  EXPECT_EQ(format_compute(66900), "66.9 TFLOP/s");
}

// An integer ceiling counts operations, not floating-point ones.
TEST(PlotFormat, IntegerCeilingsAreInOps) {
  EXPECT_EQ(plot_detail::format_ceiling("INT32.FMA", 33200), "33.2 TOP/s");
  EXPECT_EQ(plot_detail::format_ceiling("TENSOR.INT8.INT32", 1.87e6), "1.87 POP/s");
  EXPECT_EQ(plot_detail::format_ceiling("TENSOR.FP16.FP32", 845000), "845 TFLOP/s");
  EXPECT_EQ(plot_detail::format_ceiling("FP64.FMA", 33000), "33 TFLOP/s");
}

TEST(PlotFormat, SizesUseBinaryPrefixes) {
  EXPECT_EQ(format_size(512), "512 B");
  EXPECT_EQ(format_size(4 * KiB), "4 KiB");
  EXPECT_EQ(format_size(64 * KiB), "64 KiB");
  EXPECT_EQ(format_size(1 * MiB), "1 MiB");
  EXPECT_EQ(format_size(1.5 * MiB), "1.5 MiB");
  EXPECT_EQ(format_size(1 * GiB), "1 GiB");
}

TEST(PlotFormat, GnuplotStringsKeepQuotesAndDropNewlines) {
  EXPECT_EQ(plot_detail::gnuplot_string("plain_name"), "'plain_name'");
  EXPECT_EQ(plot_detail::gnuplot_string("it's \"x\""), "'it''s \"x\"'");
  EXPECT_EQ(plot_detail::gnuplot_string("a\nb\\n"), "'a b\\n'");
}

// ---- label placement --------------------------------------------------------------------------

TEST(PlotLabels, SpreadApartKeepsOrderAndGap) {
  const std::vector<double> placed = plot_detail::spread_apart({10, 11, 50, 10.5}, 4);
  EXPECT_LT(placed[0], placed[3]);
  EXPECT_LT(placed[3], placed[1]);
  EXPECT_GE(placed[3] - placed[0], 4 - 1e-9);
  EXPECT_GE(placed[1] - placed[3], 4 - 1e-9);
  EXPECT_DOUBLE_EQ(placed[2], 50);  // far from the others: not moved
  // Least squares: the cluster stays centred on where it was wanted.
  EXPECT_NEAR((placed[0] + placed[1] + placed[3]) / 3, 10.5, 1e-9);
}

TEST(PlotLabels, PushApartUpwardNeverMovesDown) {
  const std::vector<double> wanted = {100, 101, 130, 99};
  const std::vector<double> placed = plot_detail::push_apart_upward(wanted, 20);
  for (std::size_t i = 0; i < wanted.size(); ++i) EXPECT_GE(placed[i], wanted[i]);
  EXPECT_DOUBLE_EQ(placed[3], 99);
  EXPECT_DOUBLE_EQ(placed[0], 119);
  EXPECT_DOUBLE_EQ(placed[1], 139);
  EXPECT_DOUBLE_EQ(placed[2], 159);
}

TEST(PlotLabels, CeilingsWithinThreePercentGetSeparateLabels) {
  Machine m = cpu_machine();
  m.compute = {ceiling("FP64.FMA", 100.0), ceiling("TENSOR.FP64.FP64", 102.5)};
  const std::string script = view(build(m), "hierarchical").script;
  const auto a = label_position(script, "FP64.FMA: 100 GFLOP/s");
  const auto b = label_position(script, "TENSOR.FP64.FP64: 103 GFLOP/s");
  // At least a text line apart on a log axis spanning a few decades: well over 5%, in order.
  EXPECT_GT(b.second / a.second, 1.05);
  // Each label keeps a connector from its line's end to where it was moved.
  EXPECT_NE(script.find("set arrow from graph 1, first 100 to screen"), std::string::npos);
  EXPECT_NE(script.find("set arrow from graph 1, first 102.5 to screen"), std::string::npos);
}

// Parallel roofs within a few percent (an H200's L1 at 32.3 TB/s and shared memory at 33.1) are
// one line to the eye, and their labels printed over each other: one label names both.
TEST(PlotLabels, RoofsWithinFivePercentShareOneLabel) {
  EXPECT_EQ(plot_detail::close_groups({32289, 8725, 33124, 4667, 4800}, 0.05),
            (std::vector<std::vector<std::size_t>>{{0, 2}, {1}, {3, 4}}));
  EXPECT_EQ(plot_detail::merged_label({"L1: 32.3 TB/s", "shared: 33.1 TB/s"}), "L1 32.3 / shared 33.1 TB/s");
  EXPECT_EQ(plot_detail::merged_label({"A: 998 GB/s", "B (spec): 1.01 TB/s"}), "A: 998 GB/s / B (spec): 1.01 TB/s");
  EXPECT_EQ(plot_detail::merged_label({"HBM: 4.67 TB/s"}), "HBM: 4.67 TB/s");

  Machine m = cpu_machine();
  m.memory = {level("L1", 32289, 0, 0), level("shared", 33124, 0, 0), level("L2", 8725, 0, 0)};
  const std::string script = view(build(m), "hierarchical").script;
  EXPECT_EQ(count(script, "set label 'L1 32.3 / shared 33.1 TB/s'"), 1);
  EXPECT_EQ(script.find("set label 'L1: "), std::string::npos);
  EXPECT_EQ(script.find("set label 'shared: "), std::string::npos);
  EXPECT_EQ(count(script, "set label 'L2: 8.73 TB/s'"), 1);
  // Both roofs are still drawn.
  EXPECT_EQ(blocks(data_file(view(build(m), "hierarchical"), "hierarchical_memory.dat")).size(), 3u);
}

TEST(PlotLabels, RoofsTenPercentApartGetSeparateLabels) {
  Machine m = cpu_machine();
  m.memory = {level("L2", 200.0, 0, 0), level("L3", 180.0, 0, 0)};
  const std::string script = view(build(m), "hierarchical").script;
  const auto l2 = label_position(script, "L2: 200 GB/s");
  const auto l3 = label_position(script, "L3: 180 GB/s");
  // Parallel roofs this close: the L2 roof runs through the band above the L3 roof, so the L3
  // label goes below its own roof (it once slid along above it, across the L2 line).
  EXPECT_GT(l2.second, 200 * l2.first) << "the fastest roof's label is above it";
  EXPECT_LT(l3.second, 180 * l3.first) << "the L3 label is not below its roof";
}

// ---- names ------------------------------------------------------------------------------------

TEST(PlotNames, LongNamesAreBaseNamesMadeUnique) {
  const std::string args(1200, 'x');
  const std::vector<std::string> shown = plot_detail::display_names(
      {"triad", "void at::native::<unnamed>::elementwise_kernel<float, " + args + ">(int, float*)",
       "void at::native::<unnamed>::elementwise_kernel<double, " + args + ">(int, double*)",
       "(anonymous namespace)::gemm_kernel<128, 64>(" + args + ")", "my kernel (v2)"},
      32);
  EXPECT_EQ(shown, (std::vector<std::string>{"triad", "elementwise_kernel #1", "elementwise_kernel #2", "gemm_kernel",
                                             "my kernel (v2)"}));
  for (const std::string& s : plot_detail::display_names({std::string(300, 'a') + "<" + args + ">"}, 32))
    EXPECT_LE(s.size(), 32u);
}

// ---- numbers on the axes ----------------------------------------------------------------------

TEST(PlotFormat, CompactNumbersNeverLookLikePrintf) {
  using plot_detail::compact_number;
  using plot_detail::intensity_text;
  EXPECT_EQ(compact_number(1.1e7), "1.1e7");
  EXPECT_EQ(compact_number(2e-5), "2e-5");
  EXPECT_EQ(compact_number(612000), "6.12e5");
  EXPECT_EQ(compact_number(0.5), "0.5");
  EXPECT_EQ(compact_number(1234), "1230");
  EXPECT_EQ(intensity_text(1048576), "2^20");
  EXPECT_EQ(intensity_text(1.0 / 4096), "2^-12");
  EXPECT_EQ(intensity_text(1.0 / 1024), "1/1024");
  EXPECT_EQ(intensity_text(8192), "8192");
  EXPECT_EQ(intensity_text(0.3), "0.3");
  // Ticks of wide axes: powers of two and of ten written compactly, never "1.04858e+06".
  const std::string x = plot_detail::log2_tics("x", 1.0 / 64, 3.4e7, plot_detail::intensity_text);
  EXPECT_NE(x.find("'2^20'"), std::string::npos) << x;
  const std::string y = plot_detail::log10_tics("y", 0.5, 3e6);
  for (const char* tick : {"'1'", "'1000'", "'1e4'", "'1e5'", "'1e6'"}) EXPECT_NE(y.find(tick), std::string::npos) << y;
  for (const std::string& ticks : {x, y}) {
    const std::string quoted = std::regex_replace(ticks, std::regex("' [-0-9.e+]+ [01]"), "'");
    EXPECT_EQ(quoted.find("e+"), std::string::npos) << ticks;
  }
}

// ---- script content ---------------------------------------------------------------------------

TEST(PlotScripts, BandwidthViewDrawsSamplesLevelsAndCaches) {
  int memory_samples = 0;
  const std::vector<Sample> samples = bandwidth_samples(&memory_samples);
  const PlotScript bw = view(build(cpu_machine(), samples), "bandwidth");
  const std::string& s = bw.script;
  EXPECT_NE(s.find("set logscale x 2"), std::string::npos);
  EXPECT_NE(s.find("set logscale y"), std::string::npos);
  EXPECT_NE(s.find("Test CPU 2-core"), std::string::npos);
  EXPECT_NE(s.find("'4 KiB'"), std::string::npos);
  EXPECT_NE(s.find("'1 MiB'"), std::string::npos);
  for (const char* label : {"'L1: 412 GB/s'", "'L2: 182 GB/s'", "'L3: 96.4 GB/s'", "'DRAM: 21.3 GB/s'"})
    EXPECT_NE(s.find(label), std::string::npos) << label;
  for (const char* label : {"'L1 64 KiB'", "'L2 1 MiB'", "'L3 32 MiB'"})
    EXPECT_NE(s.find(label), std::string::npos) << label;
  EXPECT_EQ(count(s, ", graph 1 nohead dt 2"), 3);                      // one dashed marker per cache
  const auto segments = blocks(data_file(bw, "bandwidth_levels.dat"));  // one per level
  ASSERT_EQ(segments.size(), 4u);
  EXPECT_EQ(segments[1], (std::vector<std::pair<double, double>>{{128 * KiB, 182.4}, {768 * KiB, 182.4}}));

  // One series per mode; the FLOP probe's row is not drawn.
  const auto raw = blocks(data_file(bw, "bandwidth_samples.dat"));
  ASSERT_EQ(raw.size(), 2u);
  EXPECT_EQ(int(raw[0].size() + raw[1].size()), memory_samples);
  EXPECT_NE(s.find("'read (median)'"), std::string::npos);
  EXPECT_NE(s.find("'write (median)'"), std::string::npos);
  const auto medians = blocks(data_file(bw, "bandwidth_medians.dat"));
  ASSERT_EQ(medians.size(), 2u);
  EXPECT_EQ(medians[0].size() * 5, raw[0].size());  // one median per size
}

TEST(PlotScripts, BandwidthViewWithoutSamplesDrawsLevelsOnly) {
  const PlotScript bw = view(build(cpu_machine()), "bandwidth");
  ASSERT_EQ(bw.data_files.size(), 1u);
  EXPECT_EQ(bw.data_files[0].first, "bandwidth_levels.dat");
  EXPECT_NE(bw.script.find("'L1: 412 GB/s'"), std::string::npos);
  EXPECT_EQ(bw.script.find("bandwidth_samples.dat"), std::string::npos);
}

TEST(PlotScripts, HierarchicalViewHasOneRoofPerLevelAndOneLinePerCeiling) {
  const Machine m = cpu_machine();
  const PlotScript h = view(build(m), "hierarchical");
  const std::string& s = h.script;

  const auto roofs = blocks(data_file(h, "hierarchical_memory.dat"));
  ASSERT_EQ(roofs.size(), m.memory.size());
  for (std::size_t i = 0; i < roofs.size(); ++i) {
    ASSERT_EQ(roofs[i].size(), 2u);
    for (const auto& [x, y] : roofs[i]) EXPECT_NEAR(y / x, m.memory[i].gbs, 1e-3 * m.memory[i].gbs);
    EXPECT_NEAR(roofs[i][1].second, 98.26, 0.01);  // ends at the ridge with the top ceiling drawn
  }
  // FP64 by default (its FMA and noFMA ceilings, the first two of the file).
  const auto lines = blocks(data_file(h, "hierarchical_compute.dat"));
  ASSERT_EQ(lines.size(), 2u);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_DOUBLE_EQ(lines[i][0].second, lines[i][1].second);
    EXPECT_NEAR(lines[i][0].second, m.compute[i].gflops, 1e-3);
  }
  EXPECT_EQ(blocks(data_file(h, "hierarchical_theoretical.dat")).size(), 2u);

  EXPECT_EQ(count(s, "'hierarchical_memory.dat' index"), 4);
  EXPECT_EQ(count(s, "'hierarchical_compute.dat' index"), 2);
  for (const char* label : {"'L1: 412 GB/s'", "'L2: 182 GB/s'", "'L3: 96.4 GB/s'", "'DRAM: 21.3 GB/s'",
                            "'FP64.FMA: 98.3 GFLOP/s'", "'FP64.noFMA: 49.6 GFLOP/s'"})
    EXPECT_NE(s.find(label), std::string::npos) << label;
  EXPECT_EQ(s.find("FP32.FMA"), std::string::npos);
  EXPECT_NE(s.find("Hierarchical roofline, FP64 - Test CPU 2-core"), std::string::npos);

  // The x axis covers 1/64 to 1024 FLOP/byte at least, labelled as fractions.
  std::smatch range;
  ASSERT_TRUE(std::regex_search(s, range, std::regex("set xrange \\[([0-9.e+-]+):([0-9.e+-]+)\\]")));
  EXPECT_LE(std::stod(range[1]), 1.0 / 64);
  EXPECT_GE(std::stod(range[2]), 1024);
  EXPECT_NE(s.find("'1/64'"), std::string::npos);
}

TEST(PlotScripts, TeraLabelsForGpuSizedCeilings) {
  Machine m = cpu_machine();
  m.memory = {level("L2", 7400, 0, 0), level("HBM", 3412, 0, 0)};
  m.compute = {ceiling("TENSOR.FP16.FP32", 756000), ceiling("FP16.FMA", 51200)};
  PlotOptions fp16;
  fp16.out_dir = "unused";
  fp16.precision = "fp16";
  const std::string s = view(build_plot_scripts(m, {}, fp16, nullptr), "hierarchical").script;
  EXPECT_NE(s.find("'HBM: 3.41 TB/s'"), std::string::npos);
  EXPECT_NE(s.find("'TENSOR.FP16.FP32: 756 TFLOP/s'"), std::string::npos);
  // The slowest ridge (756000 / 3412 = 222) is inside the x range, two octaves from its end.
  std::smatch range;
  ASSERT_TRUE(std::regex_search(s, range, std::regex("set xrange \\[([0-9.e+-]+):([0-9.e+-]+)\\]")));
  EXPECT_GE(std::stod(range[2]), 222 * 4);
}

TEST(PlotScripts, DeviceNamesAreQuotedVerbatim) {
  Machine m = cpu_machine();
  m.device.name = "Bob's GPU_x^2 {A}";
  const std::string s = view(build(m), "bandwidth").script;
  EXPECT_NE(s.find("'Memory bandwidth vs working set - Bob''s GPU_x^2 {A}'"), std::string::npos);
  EXPECT_NE(s.find("noenhanced"), std::string::npos);  // underscores and carets print as-is
}

TEST(PlotScripts, TerminalFollowsFormat) {
  PlotOptions options;
  for (const auto& [format, terminal] : {std::pair<std::string, std::string>{"png", "pngcairo size 1280,860"},
                                         {"svg", "set terminal svg"},
                                         {"pdf", "set terminal pdfcairo"}}) {
    options.format = format;
    const auto scripts = build_plot_scripts(cpu_machine(), {}, options, nullptr);
    ASSERT_EQ(scripts.size(), 2u);
    for (const PlotScript& s : scripts) {
      EXPECT_NE(s.script.find(terminal), std::string::npos) << format;
      EXPECT_NE(s.script.find("outfile = '" + s.view + "." + format + "'"), std::string::npos);
    }
  }
}

TEST(PlotScripts, UnknownFormatIsAnInputError) {
  PlotOptions options;
  options.format = "jpeg";
  EXPECT_THROW(build_plot_scripts(cpu_machine(), {}, options, nullptr), InputError);
  TempDir dir;
  options.out_dir = dir.path().string();
  EXPECT_THROW(render_plots(cpu_machine(), {}, options), InputError);
}

// ---- skipped views ----------------------------------------------------------------------------

TEST(PlotSkips, NoComputeSkipsHierarchicalWithReason) {
  Machine m = cpu_machine();
  m.compute.clear();
  std::vector<std::string> skipped;
  const auto scripts = build(m, {}, &skipped);
  ASSERT_EQ(scripts.size(), 1u);
  EXPECT_EQ(scripts[0].view, "bandwidth");
  ASSERT_FALSE(skipped.empty());
  EXPECT_EQ(skipped[0].rfind("hierarchical: ", 0), 0u);
  EXPECT_NE(skipped[0].find("compute"), std::string::npos);
}

TEST(PlotSkips, NoLevelsButSamplesDrawsBandwidthOnly) {
  Machine m = cpu_machine();
  m.memory.clear();
  std::vector<std::string> skipped;
  const auto scripts = build(m, bandwidth_samples(), &skipped);
  ASSERT_EQ(scripts.size(), 1u);
  EXPECT_EQ(scripts[0].view, "bandwidth");
  // With no levels to name the memory probe, a sample qualifies by shape: the FLOP row is out.
  EXPECT_EQ(blocks(data_file(scripts[0], "bandwidth_samples.dat")).size(), 2u);
  ASSERT_FALSE(skipped.empty());
  EXPECT_EQ(skipped[0].rfind("hierarchical: ", 0), 0u);
  EXPECT_NE(skipped[0].find("memory levels"), std::string::npos);
}

TEST(PlotSkips, EmptyMachineSkipsEverything) {
  Machine m;
  std::vector<std::string> skipped;
  EXPECT_TRUE(build(m, {}, &skipped).empty());
  ASSERT_EQ(skipped.size(), plot_view_names().size());
  for (std::size_t i = 0; i < skipped.size(); ++i)
    EXPECT_EQ(skipped[i].rfind(plot_view_names()[i] + ": ", 0), 0u) << skipped[i];
}

// ---- rendering --------------------------------------------------------------------------------

TEST(PlotRender, RendersPngsWithGnuplot) {
  if (find_gnuplot().empty()) GTEST_SKIP() << "gnuplot not found";
  TempDir dir;
  PlotOptions options;
  options.out_dir = (dir.path() / "plots").string();  // created by render_plots
  const PlotReport report = render_plots(cpu_machine(), bandwidth_samples(), options);
  // A CPU machine file without a sweep of FLOP samples: the GPU and sweep views are skipped,
  // each with its reason.
  ASSERT_EQ(report.skipped.size(), 5u);
  EXPECT_EQ(report.skipped[0], "instruction: no instructions.warp_gips (GPU probe 'issue' not run)");
  EXPECT_EQ(report.skipped[1].rfind("shared: ", 0), 0u);
  EXPECT_EQ(report.skipped[2].rfind("flops: no FLOP samples", 0), 0u);
  EXPECT_EQ(report.skipped[3].rfind("scaling: no scaling section", 0), 0u);
  EXPECT_EQ(report.skipped[4],
            "power: the machine file has no energy figures (no energy: or energy_model: section; "
            "see its missing: lines)");
  ASSERT_EQ(report.written.size(), 2u);
  for (const char* name : {"bandwidth.png", "hierarchical.png"}) {
    const fs::path png = dir.path() / "plots" / name;
    ASSERT_TRUE(fs::exists(png)) << png;
    const std::string bytes = read_file(png);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
    EXPECT_GT(bytes.size(), 10000u);
  }
  EXPECT_TRUE(fs::exists(dir.path() / "plots" / "bandwidth.gp"));
  EXPECT_TRUE(fs::exists(dir.path() / "plots" / "bandwidth_samples.dat"));
  for (const auto& entry : fs::directory_iterator(dir.path() / "plots"))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

TEST(PlotRender, RendersSvgAndPdf) {
  if (find_gnuplot().empty()) GTEST_SKIP() << "gnuplot not found";
  TempDir dir;
  PlotOptions options;
  options.out_dir = dir.path().string();
  options.format = "svg";
  render_plots(cpu_machine(), bandwidth_samples(), options);
  EXPECT_NE(read_file(dir.path() / "hierarchical.svg").find("<svg"), std::string::npos);
  options.format = "pdf";
  render_plots(cpu_machine(), bandwidth_samples(), options);
  EXPECT_EQ(read_file(dir.path() / "bandwidth.pdf").substr(0, 5), "%PDF-");
}

TEST(PlotRender, RelativeGnuplotPathWorksFromThePlotDirectory) {
  const std::string gnuplot = find_gnuplot();
  if (gnuplot.empty()) GTEST_SKIP() << "gnuplot not found";
  // gnuplot runs with the plot directory as working directory; a relative path must still work.
  ScopedEnv env("ROOFPROBE_GNUPLOT", fs::relative(gnuplot, fs::current_path()).string());
  EXPECT_TRUE(fs::path(find_gnuplot()).is_absolute());
  TempDir dir;
  PlotOptions options;
  options.out_dir = dir.path().string();
  EXPECT_EQ(render_plots(cpu_machine(), {}, options).written.size(), 2u);
}

TEST(PlotRender, MissingGnuplotIsAnInputErrorNamingIt) {
  TempDir dir;
  ScopedEnv env("ROOFPROBE_GNUPLOT", (dir.path() / "no-such-gnuplot").string());
  EXPECT_EQ(find_gnuplot(), "");
  PlotOptions options;
  options.out_dir = dir.path().string();
  try {
    render_plots(cpu_machine(), {}, options);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gnuplot not found"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ROOFPROBE_GNUPLOT"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(dir.path() / "bandwidth.png"));
  EXPECT_TRUE(fs::exists(dir.path() / "bandwidth.gp"));  // the scripts can be rendered elsewhere
}

TEST(PlotRender, FailingGnuplotLeavesNoImageAndReportsItsError) {
  TempDir dir;
  const fs::path fake = dir.path() / "fake-gnuplot";
  {
    // Writes half an image, then fails the way gnuplot does.
    std::ofstream out(fake);
    out << "#!/bin/sh\n"
           "eval \"$2\"  # outfile='.bandwidth.png.tmpNNN', as gnuplot -e would set it\n"
           "echo partial > \"$outfile\"\n"
           "printf '\\nplot foo\\n     ^\\n\"%s\" line 7: undefined variable: foo\\n\\n' \"$3\" >&2\n"
           "exit 1\n";
  }
  fs::permissions(fake, fs::perms::owner_all);
  ScopedEnv env("ROOFPROBE_GNUPLOT", fake.string());
  PlotOptions options;
  options.out_dir = (dir.path() / "out").string();
  try {
    render_plots(cpu_machine(), {}, options);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gnuplot failed on "), std::string::npos) << what;
    EXPECT_NE(what.find("bandwidth.gp"), std::string::npos) << what;
    EXPECT_NE(what.find("line 7: undefined variable: foo"), std::string::npos) << what;
  }
  for (const auto& entry : fs::directory_iterator(dir.path() / "out")) {
    EXPECT_NE(entry.path().extension(), ".png") << entry.path();
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
  }
}

}  // namespace
}  // namespace roofprobe
