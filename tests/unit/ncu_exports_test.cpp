// Nsight Compute exports in the shape ncu writes them (tests/unit/fixtures/ncu/README.md): the
// three recipes give each GEMM 2*M*N*K over its duration, what would mislead is refused with one
// line naming the row or column, and kernels are shown by numbered base names.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <string>

#include "driver/model/csv_text.hpp"
#include "driver/model/errors.hpp"
#include "driver/report/ncu_metrics.hpp"
#include "driver/report/ncu_tensor.hpp"
#include "driver/report/points.hpp"

namespace roofprobe {
namespace {

std::string read_text(const std::string& relative) {
  std::ifstream in(std::string(ROOFPROBE_SOURCE_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string fixture(const std::string& name) { return read_text("tests/unit/fixtures/ncu/" + name); }

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

const KernelPoint* find(const NcuConversion& r, const std::string& kernel, const std::string& level,
                        const std::string& kind) {
  for (const KernelPoint& p : r.points)
    if (p.kernel == kernel && p.level == level && p.kind == kind) return &p;
  return nullptr;
}

bool noted(const NcuConversion& r, const std::string& a, const std::string& b = "") {
  for (const std::string& n : r.notes)
    if (n.find(a) != std::string::npos && n.find(b) != std::string::npos) return true;
  return false;
}

constexpr double kGemm = 2.0 * 4096 * 4096 * 4096;
constexpr double kDgemm = 2.0 * 2048 * 2048 * 2048;
constexpr double kElems = 1 << 26;

struct Gemm {
  const char* kernel;
  double flops, seconds;
};
const std::vector<Gemm>& gemms() {
  static const std::vector<Gemm> g = {
      {"sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
       "cublas",
       kGemm, 345'600e-9},
      {"nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTN", kGemm, 201'344e-9},
      {"sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       kGemm, 203'488e-9},
      {"sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x256x128_warpgroupsize2x1x1_execute_segment_k_off_kernel__"
       "5x_cublas",
       kGemm, 109'376e-9},
      {"sm90_xmma_gemm_s8s8_s32s32_s32_tn_n_tilesize128x256x128_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_"
       "cublas",
       kGemm, 118'016e-9},
      {"sm90_xmma_gemm_f64f64_f64f64_f64_nt_n_tilesize128x128x16_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_"
       "cublas",
       kDgemm, 289'120e-9},
  };
  return g;
}

// Every GEMM's FLOP/s is 2*M*N*K over its duration, within 1% (the epilogue adds 0.02%), at
// every level it has traffic at.
void expect_gemm_rates(const NcuConversion& r) {
  for (const Gemm& g : gemms()) {
    const KernelPoint* p = find(r, g.kernel, "HBM", "flop");
    ASSERT_NE(p, nullptr) << g.kernel;
    const double want = g.flops / g.seconds / 1e9;
    EXPECT_NEAR(p->performance, want, 0.01 * want) << g.kernel;
    EXPECT_GE(p->performance, want) << g.kernel;  // never below the tensor work alone
    ASSERT_NE(find(r, g.kernel, "L2", "flop"), nullptr) << g.kernel;
  }
}

// c = a + b over 2^26 floats: 2^26 FLOPs, 12 bytes per element from HBM.
void expect_elementwise_and_reduction(const NcuConversion& r) {
  const KernelPoint* add = find(r, "vectorized_elementwise_kernel", "HBM", "flop");
  ASSERT_NE(add, nullptr);
  EXPECT_NEAR(add->intensity, 1.0 / 12, 1e-12);
  EXPECT_NEAR(add->performance, kElems / 188'992e-9 / 1e9, 1e-9);
  const KernelPoint* sum = find(r, "reduce_kernel", "HBM", "flop");
  ASSERT_NE(sum, nullptr);
  EXPECT_NEAR(sum->intensity, (kElems + 4096) / (4 * kElems + 2048), 1e-12);
  EXPECT_NEAR(sum->performance, (kElems + 4096) / 64'416e-9 / 1e9, 1e-9);
}

TEST(NcuExports, ArchitectureRecipeGivesEveryGemmItsFlops) {
  const NcuConversion r = convert_ncu_csv(fixture("h200_arch_recipe.csv"), "h200_arch_recipe.csv");
  expect_gemm_rates(r);
  expect_elementwise_and_reduction(r);
  EXPECT_NE(find(r, "nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTN", "HBM", "instruction"), nullptr);
  EXPECT_TRUE(noted(r, "tensor-path op counters", "2*M*N*K"));
}

TEST(NcuExports, SetRooflineGivesFlopPointsWithoutInstructionCounts) {
  // Totals and their per-instruction parts side by side: a sum of all would double every GEMM.
  const NcuConversion r = convert_ncu_csv(fixture("h200_set_roofline.csv"), "h200_set_roofline.csv");
  expect_gemm_rates(r);
  expect_elementwise_and_reduction(r);
  for (const KernelPoint& p : r.points) EXPECT_EQ(p.kind, "flop") << p.kernel;
  EXPECT_TRUE(noted(r, "no smsp__inst_executed.sum"));
}

TEST(NcuExports, SetRooflineRatesAloneGiveTheSameFlops) {
  // The counts removed: the .per_cycle_elapsed and .per_second rates with the duration and the
  // clocks give them back (within the two decimals ncu prints).
  std::string text = fixture("h200_set_roofline.csv");
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::size_t header = 0;  // after the ==PROF== lines and the program's output
  while (header < lines.size() && lines[header].rfind("\"ID\"", 0) != 0) ++header;
  ASSERT_LT(header, lines.size());
  const std::regex count(R"((sm__ops_path_tensor_[a-z0-9_]+|smsp__sass_thread_inst_executed_op_[a-z]+_pred_on)\.sum)");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = header; i < lines.size(); ++i) rows.push_back(csv_text::split_csv_record(lines[i]));
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (std::regex_match(rows[0][c], count)) continue;
      line += (line.empty() ? "\"" : ",\"") + row[c] + "\"";
    }
    out += line + "\n";
  }
  const NcuConversion r = convert_ncu_csv(out, "rates.csv");
  for (const Gemm& g : gemms()) {
    const KernelPoint* p = find(r, g.kernel, "HBM", "flop");
    ASSERT_NE(p, nullptr) << g.kernel;
    const double want = g.flops / g.seconds / 1e9;
    EXPECT_NEAR(p->performance, want, 0.01 * want) << g.kernel;
  }
}

TEST(NcuExports, ReadmeRecipeOnHopperGivesGemmsNoFlopPoint) {
  // Tensor-pipe instructions on CC 9.0 have many shapes: no FLOP point, a note, and the
  // instruction points stand. The scalar kernels get their FLOP points.
  const NcuConversion r = convert_ncu_csv(fixture("h200_readme_recipe.csv"), "h200_readme_recipe.csv");
  for (const Gemm& g : gemms()) {
    EXPECT_EQ(find(r, g.kernel, "HBM", "flop"), nullptr) << g.kernel;
    EXPECT_NE(find(r, g.kernel, "HBM", "instruction"), nullptr) << g.kernel;
    EXPECT_TRUE(noted(r, std::string("kernel '") + g.kernel + "'", "pipe@9.0")) << g.kernel;
  }
  expect_elementwise_and_reduction(r);
}

TEST(NcuExports, KernelsAreShownByNumberedBaseNames) {
  const NcuConversion r = convert_ncu_csv(fixture("h200_arch_recipe.csv"), "a.csv");
  EXPECT_NE(find(r, "distribution_elementwise_grid_stride_kernel #1", "HBM", "flop"), nullptr);
  EXPECT_NE(find(r, "distribution_elementwise_grid_stride_kernel #2", "HBM", "flop"), nullptr);
  // #1 is the float instance (launched first): half the bytes of the double one.
  EXPECT_GT(find(r, "distribution_elementwise_grid_stride_kernel #1", "HBM", "flop")->intensity,
            find(r, "distribution_elementwise_grid_stride_kernel #2", "HBM", "flop")->intensity);
  NcuOptions whole;
  whole.full_names = true;
  const NcuConversion full = convert_ncu_csv(fixture("h200_arch_recipe.csv"), "a.csv", whole);
  bool long_name = false;
  for (const KernelPoint& p : full.points)
    long_name |=
        p.kernel.rfind("void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, 4,", 0) == 0;
  EXPECT_TRUE(long_name);

  EXPECT_EQ(kernel_base_name("void at::native::<unnamed>::distribution_elementwise_grid_stride_kernel<float, 4, "
                             "at::native::<unnamed>::k<(int)2>>(long, at::PhiloxCudaState, T3, T4)"),
            "distribution_elementwise_grid_stride_kernel");
  EXPECT_EQ(kernel_base_name("void at::native::(anonymous namespace)::fill<float>(float*)"), "fill");
  EXPECT_EQ(kernel_base_name("void daxpy_kernel(double, double const*, double*, int)"), "daxpy_kernel");
  EXPECT_EQ(kernel_base_name("cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_32x6_nn_align4>(T1::Params)"),
            "Kernel2");
  EXPECT_EQ(kernel_base_name("ampere_sgemm_128x64_nn"), "ampere_sgemm_128x64_nn");
  EXPECT_EQ(kernel_base_name("  k  "), "k");
}

// ---- what would mislead is refused, with the row or column --------------------------------------

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

// Each line of the table gets one more column (header, units, each launch).
std::string with_column(const std::string& text, const std::string& name, const std::string& unit,
                        const std::string& value) {
  std::istringstream in(text);
  std::string out;
  bool header = false, units = false;
  for (std::string line; std::getline(in, line);) {
    if (!header && line.rfind("\"ID\"", 0) == 0) {
      header = true;
      line += ",\"" + name + "\"";
    } else if (header && !units) {
      units = true;
      line += ",\"" + unit + "\"";
    } else if (header) {
      line += ",\"" + value + "\"";
    }
    out += line + "\n";
  }
  return out;
}

TEST(NcuExports, ColumnsNotReadMayHoldAnything) {
  // 127.0.0.1, 'cluster', 'register/thread' are in the fixture already; a column with a unit
  // roofprobe does not know and a value in no locale is ignored when nothing reads it.
  const std::string text = with_column(fixture("h200_arch_recipe.csv"), "launch__foo", "furlong", "1.234,5");
  EXPECT_EQ(error_of([&] { convert_ncu_csv(text, "x.csv"); }), "(no InputError)");
}

TEST(NcuExports, RefusalsNameTheRowOrColumn) {
  const std::string arch = fixture("h200_arch_recipe.csv");
  const auto refused = [](const std::string& text) { return error_of([&] { convert_ncu_csv(text, "e.csv"); }); };

  // A torn last line: the export was cut short.
  const std::size_t mid_last_line = arch.rfind("\",\"", arch.size() - 100);  // a field boundary in the last launch
  std::string torn = arch.substr(0, mid_last_line + 3);                      // ends inside an opened field
  std::string e = refused(torn);
  EXPECT_NE(e.find("e.csv:"), std::string::npos) << e;
  EXPECT_NE(e.find("torn row"), std::string::npos) << e;
  EXPECT_NE(e.find("quote that does not close"), std::string::npos) << e;
  // Cut at a field boundary: too few fields.
  torn = arch.substr(0, mid_last_line + 1) + "\n";
  e = refused(torn);
  EXPECT_NE(e.find("torn row"), std::string::npos) << e;
  EXPECT_NE(e.find("of the header's 47 fields"), std::string::npos) << e;

  // inf, nan and negative counters.
  e = refused(replaced(arch, "\"137,438,953,472\"", "\"inf\""));
  EXPECT_NE(e.find("column 'sm__ops_path_tensor_src_tf32_dst_fp32.sum': 'inf' is not a finite number"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("line 23,"), std::string::npos) << e;  // the first launch: after 20 lines of text and 2 of header
  e = refused(replaced(arch, "\"345,600\"", "\"nan\""));
  EXPECT_NE(e.find("column 'gpu__time_duration.sum': 'nan' is not a finite number"), std::string::npos) << e;
  e = refused(replaced(arch, "\"345,600\"", "\"-345,600\""));
  EXPECT_NE(e.find("column 'gpu__time_duration.sum': negative value"), std::string::npos) << e;

  // A column read that appears twice: which one holds the counter cannot be told.
  e = refused(with_column(arch, "dram__bytes.sum", "byte", "1"));
  EXPECT_NE(e.find("column 'dram__bytes.sum' appears twice in the header"), std::string::npos) << e;

  // A rate unit on a .sum count, a count on a rate, a count for a duration.
  const std::string units_row_dram = "\"byte\",\"ns\"";  // dram__bytes.sum, gpu__time_duration.sum
  ASSERT_NE(arch.find(units_row_dram), std::string::npos);
  e = refused(replaced(arch, units_row_dram, "\"byte/s\",\"ns\""));
  EXPECT_NE(e.find("column 'dram__bytes.sum' has unit 'byte/s', a rate or a time, but a .sum column counts"),
            std::string::npos)
      << e;
  e = refused(replaced(arch, units_row_dram, "\"byte\",\"inst\""));
  EXPECT_NE(e.find("column 'gpu__time_duration.sum' has unit 'inst', not a time"), std::string::npos) << e;
  e = refused(with_column(fixture("h200_set_roofline.csv"), "lts__t_sectors_op_read.sum.per_second", "sector", "1"));
  EXPECT_NE(e.find("not a rate per second"), std::string::npos) << e;
  // A unit no one knows on a column read.
  e = refused(replaced(arch, units_row_dram, "\"furlong\",\"ns\""));
  EXPECT_NE(e.find("column 'dram__bytes.sum' has unit 'furlong'"), std::string::npos) << e;

  // Text that is no number is not a counter left out ("n/a" or empty): it is refused, named.
  for (const char* value : {"abc", "(!) 137", "137 sector"}) {
    e = refused(replaced(arch, "\"137,438,953,472\"", std::string("\"") + value + "\""));
    EXPECT_NE(e.find("line 23, column 'sm__ops_path_tensor_src_tf32_dst_fp32.sum': '" + std::string(value) +
                     "' is not a number"),
              std::string::npos)
        << e;
  }
  // --print-metric-instances values: one value per instance, not the total.
  e = refused(replaced(arch, "\"137,438,953,472\"", "\"68,719,476,736;68,719,476,736\""));
  EXPECT_NE(e.find("holds one value per instance: export without --print-metric-instances"), std::string::npos) << e;
  // A CC cell without a value: the tensor FLOPs per instruction depend on it.
  const std::size_t first_launch = arch.find("\"9.0\"");
  ASSERT_NE(first_launch, std::string::npos);
  for (const char* value : {"\"\"", "\"n/a\""}) {
    e = refused(arch.substr(0, first_launch) + value + arch.substr(first_launch + 5));
    EXPECT_NE(e.find("column 'CC': no compute capability"), std::string::npos) << e;
  }

  // Numbers written in another locale, on a column read.
  for (const char* value : {"137.438.953.472", "137 438 953 472"}) {
    e = refused(replaced(arch, "137,438,953,472", value));
    EXPECT_NE(e.find("LC_ALL=C"), std::string::npos) << e;
    EXPECT_NE(e.find("line 23, column 'sm__ops_path_tensor_src_tf32_dst_fp32.sum': value"), std::string::npos) << e;
  }
}

// Two exports appended to one file (`ncu ... >> all.csv`), each with its ==PROF== lines, its
// program's output, its header and its units: every table is read with its own columns and units,
// and a kernel's launches are summed across them, so its rate and intensity stay its own.
TEST(NcuExports, TablesAppendedToOneFileAreReadEachWithItsOwnColumns) {
  const std::string both = fixture("h200_arch_recipe.csv") + fixture("h200_arch_recipe.csv");
  const NcuConversion r = convert_ncu_csv(both, "both.csv");
  expect_gemm_rates(r);
  expect_elementwise_and_reduction(r);
  EXPECT_TRUE(noted(r, "both.csv holds 2 tables (headers at lines ", "read as one"));
  // Tables of other columns (the counters of --set roofline after a --metrics export): a counter
  // one table has and the other lacks is in part of a kernel's launches, so the points made from
  // it are left out and named, never computed from half the launches.
  const std::string mixed = error_of(
      [&] { convert_ncu_csv(fixture("h200_arch_recipe.csv") + fixture("h200_set_roofline.csv"), "mixed.csv"); });
  EXPECT_NE(mixed.find("mixed.csv: no kernel points could be computed (skipped kernel '"), std::string::npos) << mixed;
  EXPECT_NE(mixed.find(" in 1 of its 2 launches)"), std::string::npos) << mixed;
  // A row cut short in the first table is still a torn row, though another table follows it.
  const std::string first = fixture("h200_arch_recipe.csv");
  const std::size_t last_row = first.rfind("\n\"", first.size() - 2);
  ASSERT_NE(last_row, std::string::npos);
  const std::string torn = first.substr(0, last_row + 40) + "\n" + fixture("h200_set_roofline.csv");
  const std::string e = error_of([&] { convert_ncu_csv(torn, "torn.csv"); });
  EXPECT_NE(e.find("torn row"), std::string::npos) << e;
}

TEST(NcuExports, DetailsPageOfSectionsIsRefused) {
  // --set roofline --page details: SOL percentages and Duration, no counter.
  const std::string details =
      "==PROF== Disconnected from process 1\n"
      "\"ID\",\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Context\",\"Stream\",\"Block "
      "Size\",\"Grid Size\",\"Device\",\"CC\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
      "\"0\",\"1\",\"python3\",\"127.0.0.1\",\"nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTN\",\"1\",\"7\",\"(384, 1, "
      "1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"GPU Speed Of Light Throughput\",\"Duration\",\"us\",\"201.34\"\n"
      "\"0\",\"1\",\"python3\",\"127.0.0.1\",\"nvjet_hsh_256x128_64x4_1x2_h_bz_coopA_NTN\",\"1\",\"7\",\"(384, 1, "
      "1)\",\"(132, 1, 1)\",\"0\",\"9.0\",\"GPU Speed Of Light Throughput\",\"Compute (SM) Throughput\",\"%\","
      "\"71.52\"\n";
  const std::string e = error_of([&] { convert_ncu_csv(details, "d.csv"); });
  EXPECT_NE(e.find("d.csv: a --page details export of sections holds no counters"), std::string::npos) << e;
  EXPECT_NE(e.find("--page raw"), std::string::npos) << e;
}

// ---- the metric lists --------------------------------------------------------------------------

TEST(NcuMetrics, ListsTheTensorTotalsOfEachArchitecture) {
  const auto has = [](const std::string& list, const std::string& name) {
    return ("," + list + ",").find("," + name + ",") != std::string::npos;
  };
  const std::string hopper = ncu_metrics_for(9.0);
  EXPECT_EQ(hopper.rfind(kNcuMetrics, 0), 0u);
  for (const char* t : {"fp16", "bf16_dst_fp32", "tf32_dst_fp32", "fp8", "int8", "fp64"})
    EXPECT_TRUE(has(hopper, std::string("sm__ops_path_tensor_src_") + t + ".sum")) << t;
  EXPECT_FALSE(has(hopper, "sm__ops_path_tensor_src_fp16_dst_fp32.sum"));  // gh100 has none
  EXPECT_EQ(ncu_metrics_for(7.0).find("sm__ops_path_tensor"), std::string::npos);
  EXPECT_EQ(ncu_metrics_for(7.5).find("sm__ops_path_tensor"), std::string::npos);
  EXPECT_TRUE(has(ncu_metrics_for(8.0), "sm__ops_path_tensor_src_fp64.sum"));
  EXPECT_FALSE(has(ncu_metrics_for(8.6), "sm__ops_path_tensor_src_fp64.sum"));
  EXPECT_TRUE(has(ncu_metrics_for(8.9), "sm__ops_path_tensor_src_fp8.sum"));
  EXPECT_TRUE(has(ncu_metrics_for(10.0), "sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum"));
  EXPECT_TRUE(has(ncu_metrics_for(12.0), "sm__ops_path_tensor_src_bf16_dst_fp32.sum"));
  EXPECT_FALSE(has(ncu_metrics_for(12.0), "sm__ops_path_tensor_src_fp64.sum"));
  const std::string all = ncu_metrics_for(std::nullopt);
  for (double cc : {7.0, 8.0, 8.9, 9.0, 10.0}) {
    std::istringstream names(ncu_metrics_for(cc));
    for (std::string name; std::getline(names, name, ',');) EXPECT_TRUE(has(all, name)) << name;
  }

  EXPECT_EQ(parse_compute_capability("sm_90"), 9.0);
  EXPECT_EQ(parse_compute_capability("sm_90a"), 9.0);
  EXPECT_EQ(parse_compute_capability("9.0"), 9.0);
  EXPECT_EQ(parse_compute_capability("89"), 8.9);
  EXPECT_EQ(parse_compute_capability("sm_120"), 12.0);
  EXPECT_EQ(parse_compute_capability("compute_100"), 10.0);
  EXPECT_FALSE(parse_compute_capability("hopper"));
  EXPECT_FALSE(parse_compute_capability(""));
  EXPECT_FALSE(parse_compute_capability("0.0"));  // no GPU has major version 0
  EXPECT_FALSE(parse_compute_capability("sm_00"));
  EXPECT_EQ(parse_compute_capability("5.0"), 5.0);  // a GPU, but not one ncu profiles: points says so
}

TEST(NcuMetrics, TheArchitectureFixtureHoldsEveryMetricOfItsRecipe) {
  const std::string header = fixture("h200_arch_recipe.csv");
  std::istringstream names(ncu_metrics_for(9.0));
  for (std::string name; std::getline(names, name, ',');)
    EXPECT_NE(header.find("\"" + name + "\""), std::string::npos) << name;
}

// docs/NCU.md shows the Hopper command: exactly the list `points --ncu-metrics --arch sm_90` prints.
TEST(NcuMetrics, TheDocumentedCommandIsTheHopperList) {
  std::istringstream doc(read_text("docs/NCU.md"));
  std::string line, command;
  bool inside = false;
  while (std::getline(doc, line)) {
    if (!inside && line.rfind("LC_ALL=C ncu --csv --page raw --metrics gpu__", 0) == 0) inside = true;
    if (!inside) continue;
    const bool continued = !line.empty() && line.back() == '\\';
    command += continued ? line.substr(0, line.size() - 1) : line;
    if (!continued) break;
  }
  ASSERT_FALSE(command.empty()) << "docs/NCU.md has no ncu command";
  std::istringstream words(command);
  std::string word, metrics;
  while (words >> word)
    if (word == "--metrics") words >> metrics;
  EXPECT_EQ(metrics, ncu_metrics_for(9.0));
}

// ---- tensor totals and parts -----------------------------------------------------------------

TEST(NcuTensorTotals, GroupedSourcesHoldTheirMembers) {
  // Blackwell's grouped low-precision path beside per-type parts: the group alone.
  std::map<std::string, double> c = {{"sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum", 1000},
                                     {"sm__ops_path_tensor_src_fp4_dst_fp32.sum", 300},
                                     {"sm__ops_path_tensor_src_fp8_dst_fp32.sum", 700},
                                     {"sm__ops_path_tensor_op_utcqmma_src_fp4_fp6_fp8_dst_fp32.sum", 1000},
                                     {"sm__ops_path_tensor_src_bf16_dst_fp32.sum", 50}};
  EXPECT_DOUBLE_EQ(tensor_work(c, 0).flops, 1050);
  // Two totals that overlap, neither holding the other: no figure, both named.
  c = {{"sm__ops_path_tensor_src_fp8.sum", 700}, {"sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum", 1000}};
  const TensorWork w = tensor_work(c, 0);
  EXPECT_TRUE(w.counted.empty());
  EXPECT_NE(w.uncounted.find("sm__ops_path_tensor_src_fp8.sum"), std::string::npos) << w.uncounted;
  EXPECT_NE(w.uncounted.find("sm__ops_path_tensor_src_fp4_fp6_fp8_dst_fp32.sum"), std::string::npos) << w.uncounted;
  // ... unless one of them is 0: it holds no ops.
  c["sm__ops_path_tensor_src_fp8.sum"] = 0;
  EXPECT_DOUBLE_EQ(tensor_work(c, 0).flops, 1000);
}

}  // namespace
}  // namespace roofprobe
