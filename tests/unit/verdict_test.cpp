// compare --verdict: a measured GPU file against a reference file. Each ceiling meets the peak at
// its measured clock, the reference's spec and published figures; the verdict picks the
// strongest reference; results above a peak are flagged; the device memory is matched whatever
// each file calls it; and the real reference files are usable as references.
#include <gtest/gtest.h>

#include <string>

#include "driver/model/errors.hpp"
#include "driver/model/machine.hpp"
#include "driver/report/verdict.hpp"

namespace roofprobe {
namespace {

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
  c.clock_mhz = 1755;
  c.source = source;
  return c;
}

// A measured H100-like file: HBM called "DRAM" on purpose (the reference says HBM).
Machine measured(double hbm, double fp64, double fp64_peak) {
  Machine m;
  m.device.kind = "gpu";
  m.device.name = "NVIDIA H100 80GB HBM3";
  m.device.memory_name = "DRAM";
  m.memory = {level("L2", 9500), level("DRAM", hbm)};
  m.compute = {ceiling("FP64.FMA", fp64, fp64_peak), ceiling("TENSOR.FP16.FP32", 600000, 929000)};
  InstructionCeiling w;
  w.measured_gips = 900;
  w.theoretical_gips = 926.6;
  w.clock_mhz = 1755;
  m.warp_gips = w;
  return m;
}

Machine reference() {
  Machine r;
  r.device.name = "NVIDIA H100 SXM5 80 GB";
  r.device.memory_name = "HBM";
  r.memory = {level("HBM", 3350, "spec"), level("L2", 10000, "published")};
  r.compute = {ceiling("FP64.FMA", 34000, 34000, "spec"), ceiling("TENSOR.FP16.FP32", 989500, 989500, "spec")};
  r.device.theoretical_gflops["FP64.FMA"] = 34000;
  InstructionCeiling w;
  w.theoretical_gips = 1045.44;
  w.source = "spec";
  r.warp_gips = w;
  return r;
}

const VerdictRow& row(const Verdict& v, const std::string& name) {
  for (const VerdictRow& r : v.rows)
    if (r.name == name) return r;
  throw std::runtime_error("no row " + name);
}

TEST(Verdict, EachCeilingAgainstPeakSpecAndPublished) {
  const Verdict v = build_verdict(measured(3000, 30000, 31000), "m", reference(), "r");
  ASSERT_EQ(v.rows.size(), 5u);  // L2, DRAM, FP64.FMA, TENSOR.FP16.FP32, warp GIPS

  const VerdictRow& hbm = row(v, "DRAM");
  EXPECT_DOUBLE_EQ(hbm.spec, 3350);  // the reference's HBM, matched as the device memory
  EXPECT_EQ(hbm.verdict, "ok");      // 89.6% of spec >= 80%
  EXPECT_EQ(hbm.basis, "spec");

  const VerdictRow& l2 = row(v, "L2");
  EXPECT_DOUBLE_EQ(l2.published, 10000);
  EXPECT_EQ(l2.verdict, "ok");  // 95% of the published figure: the published one decides
  EXPECT_EQ(l2.basis, "published");

  const VerdictRow& fp64 = row(v, "FP64.FMA");
  EXPECT_DOUBLE_EQ(fp64.peak, 31000);
  EXPECT_DOUBLE_EQ(fp64.peak_clock_mhz, 1755);
  EXPECT_DOUBLE_EQ(fp64.spec, 34000);
  EXPECT_EQ(fp64.verdict, "ok");

  // mma.sync on Hopper reaches ~60% of the wgmma-level spec: reported low, not hidden.
  EXPECT_EQ(row(v, "TENSOR.FP16.FP32").verdict, "low");
  EXPECT_EQ(row(v, "warp GIPS").verdict, "ok");
  EXPECT_DOUBLE_EQ(row(v, "warp GIPS").spec, 1045.44);
  EXPECT_EQ(v.ok, 4);
  EXPECT_EQ(v.low, 1);
  EXPECT_EQ(verdict_summary(v), "verdict: 4 ok, 1 low, 0 above peak, 0 above spec, 0 unchecked");
}

TEST(Verdict, AboveThePeakAtTheMeasuredClockIsFlagged) {
  // 31000 is the peak at the measured clock; 32000 is above it by 3.2% although below spec.
  const Verdict v = build_verdict(measured(3000, 32000, 31000), "m", reference(), "r");
  EXPECT_EQ(row(v, "FP64.FMA").verdict, "above peak");
  EXPECT_EQ(v.above_peak, 1);
  // Within the clock tolerance it is not.
  const Verdict near = build_verdict(measured(3000, 31500, 31000), "m", reference(), "r");
  EXPECT_EQ(row(near, "FP64.FMA").verdict, "ok");
}

TEST(Verdict, AboveTheSpecSheetIsFlagged) {
  const Verdict v = build_verdict(measured(3500, 30000, 31000), "m", reference(), "r");
  EXPECT_EQ(row(v, "DRAM").verdict, "above spec");
  EXPECT_EQ(v.above_spec, 1);
}

TEST(Verdict, LowAgainstAPublishedMeasurement) {
  Machine m = measured(3000, 30000, 31000);
  m.memory[0].gbs = 8000;  // L2: 80% of the published 10000, below 90%
  EXPECT_EQ(row(build_verdict(m, "m", reference(), "r"), "L2").verdict, "low");
}

TEST(Verdict, WithoutAnyReferenceTheCeilingIsUnchecked) {
  Machine m = measured(3000, 30000, 31000);
  m.memory.push_back(level("shared", 30000));
  const Verdict v = build_verdict(m, "m", reference(), "r");
  EXPECT_EQ(row(v, "shared").verdict, "unchecked");
  EXPECT_EQ(v.unchecked, 1);
}

TEST(Verdict, OnlyMeasuredCeilingsAreJudged) {
  // A reference compared with itself has nothing measured: no rows.
  EXPECT_TRUE(build_verdict(reference(), "r", reference(), "r").rows.empty());
}

TEST(Verdict, PrintedForms) {
  const Verdict v = build_verdict(measured(3000, 32000, 31000), "H100 (m.yaml)", reference(), "H100 SXM5 (r.yaml)");
  const std::string text = format_verdict(v, "text");
  EXPECT_NE(text.find("reference: H100 SXM5 (r.yaml)"), std::string::npos);
  EXPECT_NE(text.find("above peak"), std::string::npos);
  EXPECT_NE(text.find("31000 @1755"), std::string::npos);
  EXPECT_NE(text.find("103%"), std::string::npos);  // 32000 of 31000
  EXPECT_EQ(text.substr(text.rfind("verdict:")), verdict_summary(v) + "\n");
  const std::string md = format_verdict(v, "markdown");
  EXPECT_NE(md.find("| FP64.FMA | GFLOP/s | 32000 | 31000 @1755 | 103% |"), std::string::npos) << md;
  const std::string csv = format_verdict(v, "csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "section,ceiling,unit,measured,peak,peak_clock_mhz,spec,published,verdict,basis");
  EXPECT_NE(csv.find("compute,FP64.FMA,GFLOP/s,32000,31000,1755,34000,,above peak,peak"), std::string::npos) << csv;
  EXPECT_THROW(format_verdict(v, "html"), InputError);
}

TEST(Verdict, TheShippedReferenceFilesServeAsReferences) {
  // The acceptance compares a measured H100 with results/reference/h100-sxm.yaml and a V100
  // with v100-sxm2.yaml (which has published measurements): every ceiling named there is found.
  const Machine h100 = read_machine_file(std::string(ROOFPROBE_SOURCE_DIR) + "/results/reference/h100-sxm.yaml");
  const Verdict vh = build_verdict(measured(3000, 30000, 31000), "m", h100, "h100-sxm");
  EXPECT_DOUBLE_EQ(row(vh, "DRAM").spec, 3350);
  EXPECT_DOUBLE_EQ(row(vh, "FP64.FMA").spec, 34000);
  EXPECT_DOUBLE_EQ(row(vh, "TENSOR.FP16.FP32").spec, 989500);

  const Machine v100 = read_machine_file(std::string(ROOFPROBE_SOURCE_DIR) + "/results/reference/v100-sxm2.yaml");
  Machine m = measured(850, 7000, 7834);
  m.device.memory_name = "HBM";
  m.memory[1].level = "HBM";
  const Verdict vv = build_verdict(m, "m", v100, "v100-sxm2");
  EXPECT_GT(row(vv, "FP64.FMA").published, 7000);  // ERT on Cori GPU: 7068.86
  EXPECT_EQ(row(vv, "FP64.FMA").basis, "published");
  EXPECT_GT(row(vv, "HBM").published, 800);
}

}  // namespace
}  // namespace roofprobe
