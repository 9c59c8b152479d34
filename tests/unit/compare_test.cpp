// compare: two GPUs side by side, ratios to the first, missing ceilings shown as missing, the
// device memory compared whatever each file calls it, schema errors naming the file, the three
// printed forms, and the overlay plot's script.
#include <gtest/gtest.h>
#include <regex>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "driver/report/compare.hpp"
#include "driver/model/errors.hpp"
#include "plot/compare_overlay.hpp"

namespace roofprobe {
namespace {

namespace fs = std::filesystem;

MemoryLevel level(const std::string& name, double gbs, const std::string& source = "empirical") {
  MemoryLevel l;
  l.level = name;
  l.gbs = gbs;
  l.source = source;
  return l;
}

ComputeCeiling ceiling(const std::string& name, double gflops, double theoretical,
                       const std::string& source = "empirical") {
  ComputeCeiling c;
  c.name = name;
  c.gflops = gflops;
  c.theoretical_gflops = theoretical;
  c.source = source;
  return c;
}

Machine gpu(const std::string& name, int sms, double hbm, double fp64, double fp64_theory) {
  Machine m;
  m.device.kind = "gpu";
  m.device.name = name;
  m.device.compute_units = sms;
  m.device.compute_unit_name = "multiprocessors";
  m.device.memory_name = "HBM";
  m.memory = {level("L2", hbm * 3), level("HBM", hbm)};
  m.compute = {ceiling("FP64.FMA", fp64, fp64_theory)};
  return m;
}

const CompareRow* find_row(const CompareTable& t, const std::string& name) {
  for (const CompareRow& r : t.rows)
    if (r.name == name) return &r;
  return nullptr;
}

TEST(Compare, TwoGpusSideBySideWithRatiosToTheFirst) {
  Machine a = gpu("GPU A", 80, 800, 7000, 7800);
  Machine b = gpu("GPU B", 108, 1600, 9000, 9700);
  b.compute.push_back(ceiling("TENSOR.FP16.FP32", 300000, 312000));
  const CompareTable t = build_compare_table({"a.yaml", "b.yaml"}, {a, b});
  ASSERT_EQ(t.labels, (std::vector<std::string>{"GPU A", "GPU B"}));

  const CompareRow* hbm = find_row(t, "device memory (HBM)");
  ASSERT_NE(hbm, nullptr);
  EXPECT_EQ(hbm->section, "memory bandwidth");
  EXPECT_EQ(hbm->unit, "GB/s");
  EXPECT_DOUBLE_EQ(hbm->cells[0].value, 800);
  EXPECT_DOUBLE_EQ(hbm->cells[1].value, 1600);
  EXPECT_DOUBLE_EQ(*compare_ratio(*hbm, 1), 2.0);

  const CompareRow* fp64 = find_row(t, "FP64.FMA");
  ASSERT_NE(fp64, nullptr);
  EXPECT_DOUBLE_EQ(*compare_ratio(*fp64, 1), 9000.0 / 7000.0);
  const CompareRow* theory = find_row(t, "FP64.FMA (theoretical)");
  ASSERT_NE(theory, nullptr);
  EXPECT_DOUBLE_EQ(theory->cells[1].value, 9700);
  const CompareRow* units = find_row(t, "compute units (multiprocessors)");
  ASSERT_NE(units, nullptr);
  EXPECT_DOUBLE_EQ(*compare_ratio(*units, 1), 108.0 / 80.0);

  // Rows come in section order: device, memory, compute.
  std::vector<std::string> sections;
  for (const CompareRow& r : t.rows)
    if (sections.empty() || sections.back() != r.section) sections.push_back(r.section);
  EXPECT_EQ(sections, (std::vector<std::string>{"device", "memory bandwidth", "compute"}));
}

// A ceiling that ran throttled has its peak at the clock it ran at, as in its machine file; the
// device's peak at the start-up clock stays the row of a ceiling that has none of its own.
TEST(Compare, AMeasuredCeilingsPeakIsAtItsOwnClock) {
  Machine a = gpu("GPU A", 132, 3000, 50000, 60000);  // FP64.FMA ran at a sagged clock
  a.device.theoretical_gflops = {{"FP64.FMA", 67000}, {"FP32.FMA", 134000}};
  const CompareTable t = build_compare_table({"a.yaml", "b.yaml"}, {a, gpu("GPU B", 132, 3000, 50000, 0)});
  const CompareRow* theory = find_row(t, "FP64.FMA (theoretical)");
  ASSERT_NE(theory, nullptr);
  EXPECT_DOUBLE_EQ(theory->cells[0].value, 60000) << "the ceiling's own clock, not the device's 67000";
  EXPECT_FALSE(theory->cells[1].present) << "B has no peak of FP64.FMA anywhere";
  const CompareRow* fp32 = find_row(t, "FP32.FMA (theoretical)");
  ASSERT_NE(fp32, nullptr);
  EXPECT_DOUBLE_EQ(fp32->cells[0].value, 134000);
}

const CompareRow* find_row(const CompareTable& t, const std::string& section, const std::string& name) {
  for (const CompareRow& r : t.rows)
    if (r.section == section && r.name == name) return &r;
  return nullptr;
}

// Energy figures built here for the comparison (synthetic, not a measurement).
EnergySection energy_of(double fp64_pj_per_flop, double hbm_pj_per_byte, double idle_w) {
  EnergySection e;
  e.counter = "synthetic";
  e.idle_power_w = idle_w;
  e.ceilings = {{"FP64.FMA", 300, fp64_pj_per_flop, 0, 1, 5}, {"HBM", 250, 0, hbm_pj_per_byte, 1, 5}};
  return e;
}

TEST(Compare, EnergyEfficiencyAndEnergyPerByteSideBySide) {
  Machine a = gpu("GPU A", 80, 800, 7000, 7800);
  Machine b = gpu("GPU B", 108, 1600, 9000, 9700);
  Machine c = gpu("GPU C", 108, 1600, 9000, 9700);  // no energy counter
  a.energy = energy_of(40, 300, 50);
  b.energy = energy_of(25, 150, 60);
  EnergyModelSection model;
  model.constant_power_w = 90;
  model.pj_per_flop = {{"FP64.FMA", 12, 11, 13, 20}};
  model.pj_per_byte = {{"HBM", 60, 55, 65, 20}};
  b.energy_model = model;
  const CompareTable t = build_compare_table({"a.yaml", "b.yaml", "c.yaml"}, {a, b, c});

  const CompareRow* eff = find_row(t, "energy efficiency", "FP64.FMA");
  ASSERT_NE(eff, nullptr);
  EXPECT_EQ(eff->unit, "GFLOP/s/W");
  EXPECT_DOUBLE_EQ(eff->cells[0].value, 1000.0 / 40);  // 40 pJ/FLOP: 25 GFLOP per joule
  EXPECT_DOUBLE_EQ(eff->cells[1].value, 1000.0 / 25);
  EXPECT_FALSE(eff->cells[2].present);
  EXPECT_DOUBLE_EQ(*compare_ratio(*eff, 1), 40.0 / 25);
  const CompareRow* hbm = find_row(t, "energy per byte", "device memory (HBM)");
  ASSERT_NE(hbm, nullptr);
  EXPECT_EQ(hbm->unit, "pJ/B");
  EXPECT_DOUBLE_EQ(hbm->cells[1].value, 150);
  const CompareRow* idle = find_row(t, "power", "idle");
  ASSERT_NE(idle, nullptr);
  EXPECT_DOUBLE_EQ(idle->cells[0].value, 50);
  const CompareRow* pi0 = find_row(t, "energy model", "constant power [W]");
  ASSERT_NE(pi0, nullptr);
  EXPECT_FALSE(pi0->cells[0].present);
  EXPECT_DOUBLE_EQ(pi0->cells[1].value, 90);
  ASSERT_NE(find_row(t, "energy model", "device memory (HBM) [pJ/B]"), nullptr);

  const std::string text = format_compare_table(t, "text");
  EXPECT_NE(text.find("FP64.FMA [GFLOP/s/W]"), std::string::npos) << text;
  EXPECT_NE(text.find("device memory (HBM) [pJ/B]"), std::string::npos) << text;
}

TEST(Compare, MissingCeilingIsShownAsMissing) {
  Machine a = gpu("GPU A", 80, 800, 7000, 7800);
  Machine b = gpu("GPU B", 108, 1600, 9000, 9700);
  b.compute.push_back(ceiling("TENSOR.FP16.FP32", 300000, 312000));
  const CompareTable t = build_compare_table({"a.yaml", "b.yaml"}, {a, b});
  const CompareRow* tensor = find_row(t, "TENSOR.FP16.FP32");
  ASSERT_NE(tensor, nullptr);
  EXPECT_FALSE(tensor->cells[0].present);
  EXPECT_TRUE(tensor->cells[1].present);
  EXPECT_FALSE(compare_ratio(*tensor, 1).has_value());  // no baseline, no ratio

  const std::string text = format_compare_table(t, "text");
  std::istringstream lines(text);
  std::string line, tensor_line;
  while (std::getline(lines, line))
    if (line.find("TENSOR.FP16.FP32 [GFLOP/s]") != std::string::npos) tensor_line = line;
  EXPECT_NE(tensor_line.find(" - "), std::string::npos) << tensor_line;
  EXPECT_NE(tensor_line.find("300000"), std::string::npos) << tensor_line;
  EXPECT_NE(text.find("- = missing"), std::string::npos);

  const std::string md = format_compare_table(t, "markdown");
  EXPECT_NE(md.find("| TENSOR.FP16.FP32 [GFLOP/s] | - | 300000 | - |"), std::string::npos) << md;

  const std::string csv = format_compare_table(t, "csv");
  EXPECT_NE(csv.find("compute,TENSOR.FP16.FP32,GFLOP/s,,missing,300000,empirical,\n"), std::string::npos) << csv;
}

TEST(Compare, SourcesAreMarkedAndSpecRowsKept) {
  Machine measured = gpu("Mine", 132, 3000, 30000, 33500);
  Machine reference = gpu("Reference", 132, 0, 0, 0);
  reference.memory = {level("HBM", 3350, "spec")};
  reference.compute = {ceiling("FP64.FMA", 34000, 34000, "spec")};
  const CompareTable t = build_compare_table({"mine.yaml", "ref.yaml"}, {measured, reference});
  const CompareRow* hbm = find_row(t, "device memory (HBM)");
  ASSERT_NE(hbm, nullptr);
  EXPECT_EQ(hbm->cells[1].source, "spec");
  EXPECT_NEAR(*compare_ratio(*hbm, 1), 3350.0 / 3000.0, 1e-12);
  const CompareRow* spec = find_row(t, "device memory (HBM) (spec)");
  ASSERT_NE(spec, nullptr);
  EXPECT_FALSE(spec->cells[0].present);
  const std::string text = format_compare_table(t, "text");
  EXPECT_NE(text.find("3350 [s]"), std::string::npos) << text;
  EXPECT_NE(text.find("[s] spec-sheet value"), std::string::npos);
}

TEST(Compare, DeviceMemoryIsOneRowWhateverItIsCalled) {
  Machine hbm = gpu("HBM GPU", 80, 800, 7000, 7800);
  Machine gddr = gpu("GDDR GPU", 128, 1000, 1200, 1290);
  gddr.device.memory_name = "GDDR";
  gddr.memory = {level("GDDR", 1000, "spec")};
  const CompareTable t = build_compare_table({"a.yaml", "b.yaml"}, {hbm, gddr});
  const CompareRow* row = find_row(t, "device memory (HBM/GDDR)");
  ASSERT_NE(row, nullptr);
  EXPECT_DOUBLE_EQ(*compare_ratio(*row, 1), 1000.0 / 800.0);
  EXPECT_EQ(find_row(t, "GDDR"), nullptr);
}

TEST(Compare, WallsAndInstructionRows) {
  Machine a = gpu("A", 80, 800, 7000, 7800);
  Machine b = gpu("B", 108, 1600, 9000, 9700);
  InstructionCeiling w;
  w.measured_gips = 470;
  w.theoretical_gips = 489.6;
  a.warp_gips = w;
  w.measured_gips = 0;
  w.theoretical_gips = 609.12;
  w.source = "spec";
  b.warp_gips = w;
  a.global_walls = {{"stride-1", 4, 0, 0.25, 0.26, 100}};
  b.global_walls = {{"stride-1", 4, 0, 0.25, 0, 0}};
  const CompareTable t = build_compare_table({"a", "b"}, {a, b});
  const CompareRow* gips = find_row(t, "warp GIPS");
  ASSERT_NE(gips, nullptr);
  EXPECT_TRUE(gips->cells[0].present);
  EXPECT_FALSE(gips->cells[1].present);  // not measured: missing, the theoretical row has it
  EXPECT_NEAR(*compare_ratio(*find_row(t, "warp GIPS (theoretical)"), 1), 609.12 / 489.6, 1e-12);
  const CompareRow* wall = find_row(t, "global stride-1 (4 B)");
  ASSERT_NE(wall, nullptr);
  EXPECT_DOUBLE_EQ(wall->cells[0].value, 0.26);
  EXPECT_EQ(wall->cells[1].source, "theoretical");
}

TEST(Compare, CsvQuotesNamesAndKeepsFullPrecision) {
  Machine a = gpu("GPU, \"A\"", 80, 828.758, 7068.86, 7833.6);
  Machine b = gpu("GPU B", 80, 900, 7800, 7833.6);
  const std::string csv = format_compare_table(build_compare_table({"a", "b"}, {a, b}), "csv");
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_EQ(header,
            "section,ceiling,unit,\"GPU, \"\"A\"\"\",\"GPU, \"\"A\"\" source\",GPU B,GPU B source,"
            "\"GPU B / GPU, \"\"A\"\"\"");
  EXPECT_NE(csv.find("828.758"), std::string::npos);
  EXPECT_NE(csv.find("7068.86"), std::string::npos);
}

TEST(Compare, SameDeviceTwiceGetsTheFileInItsLabel) {
  Machine a = gpu("GPU", 80, 800, 7000, 7800);
  const CompareTable t = build_compare_table({"run1.yaml", "run2.yaml"}, {a, a});
  EXPECT_EQ(t.labels, (std::vector<std::string>{"GPU (run1.yaml)", "GPU (run2.yaml)"}));
}

TEST(Compare, UnknownFormatNamesTheValidOnes) {
  try {
    format_compare_table(CompareTable{}, "html");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    for (const std::string& f : compare_formats()) EXPECT_NE(what.find(f), std::string::npos) << f;
  }
}

std::string temp_dir() {
  std::string dir = fs::temp_directory_path() / ("roofprobe_compare_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

TEST(Compare, ReadsFilesAndNamesTheOneWithAnotherSchema) {
  const std::string dir = temp_dir();
  const std::string good = dir + "/good.yaml", other = dir + "/other.yaml";
  write_machine_file(gpu("GPU A", 80, 800, 7000, 7800), good);
  std::string text = machine_to_yaml(gpu("GPU B", 80, 900, 7000, 7800));
  text.replace(text.find("roofprobe.machine/1"), 19, "roofprobe.machine/2");
  std::ofstream(other) << text;

  EXPECT_EQ(read_compare_inputs({good, good}).size(), 2u);
  try {
    read_compare_inputs({good, other});
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find(other), std::string::npos) << what;
    EXPECT_NE(what.find("roofprobe.machine/2"), std::string::npos) << what;
  }
  EXPECT_THROW(read_compare_inputs({good}), InputError);
  EXPECT_THROW(read_compare_inputs({good, dir + "/absent.yaml"}), InputError);
  fs::remove_all(dir);
}

// ---- the overlay plot ------------------------------------------------------------------------

// Two valid files at the extremes of what a double holds: the overlay is refused in one line
// (bounded work) instead of an axis of hundreds of decades.
TEST(CompareOverlay, ExtremeButValidRatesAreRefusedNotDrawn) {
  Machine a = gpu("NVIDIA A", 80, 1e-200, 7000, 7800);
  Machine b = gpu("NVIDIA B", 108, 1e200, 9000, 9700);
  try {
    build_compare_overlay({a, b}, {"A", "B"}, "cmp", "png");
    FAIL() << "an overlay spanning 400 decades was drawn";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("compare --plot: the machines' rates span ", 0), 0u) << what;
    EXPECT_NE(what.find("no readable plot (compare without --plot)"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  // The table itself still compares them: every figure whole, with an exponent, and no ratio
  // where the quotient overflows or underflows.
  const CompareTable t = build_compare_table({"a.yaml", "b.yaml"}, {a, b});
  const CompareRow* l2 = find_row(t, "L2");
  ASSERT_NE(l2, nullptr);
  EXPECT_FALSE(compare_ratio(*l2, 1).has_value());
  const std::string text = format_compare_table(t, "text");
  std::istringstream lines(text);
  std::string line, l2_line;
  while (std::getline(lines, line))
    if (line.find("  L2 [GB/s]") == 0) l2_line = line;
  EXPECT_NE(l2_line.find("3e-200"), std::string::npos) << text;
  EXPECT_NE(l2_line.find("3e+200"), std::string::npos) << l2_line;
  EXPECT_EQ(l2_line.find("inf"), std::string::npos) << l2_line;
  EXPECT_EQ(l2_line.back(), '-') << l2_line;
  const CompareTable back = build_compare_table({"b.yaml", "a.yaml"}, {b, a});
  EXPECT_FALSE(compare_ratio(*find_row(back, "L2"), 1).has_value());
}

TEST(CompareOverlay, DrawsEveryMachineInItsColourWithTheSharedCeilings) {
  Machine a = gpu("NVIDIA A", 80, 800, 7000, 7800);
  Machine b = gpu("NVIDIA B", 108, 1600, 9000, 9700);
  a.compute.push_back(ceiling("FP32.FMA", 14000, 15700));
  b.compute.push_back(ceiling("FP32.FMA", 19000, 19500));
  b.compute.push_back(ceiling("TENSOR.FP16.FP32", 300000, 312000));  // B only: not drawn
  EXPECT_EQ(overlay_ceiling_names({a, b}), (std::vector<std::string>{"FP64.FMA", "FP32.FMA"}));

  const PlotScript s = build_compare_overlay({a, b}, {"NVIDIA A", "NVIDIA B"}, "cmp", "png");
  EXPECT_EQ(s.view, "cmp");
  ASSERT_EQ(s.data_files.size(), 2u);
  EXPECT_EQ(s.data_files[0].first, "cmp_roofs.dat");
  EXPECT_NE(s.script.find("'cmp_roofs.dat' index 3"), std::string::npos);  // 2 roofs per machine
  EXPECT_EQ(s.script.find("'cmp_roofs.dat' index 4"), std::string::npos);
  EXPECT_NE(s.script.find("'cmp_ceilings.dat' index 3"), std::string::npos);
  EXPECT_EQ(s.script.find("TENSOR"), std::string::npos);
  // Labels name the machines without the word they share, ceilings in the right margin.
  EXPECT_NE(s.script.find("'A: HBM 800 GB/s'"), std::string::npos) << s.script;
  EXPECT_NE(s.script.find("'B: L2 4.8 TB/s'"), std::string::npos);
  EXPECT_NE(s.script.find("'FP64.FMA: 9 TFLOP/s'"), std::string::npos);
  EXPECT_NE(s.script.find("Roofline comparison: A vs B"), std::string::npos);
  // The device memory is solid, L2 dashed; each machine has its own colour.
  EXPECT_NE(s.script.find("dt 1 lc rgb '#0072B2'"), std::string::npos);
  EXPECT_NE(s.script.find("dt 2 lc rgb '#D55E00'"), std::string::npos);
  EXPECT_NE(s.script.find("unset key"), std::string::npos);
}

TEST(CompareOverlay, NoSharedCeilingDrawsEachMachinesPeakAndSpecIsMarked) {
  Machine a = gpu("A", 80, 800, 7000, 7800);
  Machine b = gpu("B", 108, 1600, 0, 0);
  b.compute = {ceiling("FP32.FMA", 19500, 19500, "spec")};
  EXPECT_EQ(overlay_ceiling_names({a, b}), (std::vector<std::string>{"FP64.FMA", "FP32.FMA"}));
  const PlotScript s = build_compare_overlay({a, b}, {"A", "B"}, "x", "svg");
  EXPECT_NE(s.script.find("FP32.FMA: 19.5 TFLOP/s (spec)"), std::string::npos) << s.script;
  EXPECT_NE(s.script.find("set terminal svg"), std::string::npos);
}

// Labels are moved apart inside the frame; the axis is never stretched to make room for them
// (four machines' 24 labels once took it from 1e6 to 1e9 GFLOP/s), and too many are refused.
TEST(CompareOverlay, LabelsFitTheFrameWithoutStretchingTheAxis) {
  std::vector<Machine> machines;
  for (int i = 0; i < 4; ++i) {
    Machine m = gpu("GPU " + std::to_string(i), 100, 1000 + 100 * i, 10000 + 1000 * i, 11000 + 1000 * i);
    for (const char* name : {"FP32.FMA", "TENSOR.FP16.FP32", "TENSOR.BF16.FP32", "TENSOR.TF32.FP32", "TENSOR.FP8.FP32"})
      m.compute.push_back(ceiling(name, 500000 + 1000 * i, 600000));
    machines.push_back(m);
  }
  const PlotScript p = build_compare_overlay(machines, {"A", "B", "C", "D"}, "cmp", "png");
  std::smatch range;
  ASSERT_TRUE(std::regex_search(p.script, range, std::regex("set yrange \\[([0-9.e+-]+):([0-9.e+-]+)\\]")));
  EXPECT_LE(std::stod(range[2]), 2 * 503000 * 1.01) << "the axis was stretched for the labels";
  // Each machine adds its ceilings' labels: twelve machines' do not fit one frame.
  for (int i = 4; i < 12; ++i) machines.push_back(machines[i % 4]);
  try {
    build_compare_overlay(machines, {}, "cmp", "png");
    FAIL() << "the labels of twelve machines drawn in one frame";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("more than fit one plot"), std::string::npos) << e.what();
  }
}

TEST(CompareOverlay, NeedsRoofsAndCeilings) {
  Machine a = gpu("A", 80, 800, 7000, 7800);
  Machine b = a;
  a.memory.clear();
  b.memory.clear();
  EXPECT_THROW(build_compare_overlay({a, b}, {"A", "B"}, "x", "png"), InputError);
  EXPECT_THROW(render_compare_overlay({a, b}, {"A", "B"}, "/tmp/x.jpg"), InputError);
}

}  // namespace
}  // namespace roofprobe
