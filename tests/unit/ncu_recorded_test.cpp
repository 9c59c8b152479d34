// Nsight Compute exports recorded on an H200 (tests/unit/fixtures/ncu/recorded/, written by the
// ncu step of bench/gpu-checks): launches of known work, read back by `roofprobe points`. Each
// point must carry the work the launch is known to do (h200_expected.json), over the duration
// ncu measured, in both recipes: the architecture's metric list and --set roofline.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "driver/model/csv_text.hpp"
#include "driver/model/errors.hpp"
#include "driver/report/points.hpp"

namespace roofprobe {
namespace {

using csv_text::lines_of;
using csv_text::split_csv_record;

const std::string kDir = std::string(ROOFPROBE_SOURCE_DIR) + "/tests/unit/fixtures/ncu/recorded/";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Known {
  std::string name;
  double flops = 0, least_dram_bytes = 0;
};

std::vector<Known> known_work() {
  std::vector<Known> out;
  for (const YAML::Node& op : YAML::LoadFile(kDir + "h200_expected.json")["operations"])
    out.push_back({op["name"].as<std::string>(), op["flops"].as<double>(), op["least_dram_bytes"].as<double>()});
  return out;
}

// Each launch's gpu__time_duration.sum in seconds, in the export's order, read here apart from
// the converter: the header after the program's output, then the units row.
std::vector<double> durations(const std::string& text) {
  std::vector<std::string> rows;
  for (const std::string& line : lines_of(text))
    if (!rows.empty() || line.rfind("\"ID\"", 0) == 0) rows.push_back(line);
  const std::vector<std::string> header = split_csv_record(rows.at(0));
  std::size_t col = 0;
  while (col < header.size() && header[col] != "gpu__time_duration.sum") ++col;
  EXPECT_EQ(split_csv_record(rows.at(1)).at(col), "ns");
  std::vector<double> out;
  for (std::size_t r = 2; r < rows.size(); ++r) {
    std::string value = split_csv_record(rows[r]).at(col);
    value.erase(std::remove(value.begin(), value.end(), ','), value.end());
    out.push_back(std::stod(value) * 1e-9);
  }
  return out;
}

// The points at HBM, one per launch in launch order, hold the known FLOPs (GEMMs: 2*M*N*K and
// the epilogue's few; the sum's tree adds some) and at least nearly the least DRAM traffic.
void expect_known_work(const std::string& file) {
  const std::string text = read_text(kDir + file);
  const NcuConversion r = convert_ncu_csv(text, file);
  std::vector<const KernelPoint*> hbm;
  for (const KernelPoint& p : r.points)
    if (p.level == "HBM" && p.kind == "flop") hbm.push_back(&p);
  const std::vector<Known> known = known_work();
  const std::vector<double> seconds = durations(text);
  ASSERT_EQ(known.size(), 8u);
  ASSERT_EQ(seconds.size(), known.size());
  ASSERT_EQ(hbm.size(), known.size()) << file;
  for (std::size_t i = 0; i < known.size(); ++i) {
    const Known& k = known[i];
    const double flops = hbm[i]->performance * 1e9 * seconds[i];
    const double upper = k.name == "reduction_sum" ? 1.10 : 1.01;
    EXPECT_GE(flops, 0.999 * k.flops) << file << ": " << k.name << " (" << hbm[i]->kernel << ")";
    EXPECT_LE(flops, upper * k.flops) << file << ": " << k.name << " (" << hbm[i]->kernel << ")";
    // The elementwise op's inputs were partly still in the 60 MiB L2 from its warm-up.
    EXPECT_GE(flops / hbm[i]->intensity, 0.95 * k.least_dram_bytes) << file << ": " << k.name;
  }
}

TEST(NcuRecorded, ArchitectureRecipeOnAnH200GivesTheKnownWork) {
  expect_known_work("h200_arch.csv");
  const NcuConversion r = convert_ncu_csv(read_text(kDir + "h200_arch.csv"), "h200_arch.csv");
  for (const char* level : {"L1", "L2", "HBM"}) {
    int instruction = 0;
    for (const KernelPoint& p : r.points) instruction += p.level == level && p.kind == "instruction";
    EXPECT_EQ(instruction, 8) << level;
  }
}

TEST(NcuRecorded, SetRooflineOnAnH200GivesTheKnownWork) {
  // ncu's roofline set: rates with '' and 'byte' units, totals beside their parts, an NVTX
  // column, and no smsp__inst_executed.sum.
  expect_known_work("h200_set_roofline.csv");
}

// The same launches as `--print-summary per-kernel` writes them (the header of a real summary:
// "Process ID", ..., "Invocations", "Section Name", "Metric Name", "Metric Unit", "Minimum",
// "Maximum", "Average"), each launch run `repeat` times: a group's counts are the Average times
// the Invocations, so every point is the raw export's.
std::string per_kernel_summary(const std::string& raw, int repeat, double rate_spread = 0) {
  std::vector<std::vector<std::string>> rows;
  for (const std::string& line : lines_of(raw))
    if (!rows.empty() || line.rfind("\"ID\"", 0) == 0) rows.push_back(split_csv_record(line));
  const std::vector<std::string>& header = rows.at(0);
  const auto col = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t first_metric = col("CC") + 1;
  const auto number = [](std::string v, double& out) {
    v.erase(std::remove(v.begin(), v.end(), ','), v.end());
    char* end = nullptr;
    out = std::strtod(v.c_str(), &end);
    return !v.empty() && *end == '\0';
  };
  const auto quoted = [](const std::string& v) { return "\"" + v + "\""; };
  std::string out =
      "==PROF== Disconnected from process 652\n"
      "\"Process ID\",\"Process Name\",\"Host Name\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"Device\",\"CC\","
      "\"Invocations\",\"Section Name\",\"Metric Name\",\"Metric Unit\",\"Minimum\",\"Maximum\",\"Average\"\n";
  for (std::size_t r = 2; r < rows.size(); ++r) {
    const std::vector<std::string>& row = rows[r];
    for (std::size_t c = first_metric; c < header.size(); ++c) {
      double v = 0;
      if (!number(row[c], v)) continue;
      const bool rate = header[c].find(".per_") != std::string::npos;
      char value[64], lo[64], hi[64];
      std::snprintf(value, sizeof value, "%.17g", v);
      std::snprintf(lo, sizeof lo, "%.17g", rate ? v * (1 - rate_spread) : v);
      std::snprintf(hi, sizeof hi, "%.17g", rate ? v * (1 + rate_spread) : v);
      std::string line;
      for (const char* name :
           {"Process ID", "Process Name", "Host Name", "Kernel Name", "Block Size", "Grid Size", "Device", "CC"})
        line += quoted(row[col(name)]) + ",";
      line += quoted(std::to_string(repeat)) + "," + quoted("Command line profiler metrics") + "," + quoted(header[c]) +
              "," + quoted(rows[1][c]) + "," + quoted(lo) + "," + quoted(hi) + "," + quoted(value);
      out += line + "\n";
    }
  }
  return out;
}

TEST(NcuRecorded, PerKernelSummaryGivesTheRawExportsPoints) {
  const std::string raw = read_text(kDir + "h200_arch.csv");
  const NcuConversion want = convert_ncu_csv(raw, "h200_arch.csv");
  for (int repeat : {1, 3}) {
    const NcuConversion got = convert_ncu_csv(per_kernel_summary(raw, repeat), "summary.csv");
    ASSERT_EQ(got.points.size(), want.points.size()) << repeat;
    for (std::size_t i = 0; i < want.points.size(); ++i) {
      EXPECT_EQ(got.points[i].kernel, want.points[i].kernel);
      EXPECT_EQ(got.points[i].level, want.points[i].level);
      EXPECT_NEAR(got.points[i].performance / want.points[i].performance, 1, 1e-9) << got.points[i].kernel;
      EXPECT_NEAR(got.points[i].intensity / want.points[i].intensity, 1, 1e-9) << got.points[i].kernel;
    }
  }
  // --set roofline has the CUDA cores' FLOPs only as rates. Where they differ between a group's
  // launches, the average rate does not give the group's total: no FLOP point from them.
  const std::string roofline = read_text(kDir + "h200_set_roofline.csv");
  const NcuConversion same = convert_ncu_csv(per_kernel_summary(roofline, 2), "summary.csv");
  EXPECT_TRUE(std::any_of(same.points.begin(), same.points.end(), [](const KernelPoint& p) {
    return p.kernel == "vectorized_elementwise_kernel" && p.kind == "flop";
  }));
  // A spread of a rounding digit (ncu prints a few significant digits) is one rate: the count is
  // the launches' total within that spread.
  const NcuConversion rounded = convert_ncu_csv(per_kernel_summary(roofline, 2, 0.002), "summary.csv");
  ASSERT_EQ(rounded.points.size(), same.points.size());
  for (std::size_t i = 0; i < same.points.size(); ++i)
    EXPECT_NEAR(rounded.points[i].performance / same.points[i].performance, 1, 1e-9) << same.points[i].kernel;
  std::string error = "(no InputError)";
  try {
    convert_ncu_csv(per_kernel_summary(roofline, 2, 0.1), "summary.csv");
  } catch (const InputError& e) {
    error = e.what();
  }
  EXPECT_NE(error.find("summary.csv: no kernel points could be computed ('"), std::string::npos) << error;
  EXPECT_NE(error.find("differs between their launches (Minimum and Maximum more than 1% of the Average apart)"),
            std::string::npos)
      << error;
}

}  // namespace
}  // namespace roofprobe
