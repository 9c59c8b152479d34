// Other tools' sweeps (driver/fit/external_sweep.cpp) read and fitted as `fit --bandwidth-csv --from`
// reads them. The fixtures are roofprobe's own measurements written in each tool's layout
// (the H100 cg read of results/measured/h100-sxm) and a real likwid-bench sweep of the dev VM.
#include "driver/fit/external_sweep.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "driver/model/errors.hpp"
#include "driver/fit/fit.hpp"
#include "tests/unit/temp_file.hpp"

namespace roofprobe {
namespace {

std::string fixture(const std::string& name) {
  return std::string(ROOFPROBE_SOURCE_DIR) + "/tests/unit/fixtures/" + name;
}

std::string error_of(const std::string& text, SweepFormat format) {
  TempFile f(text, ".txt");
  try {
    read_external_sweep(f.path(), format);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

Machine gpu() {
  Machine m;
  m.device.kind = "gpu";
  m.device.memory_name = "HBM";
  return m;
}

TEST(ExternalSweep, FormatNames) {
  EXPECT_EQ(parse_sweep_format("ert"), SweepFormat::Ert);
  EXPECT_EQ(parse_sweep_format("gpu-benches"), SweepFormat::GpuBenches);
  EXPECT_EQ(parse_sweep_format("likwid"), SweepFormat::Likwid);
  EXPECT_EQ(parse_sweep_format("csv"), SweepFormat::Csv);
  try {
    parse_sweep_format("stream");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("csv, ert, gpu-benches or likwid"), std::string::npos);
  }
}

TEST(ExternalSweep, ErtTryFilesGiveEachWorkingSetsBestTrial) {
  // working set, trials, microseconds, bytes, FLOPs: 1 MB at 1000 and 3000 GB/s (best kept).
  const std::string text =
      "     1000000   16   16000.000   16000000000   0\n"
      "     1000000   32   10666.667   32000000000   0\n"
      "     2000000   16   32000.000   32000000000   0\n";
  TempFile f(text, ".txt");
  const std::vector<CurvePoint> p = read_external_sweep(f.path(), SweepFormat::Ert);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_DOUBLE_EQ(p[0].x, 1e6);
  EXPECT_NEAR(p[0].y, 3000, 1e-3);
  EXPECT_NEAR(p[1].y, 1000, 1e-3);
  // The reduced max/sum files: the row's highest GB/s (columns 6-8).
  TempFile max_file("8 134217728 385955.789 386532.213 407579.93 5.2 5.5 5.6 0.3 0.34 0.35\n", ".txt");
  const std::vector<CurvePoint> m = read_external_sweep(max_file.path(), SweepFormat::Ert);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_DOUBLE_EQ(m[0].y, 5.6);
}

// The try files ERT's driver writes end with a META_DATA block describing the run: the rows end
// there (the values below are made up, the layout is ERT's: a blank line, META_DATA, key/values).
TEST(ExternalSweep, ErtTryFilesEndAtTheirMetaData) {
  const std::string text =
      "     1000000   16   16000.000   16000000000   0\n"
      "     2000000   16   32000.000   32000000000   0\n"
      "\n"
      "META_DATA\n"
      "FLOPS          1\n"
      "MPI_PROCS      1\n"
      "OPENMP_THREADS 1\n"
      "ERT_VERSION  1.1.0\n"
      "HOSTNAME  ('node17', [], ['10.0.0.17'])\n"
      "CONFIG  {'ERT_FLOPS': ['1'], 'ERT_GPU': [True]}\n";
  TempFile f(text, ".txt");
  const std::vector<CurvePoint> p = read_external_sweep(f.path(), SweepFormat::Ert);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_NEAR(p[1].y, 1000, 1e-3);
  // The marker stands alone on its line: with text after it, the line is not ERT's and refused.
  EXPECT_NE(error_of("1 1 1 1 1\nMETA_DATA x\n", SweepFormat::Ert).find(":2: 'META_DATA' is not a number"),
            std::string::npos);
}

TEST(ExternalSweep, ErtLinesThatAreNotErtsAreErrors) {
  EXPECT_NE(
      error_of("1000 16 1.0 16000 0\nworking set trials\n", SweepFormat::Ert).find(":2: 'working' is not a number"),
      std::string::npos);
  EXPECT_NE(error_of("1000 16 1.0 16000\n", SweepFormat::Ert).find(":1: expected ERT's 5 columns"), std::string::npos);
  EXPECT_NE(error_of("1 2 3 4 5\n1 2 3 4 5 6 7 8 9 10 11\n", SweepFormat::Ert).find(":2: rows of 5 and 11"),
            std::string::npos);
  EXPECT_NE(error_of("\n\n", SweepFormat::Ert).find("no ERT bandwidth sample"), std::string::npos);
}

TEST(ExternalSweep, ErtRawOutputOfAnH100FitsItsL2AndHbm) {
  Machine m = gpu();
  ExternalSweepOptions o;
  o.format = SweepFormat::Ert;
  o.level_names = {"L2", "HBM"};
  fit_bandwidth_csv(fixture("ert_try_h100_cg_read.txt"), m, o);
  ASSERT_EQ(m.memory.size(), 2u);
  EXPECT_EQ(m.memory[0].level, "L2");
  EXPECT_EQ(m.memory[1].level, "HBM");
  // What roofprobe's own fit of the same samples published (results/measured/h100-sxm): 7.7 TB/s
  // L2 and 3.1 TB/s HBM.
  EXPECT_NEAR(m.memory[0].gbs / 7700, 1, 0.06);
  EXPECT_NEAR(m.memory[1].gbs / 3100, 1, 0.03);
}

TEST(ExternalSweep, GpuBenchesTablesTakeTheTotalDataSetAndTheEffectiveBandwidth) {
  const std::string cache =
      "     data set   exec time     spread        Eff. bw       DRAM read\n"
      "         2 kB         5ms       0.4%   13646.3 GB/s         0 GB/s \n";
  TempFile a(cache, ".txt");
  std::vector<CurvePoint> p = read_external_sweep(a.path(), SweepFormat::GpuBenches);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_DOUBLE_EQ(p[0].x, 2048);
  EXPECT_DOUBLE_EQ(p[0].y, 13646.3);
  const std::string l2 =
      "     data set   exec time     spread       Eff. bw\n"
      "       128 kB       384 kB         1ms       2.6%   14183.6 GB/s        0 GB/s \n";
  TempFile b(l2, ".txt");
  p = read_external_sweep(b.path(), SweepFormat::GpuBenches);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_DOUBLE_EQ(p[0].x, 384 * 1024.0);  // the total, not the per-block set
  EXPECT_NE(error_of("  2 kB  5ms  0.4%  fast\n", SweepFormat::GpuBenches).find(":1: no '<number> GB/s'"),
            std::string::npos);
  EXPECT_NE(error_of("  5ms  0.4%  13646.3 GB/s\n", SweepFormat::GpuBenches).find(":1: no data-set size"),
            std::string::npos);

  Machine m = gpu();
  ExternalSweepOptions o;
  o.format = SweepFormat::GpuBenches;
  o.level_names = {"L2", "HBM"};
  fit_bandwidth_csv(fixture("gpu_benches_l2_h100_cg_read.txt"), m, o);
  ASSERT_EQ(m.memory.size(), 2u);
  EXPECT_NEAR(m.memory[1].gbs / 3100, 1, 0.03);
}

TEST(ExternalSweep, LikwidBenchRunsConcatenated) {
  const std::vector<CurvePoint> p = read_external_sweep(fixture("likwid_load_avx512_zen4_vm.txt"), SweepFormat::Likwid);
  ASSERT_EQ(p.size(), 27u);  // 27 likwid-bench runs, 7.5 KiB to 488 MiB
  EXPECT_DOUBLE_EQ(p.front().x, 7680);
  EXPECT_NEAR(p.front().y, 25.81996, 1e-6);  // "MByte/s: 25819.96" is 1e6 bytes/s
  EXPECT_DOUBLE_EQ(p.back().x, 512000000);
  EXPECT_NE(error_of("Size (Byte):\t32000\nTime: 1 sec\n", SweepFormat::Likwid).find(":1: the last run has"),
            std::string::npos);
  EXPECT_NE(error_of("MByte/s:\t100\n", SweepFormat::Likwid).find(":1: 'MByte/s:' before"), std::string::npos);
  EXPECT_NE(error_of("Size (Byte):\tbig\n", SweepFormat::Likwid).find("without a number"), std::string::npos);

  // Its memory level, as likwid measured it (31-35 GB/s from 64 MB on), named from the caches given.
  Machine m;
  m.device.kind = "cpu";
  m.device.memory_name = "DRAM";
  ExternalSweepOptions o;
  o.format = SweepFormat::Likwid;
  o.cache_bytes = {64 * 1024.0, 2 * 1048576.0, 32 * 1048576.0};
  fit_bandwidth_csv(fixture("likwid_load_avx512_zen4_vm.txt"), m, o);
  ASSERT_GE(m.memory.size(), 2u);
  EXPECT_EQ(m.memory.back().level, "DRAM");
  EXPECT_NEAR(m.memory.back().gbs / 32, 1, 0.15);
  EXPECT_EQ(m.device.caches.size(), 3u);
}

TEST(ExternalSweep, LevelNamesMustMatchTheLevelsFound) {
  Machine m = gpu();
  ExternalSweepOptions o;
  o.format = SweepFormat::Ert;
  o.level_names = {"L1", "L2", "HBM"};
  try {
    fit_bandwidth_csv(fixture("ert_try_h100_cg_read.txt"), m, o);
    FAIL() << "three names for two levels";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("shows 2 levels"), std::string::npos) << e.what();
  }
  o.level_names.clear();
  o.cache_bytes = {50e6, 40e6};
  EXPECT_THROW(fit_bandwidth_csv(fixture("ert_try_h100_cg_read.txt"), m, o), InputError);
}

}  // namespace
}  // namespace roofprobe
