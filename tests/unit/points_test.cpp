// Application points: the points file (plot --points) and the Nsight Compute conversion
// (roofprobe points --ncu-csv), checked number by number against the fixture's counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <stdexcept>

#include "driver/model/csv_text.hpp"
#include "driver/model/errors.hpp"
#include "driver/report/points.hpp"

namespace roofprobe {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(ROOFPROBE_SOURCE_DIR) + "/tests/unit/fixtures/" + name, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

const KernelPoint& find(const std::vector<KernelPoint>& points, const std::string& kernel, const std::string& level,
                        const std::string& kind) {
  for (const KernelPoint& p : points)
    if (p.kernel == kernel && p.level == level && p.kind == kind) return p;
  throw std::runtime_error("no point " + kernel + " @ " + level + " (" + kind + ")");
}

bool has(const std::vector<KernelPoint>& points, const std::string& kernel, const std::string& level,
         const std::string& kind) {
  for (const KernelPoint& p : points)
    if (p.kernel == kernel && p.level == level && p.kind == kind) return true;
  return false;
}

void expect_rel(double got, double want, double rel = 1e-12) { EXPECT_NEAR(got, want, rel * std::fabs(want)); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

// ---- the points file --------------------------------------------------------------------------

TEST(PointsFile, ReadsColumnsByNameWithOptionalKind) {
  const auto points = parse_points_csv(
      "# kernels of the solver\n"
      "Performance,Kernel,Intensity,Level,Kind\n"
      "1150,daxpy,0.0833,L1,flop\n"
      "\n"
      "310,\"dgemm<128, 64>\",3.2,L1,instruction\n"
      "68,daxpy,0.0833,HBM\n",  // kind left off: flop
      "k.csv");
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].kernel, "daxpy");
  EXPECT_EQ(points[0].level, "L1");
  EXPECT_DOUBLE_EQ(points[0].intensity, 0.0833);
  EXPECT_DOUBLE_EQ(points[0].performance, 1150);
  EXPECT_EQ(points[0].kind, "flop");
  EXPECT_EQ(points[1].kernel, "dgemm<128, 64>");
  EXPECT_EQ(points[1].kind, "instruction");
  EXPECT_EQ(points[2].kind, "flop");

  // A spreadsheet's UTF-8 export starts with a byte order mark.
  const auto marked = parse_points_csv("\xEF\xBB\xBFkernel,level,intensity,performance\nk,L2,2,30\n", "bom.csv");
  ASSERT_EQ(marked.size(), 1u);
  EXPECT_EQ(marked[0].kernel, "k");

  // Without a kind column every point is a FLOP point.
  const auto plain = parse_points_csv("kernel,level,intensity,performance\nk,L2,2,30\n", "p.csv");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].kind, "flop");
}

TEST(PointsFile, RoundTripsThroughItsWriter) {
  const std::vector<KernelPoint> points = {{"a \"quoted\", name", "L2", 0.125, 1234.5, "flop"},
                                           {"b", "shared", 3, 77.25, "instruction"}};
  const std::string text = points_to_csv(points);
  EXPECT_EQ(text.substr(0, text.find('\n')), "kernel,level,intensity,performance,kind");
  const auto back = parse_points_csv(text, "rt.csv");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].kernel, points[0].kernel);
  EXPECT_DOUBLE_EQ(back[0].intensity, 0.125);
  EXPECT_DOUBLE_EQ(back[0].performance, 1234.5);
  EXPECT_EQ(back[1].kind, "instruction");
}

TEST(PointsFile, BadInputNamesFileAndLine) {
  EXPECT_NE(
      error_of([] { parse_points_csv("daxpy,L1,0.1,100\n", "p.csv"); }).find("p.csv:1: the header has no 'kernel'"),
      std::string::npos);
  EXPECT_NE(error_of([] { parse_points_csv("kernel,level,intensity\nk,L1,1\n", "p.csv"); }).find("'performance'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_points_csv("kernel,level,intensity,performance\nk,L1,fast,1\n", "p.csv");
            }).find("p.csv:2: intensity must be a positive number, got 'fast'"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_points_csv("kernel,level,intensity,performance\nk,L1,1,-5\n", "p.csv");
            }).find("performance must be a positive number"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_points_csv("kernel,level,intensity,performance,kind\nk,L1,1,5,bytes\n", "p.csv");
            }).find("kind must be flop or instruction"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_points_csv("kernel,level,intensity,performance\nk,L1\n", "p.csv");
            }).find("p.csv:2: expected 4 fields, found 2"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_points_csv("kernel,level,intensity,performance\n", "p.csv"); }).find("no points"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_points_csv("", "p.csv"); }).find("empty points file"), std::string::npos);
  EXPECT_NE(error_of([] {
              parse_points_csv("kernel,level,intensity,performance,Performance\nk,L1,1,5,6\n", "p.csv");
            }).find("p.csv:1: two 'performance' columns"),
            std::string::npos);
  EXPECT_NE(error_of([] { read_points_csv("/nonexistent/points.csv"); }).find("no such file"), std::string::npos);
}

