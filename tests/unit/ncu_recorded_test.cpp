// Nsight Compute exports recorded on an H200 (tests/unit/fixtures/ncu/recorded/, written by the
// ncu step of bench/gpu-checks): launches of known work, read back by `roofprobe points`. Each
// point must carry the work the launch is known to do (h200_expected.json), over the duration
// ncu measured, in both recipes: the architecture's metric list and --set roofline.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "driver/model/csv_text.hpp"
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

}  // namespace
}  // namespace roofprobe
