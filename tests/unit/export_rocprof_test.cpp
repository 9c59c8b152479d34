// export --format rocprof-csv against what AMD's roofline tool reads: its header, its row keyed
// by it, the levels it divides by.
#include <gtest/gtest.h>

#include "tests/unit/export_test_support.hpp"
#include <yaml-cpp/yaml.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <sstream>
#include "driver/model/errors.hpp"
#include "driver/report/export.hpp"

namespace roofprobe {
namespace {

using namespace export_testing;

// ---- rocprof-csv ---------------------------------------------------------------------------

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : line) {
    if (c == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

TEST(ExportRocprofCsv, HeaderIsAmdsAndRowIsKeyedByIt) {
  const std::string text = export_rocprof_csv(gpu_machine());
  std::istringstream in(text);
  std::string header, row, extra;
  ASSERT_TRUE(std::getline(in, header));
  ASSERT_TRUE(std::getline(in, row));
  EXPECT_FALSE(std::getline(in, extra));  // one GPU, one row
  // The header rocm-amdgpu-bench writes (rocprofiler-compute keys the columns by these names).
  EXPECT_EQ(
      header,
      "device,HBMBw,HBMBwLow,hbmBwHigh,MALLBw,MALLBwLow,MALLBwHigh,L2Bw,L2BwLow,L2BwHigh,L1Bw,L1BwLow,L1BwHigh,"
      "LDSBw,LDSBwLow,LDSBwHigh,FP8Flops,FP8FlopsLow,FP8FlopsHigh,FP16Flops,FP16FlopsLow,FP16FlopsHigh,BF16Flops,"
      "BF16FlopsLow,BF16FlopsHigh,FP32Flops,FP32FlopsLow,FP32FlopsHigh,FP64Flops,FP64FlopsLow,FP64FlopsHigh,I8Ops,"
      "I8OpsLow,I8OpsHigh,I32Ops,I32OpsLow,I32OpsHigh,I64Ops,I64OpsLow,I64OpsHigh,MFMAF4Flops,MFMAF4FlopsLow,"
      "MFMAF4FlopsHigh,MFMAF6Flops,MFMAF6FlopsLow,MFMAF6FlopsHigh,MFMAF8Flops,MFMAF8FlopsLow,MFMAF8FlopsHigh,"
      "MFMAF16Flops,MFMAF16FlopsLow,MFMAF16FlopsHigh,MFMABF16Flops,MFMABF16FlopsLow,MFMABF16FlopsHigh,"
      "MFMAF32Flops,MFMAF32FlopsLow,MFMAF32FlopsHigh,MFMAF64Flops,MFMAF64FlopsLow,MFMAF64FlopsHigh,MFMAI8Ops,"
      "MFMAI8OpsLow,MFMAI8OpsHigh");
  const std::vector<std::string> names = split_csv(header), values = split_csv(row);
  ASSERT_EQ(names.size(), values.size());
  EXPECT_EQ(values[0], "0");  // the device index, dropped by the reader
  std::map<std::string, double> v;
  for (std::size_t i = 1; i < names.size(); ++i) v[names[i]] = std::stod(values[i]);
  EXPECT_DOUBLE_EQ(v["HBMBw"], 830);  // measured, not the spec 900
  EXPECT_DOUBLE_EQ(v["L2Bw"], 2900);
  EXPECT_DOUBLE_EQ(v["L1Bw"], 13500);
  EXPECT_DOUBLE_EQ(v["LDSBw"], 12000);  // shared memory is AMD's LDS
  EXPECT_DOUBLE_EQ(v["MALLBw"], 0);     // not measured: 0, as the benchmark writes it
  EXPECT_DOUBLE_EQ(v["FP64Flops"], 7000);
  EXPECT_DOUBLE_EQ(v["FP32Flops"], 14000);
  EXPECT_DOUBLE_EQ(v["MFMAF16Flops"], 100000);  // tensor cores are AMD's matrix cores
  EXPECT_DOUBLE_EQ(v["MFMAF64Flops"], 0);
  // Low/High: the lowest and highest sample (best - spread x median, best).
  EXPECT_NEAR(v["HBMBwLow"], 830 * 1.04 - 0.08 * 830, 1e-3);
  EXPECT_NEAR(v["hbmBwHigh"], 830 * 1.04, 1e-3);
  EXPECT_LE(v["FP64FlopsLow"], v["FP64Flops"]);
  EXPECT_GE(v["FP64FlopsHigh"], v["FP64Flops"]);
}

std::map<std::string, std::string> rocprof_row(const std::string& text) {
  const std::string header = text.substr(0, text.find('\n'));
  const std::string row = text.substr(text.find('\n') + 1);
  const std::vector<std::string> names = split_csv(header), values = split_csv(row.substr(0, row.size() - 1));
  std::map<std::string, std::string> v;
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) v[names[i]] = values[i];
  return v;
}

// What rocprofiler-compute's roofline_calc does with the row, in our words: every FLOP peak is
// divided by the HBM, L2, L1 and LDS bandwidths to place the elbows. A 0 there is its
// ZeroDivisionError.
void expect_roofline_calc_accepts(const std::string& text, const std::string& where) {
  std::map<std::string, std::string> v = rocprof_row(text);
  for (const char* bw : {"HBMBw", "L2Bw", "L1Bw", "LDSBw"}) {
    ASSERT_TRUE(v.count(bw)) << where << ": no " << bw << " column";
    EXPECT_GT(std::stod(v[bw]), 0) << where << ": " << bw << " is 0";
  }
}

std::map<std::string, double> row_of(const Machine& m) {
  std::istringstream in(export_rocprof_csv(m));
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  const std::vector<std::string> names = split_csv(header), values = split_csv(row);
  std::map<std::string, double> out;
  for (std::size_t i = 1; i < names.size(); ++i) out[names[i]] = std::stod(values[i]);
  return out;
}

// Each MFMA column is the rate of the instruction AMD's benchmark times for it: MFMAF16Flops is
// v_mfma_f32_32x32x8f16, FP16 inputs with FP32 accumulate. A GeForce card's FP16-accumulate rate
// is twice its FP32-accumulate one: taking the higher of the two put it in the wrong column.
TEST(ExportRocprofCsv, MatrixColumnsTakeTheAccumulatorAmdsBenchmarkUses) {
  Machine m = gpu_machine();
  m.compute = {ceiling("FP64.FMA", 1300, 0),
               ceiling("TENSOR.FP16.FP32", 71000, 0),
               ceiling("TENSOR.FP16.FP16", 142000, 0),
               ceiling("TENSOR.BF16.FP32", 71000, 0),
               ceiling("TENSOR.TF32.FP32", 35000, 0),
               ceiling("TENSOR.FP8.FP32", 142000, 0),
               ceiling("TENSOR.INT8.INT32", 284000, 0),
               ceiling("TENSOR.FP64.FP64", 2600, 0)};
  const std::map<std::string, double> v = row_of(m);
  EXPECT_DOUBLE_EQ(v.at("MFMAF16Flops"), 71000);  // not the FP16-accumulate 142000
  EXPECT_DOUBLE_EQ(v.at("MFMABF16Flops"), 71000);
  EXPECT_DOUBLE_EQ(v.at("MFMAF8Flops"), 142000);
  EXPECT_DOUBLE_EQ(v.at("MFMAI8Ops"), 284000);
  EXPECT_DOUBLE_EQ(v.at("MFMAF64Flops"), 2600);
  EXPECT_DOUBLE_EQ(v.at("MFMAF32Flops"), 0);  // TF32 is not AMD's full-FP32 MFMA
  EXPECT_DOUBLE_EQ(v.at("FP64Flops"), 1300);
  // Only an FP16-accumulate tensor rate: no AMD column holds it.
  Machine f16 = gpu_machine();
  f16.compute = {ceiling("TENSOR.FP16.FP16", 142000, 0)};
  EXPECT_DOUBLE_EQ(row_of(f16).at("MFMAF16Flops"), 0);
}

TEST(ExportRocprofCsv, CpuLevelsFillAmdsColumnsWithTheL3AsMall) {
  Machine m = gpu_machine();
  m.device.kind = "cpu";
  m.device.backend = "cpu";
  m.device.vendor = "AuthenticAMD";
  m.device.memory_name = "DRAM";
  m.memory = {level("L1", 200), level("L2", 150), level("L3", 90), level("DRAM", 20, "spec")};
  m.compute = {ceiling("FP64.FMA", 95, 97.6), ceiling("FP64.noFMA", 48, 48.8)};
  std::vector<std::string> notes;
  ExportSettings settings;
  settings.notes = &notes;
  const std::string text = export_rocprof_csv(m, settings);
  expect_roofline_calc_accepts(text, "cpu");
  std::map<std::string, std::string> v = rocprof_row(text);
  EXPECT_EQ(v["HBMBw"], "20");
  EXPECT_EQ(v["HBMBwLow"], "20");  // a spec value has no spread
  EXPECT_EQ(v["hbmBwHigh"], "20");
  EXPECT_EQ(v["MALLBw"], "90");  // the last-level cache is AMD's MALL
  EXPECT_EQ(v["LDSBw"], "200");  // no LDS on a CPU: its L1, and a note says so
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("LDSBw is L1Bw's 200"), std::string::npos) << notes[0];
  EXPECT_EQ(v["FP64Flops"], "95");  // the FMA peak; noFMA has no column
}

TEST(ExportRocprofCsv, ALevelTheToolDividesByIsNeverZero) {
  // NVIDIA: L1 and shared memory are one SRAM, so either stands in for the other (noted).
  Machine m = gpu_machine();
  m.memory = {level("shared", 12000, "spec"), level("L2", 2900), level("HBM", 900, "spec")};
  std::vector<std::string> notes;
  ExportSettings settings;
  settings.notes = &notes;
  const std::string text = export_rocprof_csv(m, settings);
  expect_roofline_calc_accepts(text, "shared only");
  EXPECT_EQ(rocprof_row(text)["L1Bw"], "12000");
  ASSERT_EQ(notes.size(), 1u);
}

TEST(ExportRocprofCsv, ACacheWithoutAFigureIsBoundedBelowByTheMemoryBehindIt) {
  // A spec sheet with HBM only: every HBM byte passes the L2 and then the L1, so HBM's figure is
  // a lower bound of both, and each note says "lower bound" so nobody reads it as the L2's speed.
  Machine m = gpu_machine();
  m.memory = {level("HBM", 900, "spec")};
  std::vector<std::string> notes;
  ExportSettings settings;
  settings.notes = &notes;
  const std::string text = export_rocprof_csv(m, settings);
  expect_roofline_calc_accepts(text, "HBM only");
  std::map<std::string, std::string> v = rocprof_row(text);
  EXPECT_EQ(v["L2Bw"], "900");
  EXPECT_EQ(v["L1Bw"], "900");
  EXPECT_EQ(v["LDSBw"], "900");
  ASSERT_EQ(notes.size(), 3u);
  EXPECT_NE(notes[0].find("L2Bw is HBMBw's 900 (a lower bound"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("L1Bw is L2Bw's 900 (a lower bound"), std::string::npos) << notes[1];
  EXPECT_NE(notes[2].find("L1Bw is itself a lower bound, so this is one too"), std::string::npos) << notes[2];
  // A measured L2 is kept, and only the levels without a figure are bounded.
  m.memory = {level("L2", 2900), level("HBM", 900, "spec")};
  notes.clear();
  EXPECT_EQ(rocprof_row(export_rocprof_csv(m, settings))["L2Bw"], "2900");
  EXPECT_EQ(notes.size(), 2u);  // L1 from the L2, LDS from the L1
  // With no memory level at all there is nothing to bound them by: an error naming the columns.
  m.memory = {level("shared", 12000, "spec")};
  try {
    export_rocprof_csv(m);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("HBMBw, L2Bw"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find("L1Bw"), std::string::npos) << e.what();
  }
}

TEST(ExportRocprofCsv, EveryShippedFileExportsAndIsAccepted) {
  int exported = 0;
  for (const std::string& path : shipped_machine_files()) {
    expect_roofline_calc_accepts(export_rocprof_csv(read_machine_file(path)), path);
    ++exported;
  }
  EXPECT_GE(exported, 19);  // the nine references and the ten measured runs
}

}  // namespace
}  // namespace roofprobe