TEST(PointsFile, SplitsQuotedCsvRecords) {
  EXPECT_EQ(csv_text::split_csv_record(R"("a, b","c ""d""",,e)"),
            (std::vector<std::string>{"a, b", "c \"d\"", "", "e"}));
  EXPECT_EQ(csv_text::split_csv_record(""), (std::vector<std::string>{""}));
}

// ---- Nsight Compute: the raw page -------------------------------------------------------------
//
// tests/unit/fixtures/ncu_raw_v100.csv: ncu --csv --page raw on a V100, four launches of three
// kernels (daxpy twice), ncu's own lines and the program's output before the header, the units
// row under it, thousands separators, and scaled units (usecond, Ksector).

class NcuRaw : public ::testing::Test {
 protected:
  void SetUp() override { result = convert_ncu_csv(fixture("ncu_raw_v100.csv"), "ncu_raw_v100.csv"); }
  NcuConversion result;
};

TEST_F(NcuRaw, LaunchesOfOneKernelAreSummed) {
  // daxpy, per launch: 1,048,576 DFMA thread instructions (2 FLOPs each), 10 us, 131,072 warp
  // instructions; L1 524,288 + 262,144 sectors; L2 393.216 Ksector + 262,144; DRAM 262,144 +
  // 131,072. Two launches.
  const double flops = 2 * (2.0 * 1048576), seconds = 2 * 10e-6, inst = 2 * 131072.0;
  const double l1 = 2 * (524288.0 + 262144), l2 = 2 * (393216.0 + 262144), dram = 2 * (262144.0 + 131072);
  const auto& p = result.points;
  expect_rel(find(p, "daxpy_kernel", "L1", "flop").intensity, flops / (l1 * 32));
  expect_rel(find(p, "daxpy_kernel", "L1", "flop").intensity, 1.0 / 12);
  expect_rel(find(p, "daxpy_kernel", "L2", "flop").intensity, flops / (l2 * 32));
  expect_rel(find(p, "daxpy_kernel", "L2", "flop").intensity, 0.1);
  expect_rel(find(p, "daxpy_kernel", "HBM", "flop").intensity, flops / (dram * 32));
  expect_rel(find(p, "daxpy_kernel", "HBM", "flop").performance, flops / seconds / 1e9);
  expect_rel(find(p, "daxpy_kernel", "HBM", "flop").performance, 209.7152);
  // Instruction points: warp instructions per 32-byte transaction, warp GIPS.
  expect_rel(find(p, "daxpy_kernel", "L1", "instruction").intensity, inst / l1);
  expect_rel(find(p, "daxpy_kernel", "L2", "instruction").intensity, 0.2);
  expect_rel(find(p, "daxpy_kernel", "HBM", "instruction").intensity, 1.0 / 3);
  expect_rel(find(p, "daxpy_kernel", "HBM", "instruction").performance, 13.1072);
  // No shared-memory wavefronts: no shared points.
  EXPECT_FALSE(has(p, "daxpy_kernel", "shared", "flop"));
  EXPECT_FALSE(has(p, "daxpy_kernel", "shared", "instruction"));
}

TEST_F(NcuRaw, FlopsAddMulAndTwiceFmaSharedWavefrontsAnd128ByteTransactions) {
  // dgemm: 16,777,216 DADD + 2 x 1,073,741,824 DFMA in 2,500 us; 33,554,432 warp instructions;
  // L1 67,108,864 + 1,048,576 sectors; shared 8,388,608 + 1,048,576 wavefronts (128 B);
  // L2 4,194.304 Ksector + 1,048,576; DRAM 2,097,152 + 1,048,576.
  const double flops = 16777216.0 + 2 * 1073741824.0, seconds = 2500e-6, inst = 33554432.0;
  const double l1 = 67108864.0 + 1048576, shared = 8388608.0 + 1048576, l2 = 4194304.0 + 1048576,
               dram = 2097152.0 + 1048576;
  const std::string k = "dgemm_tile";  // the base name: no return type, template or argument list
  const auto& p = result.points;
  expect_rel(find(p, k, "L1", "flop").intensity, flops / (l1 * 32));
  expect_rel(find(p, k, "shared", "flop").intensity, flops / (shared * 128));
  expect_rel(find(p, k, "L2", "flop").intensity, flops / (l2 * 32));
  expect_rel(find(p, k, "L2", "flop").intensity, 12.9);
  expect_rel(find(p, k, "HBM", "flop").intensity, 21.5);
  expect_rel(find(p, k, "L1", "flop").performance, flops / seconds / 1e9);
  expect_rel(find(p, k, "shared", "instruction").intensity, inst / shared);
  expect_rel(find(p, k, "L2", "instruction").intensity, 6.4);
  expect_rel(find(p, k, "HBM", "instruction").performance, inst / seconds / 1e9);
}

TEST_F(NcuRaw, TensorInstructionsCountTheirFlops) {
  // 1,000,000 tensor-pipe instructions x 512 FLOPs in 500 us = 1024 GFLOP/s.
  const auto& p = find(result.points, "volta_h884gemm_128x128_ldg8_nn", "L2", "flop");
  expect_rel(p.performance, 1024);
  expect_rel(p.intensity, 512e6 / ((1048576.0 + 524288) * 32));
  bool noted = false;
  for (const std::string& n : result.notes) noted |= n.find("512 FLOPs") != std::string::npos;
  EXPECT_TRUE(noted);

  NcuOptions wmma;
  wmma.tensor_flops_per_instruction = 1024;
  const auto doubled = convert_ncu_csv(fixture("ncu_raw_v100.csv"), "f", wmma);
  expect_rel(find(doubled.points, "volta_h884gemm_128x128_ldg8_nn", "L2", "flop").performance, 2048);
}

TEST_F(NcuRaw, OrderAndCountOfPoints) {
  // 3 kernels; daxpy 3 levels x 2 kinds, dgemm and the tensor GEMM 4 levels x 2 kinds.
  ASSERT_EQ(result.points.size(), 6u + 8 + 8);
  EXPECT_EQ(result.points[0].kernel, "daxpy_kernel");
  EXPECT_EQ(result.points[0].level, "L1");
  EXPECT_EQ(result.points[0].kind, "flop");
  EXPECT_EQ(result.points[3].kind, "instruction");
  EXPECT_EQ(result.points[6].kernel, "dgemm_tile");
  // The written file reads back as the same points.
  const auto back = parse_points_csv(points_to_csv(result.points), "out.csv");
  ASSERT_EQ(back.size(), result.points.size());
  EXPECT_EQ(back[6].kernel, "dgemm_tile");
  expect_rel(back[6].intensity, result.points[6].intensity, 1e-7);
}

TEST_F(NcuRaw, OptionsNameTheDramLevelAndKeepFullNames) {
  NcuOptions o;
  o.dram_level = "GDDR6X";
  o.full_names = true;
  const auto r = convert_ncu_csv(fixture("ncu_raw_v100.csv"), "f", o);
  EXPECT_TRUE(has(r.points, "void daxpy_kernel(double, double const*, double*, int)", "GDDR6X", "flop"));
  EXPECT_FALSE(has(r.points, "daxpy_kernel", "HBM", "flop"));
}

// ---- Nsight Compute: other layouts and units ----------------------------------------------------

TEST(Ncu, DetailsPageWithCyclesForTime) {
  // --page details: one row per metric. No gpu__time_duration: time = cycles / (cycles/s).
  const std::string text =
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\","
      "\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"1\",\"app\",\"h\",\"void k(float*)\",\"1\",\"7\",\"Command line profiler metrics\","
      "\"sm__cycles_elapsed.avg\",\"cycle\",\"1,530,000\"\n"
      "\"0\",\"1\",\"app\",\"h\",\"void k(float*)\",\"1\",\"7\",\"Command line profiler metrics\","
      "\"sm__cycles_elapsed.avg.per_second\",\"cycle/usecond\",\"1,530.00\"\n"
      "\"0\",\"1\",\"app\",\"h\",\"void k(float*)\",\"1\",\"7\",\"Command line profiler metrics\","
      "\"sm__sass_thread_inst_executed_op_ffma_pred_on.sum\",\"inst\",\"3,000,000\"\n"
      "\"0\",\"1\",\"app\",\"h\",\"void k(float*)\",\"1\",\"7\",\"Command line profiler metrics\","
      "\"sm__sass_thread_inst_executed_op_fadd_pred_on.sum\",\"Minst\",\"1.5\"\n"
      "\"0\",\"1\",\"app\",\"h\",\"void k(float*)\",\"1\",\"7\",\"Command line profiler metrics\","
      "\"sm__sass_thread_inst_executed_op_fmul_pred_on.sum\",\"inst\",\"0\"\n"
      "\"0\",\"1\",\"app\",\"h\",\"void k(float*)\",\"1\",\"7\",\"Command line profiler metrics\","
      "\"dram__sectors_read.sum\",\"Ksector\",\"93.75\"\n"
      "\"0\",\"1\",\"app\",\"h\",\"void k(float*)\",\"1\",\"7\",\"Command line profiler metrics\","
      "\"dram__sectors_write.sum\",\"sector\",\"0\"\n";
  const NcuConversion r = convert_ncu_csv(text, "details.csv");
  // 1.53e6 cycles at 1.53e9 cycles/s = 1 ms; 2 x 3e6 + 1.5e6 FLOPs; 93,750 sectors = 3 MB.
  ASSERT_EQ(r.points.size(), 1u);  // sm__ FLOP names accepted; no instructions: no instruction point
  expect_rel(r.points[0].performance, 7.5e6 / 1e-3 / 1e9);
  expect_rel(r.points[0].intensity, 7.5e6 / (93750.0 * 32));
  EXPECT_EQ(r.points[0].kernel, "k");
  EXPECT_EQ(r.points[0].level, "HBM");
  bool noted = false;
  for (const std::string& n : r.notes) noted |= n.find("smsp__inst_executed.sum") != std::string::npos;
  EXPECT_TRUE(noted);
}

TEST(Ncu, KernelsWithoutTimeAreSkippedWithANote) {
  const std::string text =
      "\"ID\",\"Kernel Name\",\"smsp__inst_executed.sum\",\"dram__sectors_read.sum\",\"dram__sectors_write.sum\","
      "\"gpu__time_duration.sum\"\n"
      "\"\",\"\",\"inst\",\"sector\",\"sector\",\"nsecond\"\n"
      "\"0\",\"timed\",\"1,000\",\"500\",\"0\",\"2,000\"\n"
      "\"1\",\"untimed\",\"1,000\",\"500\",\"0\",\"\"\n";
  const NcuConversion r = convert_ncu_csv(text, "t.csv");
  ASSERT_EQ(r.points.size(), 1u);
  EXPECT_EQ(r.points[0].kernel, "timed");
  EXPECT_EQ(r.points[0].kind, "instruction");
  expect_rel(r.points[0].intensity, 2);
  expect_rel(r.points[0].performance, 1000 / 2e-6 / 1e9);
  bool noted = false;
  for (const std::string& n : r.notes) noted |= n.find("skipped kernel 'untimed': no time") != std::string::npos;
  EXPECT_TRUE(noted);
}

// What would put a point 1e3-1e9 off, or count a missing counter as 0, is an error naming it.
TEST(Ncu, UnitsAndCountersThatWouldMisleadAreErrors) {
  const std::string header =
      "\"ID\",\"Kernel Name\",\"smsp__inst_executed.sum\",\"dram__sectors_read.sum\",\"dram__sectors_write.sum\","
      "\"gpu__time_duration.sum\"\n";
  auto with = [&](const std::string& units, const std::string& row) {
    return error_of([&] { convert_ncu_csv(header + units + row, "n.csv"); });
  };
  const std::string units = "\"\",\"\",\"inst\",\"sector\",\"sector\",\"usecond\"\n";
  // The valid export, for reference: no error.
  EXPECT_EQ(with(units, "\"0\",\"k\",\"1,000\",\"500\",\"100\",\"2\"\n"), "(no InputError)");
  const std::string no_units = with("", "\"0\",\"k\",\"1,000\",\"500\",\"100\",\"2\"\n");
  EXPECT_NE(no_units.find("n.csv: no units row under the header"), std::string::npos) << no_units;
  const std::string unknown =
      with("\"\",\"\",\"inst\",\"furlong\",\"sector\",\"usecond\"\n", "\"0\",\"k\",\"1,000\",\"500\",\"100\",\"2\"\n");
  EXPECT_NE(unknown.find("column 'dram__sectors_read.sum' has unit 'furlong'"), std::string::npos) << unknown;
  const std::string negative = with(units, "\"0\",\"k\",\"1,000\",\"-500\",\"100\",\"2\"\n");
  EXPECT_NE(negative.find("line 3, column 'dram__sectors_read.sum': negative value -500"), std::string::npos)
      << negative;
  const std::string half = with(units, "\"0\",\"k\",\"1,000\",\"500\",\"n/a\",\"2\"\n");
  EXPECT_NE(half.find("metric 'dram__sectors_write.sum' is missing while 'dram__sectors_read.sum' is there"),
            std::string::npos)
      << half;
}

// A counter missing in one launch of a kernel (n/a, empty), or one of a precision's add, mul and
// fma not collected, would be summed as 0 and put the kernel's point 100x low (a DGEMM's
// DFMA): that kind of point is skipped with a note naming the counter, the other kinds stay.
TEST(Ncu, AKernelsTotalsAreWholeOrItsPointIsSkipped) {
  const std::string dfma_column = "\"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum\",";
  const std::string header =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"smsp__inst_executed.sum\","
      "\"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum\"," +
      dfma_column +
      "\"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum\",\"dram__sectors_read.sum\",\"dram__sectors_write.sum\"\n"
      "\"\",\"\",\"usecond\",\"inst\",\"inst\",\"inst\",\"inst\",\"sector\",\"sector\"\n";
  struct Launch {
    std::string inst = "500", dfma = "1,000,000", read = "400", write = "100";
  };
  const auto row = [](int id, const Launch& l) {
    return "\"" + std::to_string(id) + "\",\"dgemm\",\"10\",\"" + l.inst + "\",\"1,000\",\"" + l.dfma +
           "\",\"1,000\",\"" + l.read + "\",\"" + l.write + "\"\n";
  };
  const auto convert = [&](const Launch& first, const Launch& second) {
    return convert_ncu_csv(header + row(0, first) + row(1, second), "k.csv");
  };
  const auto kinds = [](const NcuConversion& r) {
    std::set<std::string> out;
    for (const KernelPoint& p : r.points) out.insert(p.kind + "@" + p.level);
    return out;
  };
  const auto has_note = [](const NcuConversion& r, const std::string& text) {
    return std::any_of(r.notes.begin(), r.notes.end(), [&](const std::string& n) { return n.find(text) != n.npos; });
  };
  const std::set<std::string> instruction_only = {"instruction@HBM"};
  EXPECT_EQ(kinds(convert({}, {})), (std::set<std::string>{"flop@HBM", "instruction@HBM"}));
  for (const std::string gap : {"n/a", ""}) {
    const NcuConversion r = convert({}, {.dfma = gap});
    EXPECT_EQ(kinds(r), instruction_only) << "dfma '" << gap << "'";
    EXPECT_TRUE(has_note(r,
                         "skipped kernel 'dgemm' FLOP points: 'smsp__sass_thread_inst_executed_op_dfma_pred_on.sum' "
                         "is missing (n/a, empty or not collected) where"))
        << gap;
  }
  const NcuConversion inst = convert({.inst = ""}, {});
  EXPECT_EQ(kinds(inst), (std::set<std::string>{"flop@HBM"}));
  EXPECT_TRUE(
      has_note(inst, "skipped kernel 'dgemm' instruction points: 'smsp__inst_executed.sum' in 1 of its 2 launches"));
  // Its only level's traffic in one launch: no point at all, and the error says why.
  const std::string traffic = error_of([&] { convert({.read = "n/a", .write = "n/a"}, {}); });
  EXPECT_NE(traffic.find("skipped kernel 'dgemm' HBM points: 'dram__sectors_read.sum' in 1 of its 2 launches"),
            std::string::npos)
      << traffic;
  // One of a level's four L2 counters n/a in one launch (its atomics): not counted as 0 either.
  const std::string l2 =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"smsp__inst_executed.sum\",\"lts__t_sectors_op_read.sum\","
      "\"lts__t_sectors_op_write.sum\",\"lts__t_sectors_op_atom.sum\",\"lts__t_sectors_op_red.sum\"\n"
      "\"\",\"\",\"usecond\",\"inst\",\"sector\",\"sector\",\"sector\",\"sector\"\n"
      "\"0\",\"hist\",\"10\",\"500\",\"400\",\"100\",\"5,000\",\"0\"\n"
      "\"1\",\"hist\",\"10\",\"500\",\"400\",\"100\",\"n/a\",\"0\"\n";
  const std::string atom = error_of([&] { convert_ncu_csv(l2, "l2.csv"); });
  EXPECT_NE(atom.find("skipped kernel 'hist' L2 points: 'lts__t_sectors_op_atom.sum' in 1 of its 2 launches"),
            std::string::npos)
      << atom;
  // The DFMA column not collected at all: every launch lacks it.
  std::string no_dfma = header + row(0, {}) + row(1, {});
  no_dfma.erase(no_dfma.find(dfma_column), dfma_column.size());
  for (std::size_t at; (at = no_dfma.find("\"1,000,000\",")) != std::string::npos;) no_dfma.erase(at, 12);
  no_dfma.erase(no_dfma.find("\"inst\","), 7);  // its unit
  const NcuConversion dropped = convert_ncu_csv(no_dfma, "d.csv");
  EXPECT_EQ(kinds(dropped), instruction_only);
  // Counts whose sum overflows a double give no point, not "inf".
  const NcuConversion huge = convert({.dfma = "1e308"}, {.dfma = "1e308"});
  EXPECT_EQ(kinds(huge), instruction_only);
  EXPECT_TRUE(has_note(huge, "skipped kernel 'dgemm' flop point at HBM: its counts overflow a double"));
}

// NERSC's metric list counts bytes, not sectors: L1, L2 and HBM points from l1tex__t_bytes,
// lts__t_bytes and dram__bytes, in ncu's scaled byte units.
TEST(Ncu, ByteMetricsGiveL1L2AndHbmPoints) {
  const std::string text =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"sm__sass_thread_inst_executed_op_dadd_pred_on.sum\","
      "\"sm__sass_thread_inst_executed_op_dfma_pred_on.sum\",\"sm__sass_thread_inst_executed_op_dmul_pred_on.sum\","
      "\"l1tex__t_bytes.sum\",\"lts__t_bytes.sum\",\"dram__bytes.sum\"\n"
      "\"\",\"\",\"usecond\",\"inst\",\"inst\",\"inst\",\"Mbyte\",\"Kbyte\",\"byte\"\n"
      "\"0\",\"void stencil(double*)\",\"10\",\"0\",\"5,000,000\",\"0\",\"80\",\"40,000\",\"20,000,000\"\n"
      "\"1\",\"void stencil(double*)\",\"10\",\"0\",\"5,000,000\",\"0\",\"80\",\"40,000\",\"20,000,000\"\n";
  const NcuConversion r = convert_ncu_csv(text, "bytes.csv");
  std::map<std::string, KernelPoint> by_level;
  for (const KernelPoint& p : r.points) by_level[p.level] = p;
  ASSERT_EQ(by_level.size(), 3u);
  // 2 launches x 1e7 FLOPs in 20 us; 160 MB at L1, 80 MB at L2, 40 MB at HBM.
  expect_rel(by_level["L1"].intensity, 2e7 / 160e6);
  expect_rel(by_level["L2"].intensity, 2e7 / 80e6);
  expect_rel(by_level["HBM"].intensity, 2e7 / 40e6);
  expect_rel(by_level["HBM"].performance, 2e7 / 20e-6 / 1e9);
  EXPECT_EQ(by_level["L1"].kernel, "stencil");
  // Only byte metrics, no FLOPs or instructions: nothing to plot, and the error says so.
  const std::string bytes_only =
      "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\",\"dram__bytes.sum\"\n\"\",\"\",\"usecond\",\"byte\"\n"
      "\"0\",\"k\",\"10\",\"100\"\n";
  EXPECT_NE(error_of([&] { convert_ncu_csv(bytes_only, "b.csv"); }).find("no FLOP metrics"), std::string::npos);
}

// Nsight Compute's roofline sections give rates (.per_second, .per_cycle_elapsed): with the
// duration they are counts again, and the same points come out.
TEST(Ncu, RooflineSectionRatesAreRead) {
  const std::string text =
      "\"ID\",\"Kernel Name\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"k\",\"GPU Speed Of Light Roofline Chart\",\"gpu__time_duration.sum\",\"msecond\",\"2\"\n"
      "\"0\",\"k\",\"GPU Speed Of Light Roofline "
      "Chart\",\"sm__cycles_elapsed.avg.per_second\",\"cycle/nsecond\",\"1.5\"\n"
      "\"0\",\"k\",\"GPU Speed Of Light Roofline Chart\","
      "\"sm__sass_thread_inst_executed_op_dfma_pred_on.sum.per_cycle_elapsed\",\"inst/cycle\",\"1,000\"\n"
      "\"0\",\"k\",\"GPU Speed Of Light Roofline Chart\","
      "\"sm__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed\",\"inst/cycle\",\"0\"\n"
      "\"0\",\"k\",\"GPU Speed Of Light Roofline Chart\","
      "\"sm__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed\",\"inst/cycle\",\"0\"\n"
      "\"0\",\"k\",\"GPU Speed Of Light Roofline Chart\",\"dram__bytes.sum.per_second\",\"Tbyte/second\",\"1.5\"\n";
  const NcuConversion r = convert_ncu_csv(text, "sol.csv");
  ASSERT_EQ(r.points.size(), 1u);
  // 2 ms x 1.5e9 cycles/s = 3e6 cycles x 1000 DFMA/cycle x 2 = 6e9 FLOPs; 1.5e12 B/s x 2 ms = 3e9 B.
  expect_rel(r.points[0].performance, 6e9 / 2e-3 / 1e9);
  expect_rel(r.points[0].intensity, 6e9 / 3e9);
  EXPECT_EQ(r.points[0].level, "HBM");
}

TEST(Ncu, LocaleFormattedNumbersAreRefusedWithAdvice) {
  const std::string header =
      "\"ID\",\"Kernel Name\",\"smsp__inst_executed.sum\",\"dram__sectors_read.sum\",\"dram__sectors_write.sum\","
      "\"gpu__time_duration.sum\"\n\"\",\"\",\"inst\",\"sector\",\"sector\",\"usecond\"\n";
  for (const char* value : {"27.595.520", "1.234,5", "0,5", "27 595 520"}) {
    const std::string e =
        error_of([&] { convert_ncu_csv(header + "\"0\",\"k\",\"" + value + "\",\"500\",\"100\",\"2\"\n", "l.csv"); });
    EXPECT_NE(e.find("LC_ALL=C"), std::string::npos) << value << ": " << e;
    EXPECT_NE(e.find(value), std::string::npos) << e;
  }
  // C-locale numbers with thousands separators and exponents are read.
  EXPECT_EQ(error_of([&] { convert_ncu_csv(header + "\"0\",\"k\",\"1,234,567.5\",\"5e2\",\"100\",\"2\"\n", "c.csv"); }),
            "(no InputError)");
}

TEST(Ncu, InputThatIsNotAnExportIsAnError) {
  EXPECT_NE(error_of([] { convert_ncu_csv("kernel,level\nk,L1\n", "x.csv"); }).find("not an Nsight Compute CSV"),
            std::string::npos);
  EXPECT_NE(error_of([] { convert_ncu_csv("\"ID\",\"Kernel Name\"\n", "x.csv"); }).find("no kernel launches"),
            std::string::npos);
  // Launches but none of the counters: nothing to convert.
  EXPECT_NE(error_of([] {
              convert_ncu_csv(
                  "\"ID\",\"Kernel Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"usecond\"\n\"0\",\"k\",\"5\"\n",
                  "x.csv");
            }).find("no kernel points"),
            std::string::npos);
  NcuOptions bad;
  bad.tensor_flops_per_instruction = -1;
  EXPECT_THROW(convert_ncu_csv(fixture("ncu_raw_v100.csv"), "f", bad), InputError);
}

}  // namespace
}  // namespace roofprobe
