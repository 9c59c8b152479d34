// Other tools' sweeps (driver/fit/external_sweep.cpp) read and fitted as `fit --bandwidth-csv --from`
// reads them. The fixtures are roofprobe's own measurements written in each tool's layout
// (the H100 cg read of results/measured/h100-sxm), a real likwid-bench sweep of the dev VM and a
// real ERT GPU max file (a P100's, below).
#include "driver/fit/external_sweep.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "driver/fit/fit.hpp"
#include "driver/model/errors.hpp"
#include "driver/model/machine.hpp"
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

// A CPU machine fitted from one of the real ERT files under fixtures/, with no names given.
Machine fitted_from_ert(const std::string& name) {
  Machine m;
  ExternalSweepOptions o;
  o.format = SweepFormat::Ert;
  fit_bandwidth_csv(fixture(name), m, o);
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
  // The marker stands alone on its line: with text after it, the line is another program's
  // output among the rows (below), skipped, and the rows go on.
  TempFile g(
      "1000000 16 16000.000 16000000000 0\nMETA_DATA x\nInfo: a node's banner\n"
      "2000000 16 32000.000 32000000000 0\n",
      ".txt");
  EXPECT_EQ(read_external_sweep(g.path(), SweepFormat::Ert).size(), 2u);
  // A row whose first number is nan or inf is a damaged row, not text.
  EXPECT_NE(error_of("1000000 16 16000.000 16000000000 0\n-nan 16 1.0 16000 0\n", SweepFormat::Ert)
                .find(":2: '-nan' is not a number"),
            std::string::npos);
}

// ERT runs its program with `> try.NNN 2>&1`: a real try file of 8 MPI ranks (ERT 1.1.0,
// Results.p100.01/Run.018/FLOPS.001/MPI.0008/OpenMP.0001/try.003 in
// github.com/ebugger/Empirical-Roofline-Toolkit) opens with Open MPI's warnings about an
// InfiniBand device. ERT's preprocess skips them; so does the reader, and the sweep is fitted as
// its max file is (L1 883, ..., DRAM 48 GB/s in that run's max).
TEST(ExternalSweep, ErtTryFileWithMpiWarningsAmongItsRowsIsRead) {
  const std::vector<CurvePoint> p = read_external_sweep(fixture("ert_try_p100_host_8_ranks.txt"), SweepFormat::Ert);
  EXPECT_GT(p.size(), 100u);
  const Machine m = fitted_from_ert("ert_try_p100_host_8_ranks.txt");
  ASSERT_GE(m.memory.size(), 3u);
  EXPECT_GT(m.memory.front().gbs, 800);
  EXPECT_LT(m.memory.front().gbs, 1000);
  EXPECT_GT(m.memory.back().gbs, 40);
  EXPECT_LT(m.memory.back().gbs, 56);
  // A file of other programs' text only holds no sample, and the error quotes its first line.
  EXPECT_NE(error_of("-----\nThere are not enough slots available in the system to satisfy the 48 slots\n-----\n",
                     SweepFormat::Ert)
                .find("no ERT bandwidth sample in the file (its first line of text: 'There are not enough slots"),
            std::string::npos);
}

TEST(ExternalSweep, ErtLinesThatAreNotErtsAreErrors) {
  EXPECT_NE(
      error_of("1000 16 1.0 16000 0\n1000 16 trials 16000 0\n", SweepFormat::Ert).find(":2: 'trials' is not a number"),
      std::string::npos);
  EXPECT_NE(error_of("1000 16 1.0 16000\n", SweepFormat::Ert).find(":1: expected ERT's 5 columns"), std::string::npos);
  EXPECT_NE(error_of("1 2 3 4 5\n1 2 3 4 5 6 7 8 9 10 11\n", SweepFormat::Ert).find(":2: rows of 5 and 11"),
            std::string::npos);
  EXPECT_NE(error_of("\n\n", SweepFormat::Ert).find("no ERT bandwidth sample"), std::string::npos);
  // ERT's pre (the head of a real one, Results.p100.01 of ERT 1.1.0): max's columns, a row per
  // trial count. Its first rows are timer-bound (0.02 GB/s); it is refused at the repeated set.
  const std::string pre =
      "8 1 0.639 0.683 0.804 0.0199004975124 0.0234260614934 0.0250391236307 0.00124378109453 0.00146412884334 "
      "0.00156494522692\n"
      "8 2 0.348 0.364 0.384 0.0833333333333 0.0879120879121 0.0919540229885 0.00520833333333 0.00549450549451 "
      "0.00574712643678\n";
  EXPECT_NE(error_of(pre, SweepFormat::Ert)
                .find(":2: the working set 8 has a row at line 1 already: a row per trial "
                      "count is ERT's pre file; give its max file"),
            std::string::npos)
      << error_of(pre, SweepFormat::Ert);
  // ERT's roofline.json (its shape: the database ert_core.py writes): a figure per level.
  EXPECT_NE(
      error_of(
          "{\n   \"empirical\": {\n      \"gbytes\": {\n         \"data\": [\n            [\n               \"L1\", \n"
          "               176.44\n",
          SweepFormat::Ert)
          .find(":1: a JSON document, such as ERT's roofline.json, holds a figure per level and no sweep"),
      std::string::npos);
  // ERT's sum (the head of the same run's): a figure per level, no sweep.
  EXPECT_NE(error_of("    11.03 GFLOPs\n\n  1458.88 Weight\n\n   176.44 L1\n", SweepFormat::Ert)
                .find(":1: '11.03 GFLOPs': a figure per level, as in ERT's sum file, holds no sweep"),
            std::string::npos);
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

// A real ERT 1.1.0 GPU run: the max file of a summitdev node's P100 (GPU_Blocks 112, GPU_Threads
// 1024, FLOPS 1), as published in github.com/ebugger/Empirical-Roofline-Toolkit under
// Empirical_Roofline_Tool-1.1.0/Results.summitdev.ornl.gov.01/Run.001/. Up to 200 KiB its rate
// grows with the size at ~250 ns per pass (4 GB/s at 1 KiB), then plateaus at 1.1-1.7 TB/s to
// 3.3 MiB (the L2) and runs at 517-521 GB/s from 5 MiB to 1 GiB (the HBM). With those 57 sizes no
// level model describes the curve; without them it is fitted, and they are named.
TEST(ExternalSweep, ErtGpuMaxFileLeavesOutItsFixedCostSizesAndNamesThem) {
  Machine m = gpu();
  ExternalSweepOptions o;
  o.format = SweepFormat::Ert;
  o.level_names = {"L2", "HBM"};
  fit_bandwidth_csv(fixture("ert_max_p100_summitdev.txt"), m, o);
  ASSERT_EQ(m.memory.size(), 2u);
  EXPECT_GT(m.memory[0].gbs, 1300);
  EXPECT_LT(m.memory[0].gbs, 1750);
  EXPECT_NEAR(m.memory[1].gbs / 519, 1, 0.01);
  EXPECT_GT(m.memory[0].working_set_lo, 200e3);
  const auto named = std::find_if(m.missing.begin(), m.missing.end(), [](const std::string& s) {
    return s.find("the 57 sizes from 1 KiB to 201 KiB are left out") != std::string::npos &&
           s.find("a fixed cost") != std::string::npos;
  });
  EXPECT_NE(named, m.missing.end());
  // The H100 ERT file, which the model describes whole, keeps every size.
  Machine h = gpu();
  o.level_names = {"L2", "HBM"};
  fit_bandwidth_csv(fixture("ert_try_h100_cg_read.txt"), h, o);
  for (const std::string& s : h.missing) EXPECT_EQ(s.find("left out"), std::string::npos) << s;
}

// A real ERT 1.1.0 CPU run: the max file of a 4-rank, 2-thread run on a dual-socket host (FLOPS 1),
// as published in the same repository under Empirical_Roofline_Tool-1.1.0/Results.p100.01/Run.018/
// FLOPS.001/MPI.0004/OpenMP.0002/. ERT's own sum of it says L1 1003, L2 542, L3 290 and DRAM 69
// GB/s. Its L3 is flat at 290-353 GB/s from 11 to 33 MB and then fades into DRAM slowly (237 at
// 40 MB, 120 at 65 MB, 78 at 140 MB): along the sizes the L3 serves most, the rate falls as that
// knee does, and the L3 was neither published nor named. It is a level of its own.
TEST(ExternalSweep, ErtCpuMaxFileKeepsTheL3BeforeItsSlowFadeIntoDram) {
  const Machine m = fitted_from_ert("ert_max_p100_host_4_ranks_2_threads.txt");
  ASSERT_EQ(m.memory.size(), 4u);
  EXPECT_NEAR(m.memory[0].gbs / 1003, 1, 0.06);
  EXPECT_NEAR(m.memory[1].gbs / 570, 1, 0.07);  // ERT 542; the plateau's sizes run at 526-635
  EXPECT_GT(m.memory[2].gbs, 290);              // the L3's plateau: 290-353
  EXPECT_LT(m.memory[2].gbs, 353);
  EXPECT_NEAR(m.memory[3].gbs / 69, 1, 0.06);
  EXPECT_GT(m.memory[2].working_set_lo, 8e6);
  EXPECT_LT(m.memory[2].working_set_hi, 80e6);
}

// The same max file with its rows cut after 13.5 MiB and its run description kept, as ERT's
// driver writes it for a program that stopped early: its CONFIG planned sets up to 1 GiB
// (ERT_MEMORY_MAX), so the run is incomplete and its last level is no DRAM. Without the
// description, whether the rows reached the plan is unknown, and said.
TEST(ExternalSweep, AnErtRunThatStoppedShortOfItsPlannedSizesIsIncomplete) {
  std::ifstream in(fixture("ert_max_p100_host_4_ranks_2_threads.txt"));
  std::string rows, description, line;
  for (int n = 1; std::getline(in, line); ++n) (n <= 120 ? rows : description) += line + "\n";
  ASSERT_NE(description.find("\nMETA_DATA\n"), std::string::npos) << "the fixture's rows end at line 166";
  description.erase(0, description.find("\nMETA_DATA\n") + 1);
  ExternalSweepOptions o;
  o.format = SweepFormat::Ert;
  const auto note = [](const Machine& m, const std::string& text) {
    return std::any_of(m.missing.begin(), m.missing.end(),
                       [&](const std::string& s) { return s.find(text) != std::string::npos; });
  };
  {
    TempFile f(rows + description, ".txt");
    Machine m;
    fit_bandwidth_csv(f.path(), m, o);
    EXPECT_FALSE(m.complete);
    EXPECT_TRUE(note(m, "the sweep ends at 13.5 MiB, short of the 1 GiB its run planned"))
        << ::testing::PrintToString(m.missing);
    ASSERT_FALSE(m.memory.empty());
    EXPECT_NE(m.memory.back().level, "DRAM");
  }
  {
    TempFile f(rows, ".txt");
    Machine m;
    fit_bandwidth_csv(f.path(), m, o);
    EXPECT_TRUE(note(m, "does not end with the run description (META_DATA)")) << ::testing::PrintToString(m.missing);
  }
  // The whole file reached its plan (985 MiB of 1 GiB): complete, its last level DRAM.
  const Machine whole = fitted_from_ert("ert_max_p100_host_4_ranks_2_threads.txt");
  EXPECT_TRUE(whole.complete);
  EXPECT_EQ(whole.memory.back().level, "DRAM");
  EXPECT_FALSE(note(whole, "run description"));
  EXPECT_FALSE(note(whole, "stopped early"));
}

// The same host and ranks with 4 FLOPs per element (Run.018/FLOPS.004/MPI.0004/OpenMP.0002; ERT's
// sum: L1 958, L2 594, L3 309, DRAM 68 GB/s). Past 560 MB its memory drops from 64-67 to 39-42 GB/s
// (a fifth level), and the fit put that knee at 470 MB: two sizes at 64 and 65 GB/s on the wrong side
// made the least-squares slope of that flat level a knee's, and the fit that kept the L3 was refused.
TEST(ExternalSweep, ErtCpuMaxFileKeepsItsL3WhereALaterKneeIsMisplaced) {
  const Machine m = fitted_from_ert("ert_max_p100_host_4_ranks_2_threads_flops_4.txt");
  ASSERT_GE(m.memory.size(), 4u);
  EXPECT_NEAR(m.memory[0].gbs / 958, 1, 0.06);
  EXPECT_NEAR(m.memory[1].gbs / 594, 1, 0.06);
  EXPECT_NEAR(m.memory[2].gbs / 309, 1, 0.06);
  EXPECT_NEAR(m.memory.back().gbs / 40, 1, 0.08);
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
  // gpu-cache as it runs now prints the clocks it read before its table (an H200's first lines,
  // from the peers/gpu-cache.txt of the gpu-checks run in results/measured/h200-sxm); inside the
  // table, such a line is an error.
  const std::string clocked =
      "clock: 1980 1980 1980 1980 1980 1980 1980 1980 1980 1980 1980 1980 1980 1980 1980 1980 1980 1980 1980 1980 \n"
      "     data set   exec time     spread        Eff. bw       DRAM read      DRAM write         L2 read       L2 "
      "store\n"
      "         1 kB        34ms       0.4%   15400.3 GB/s         0 GB/s          0 GB/s          0 GB/s          0 "
      "GB/s \n"
      "         2 kB        24ms       0.2%   21915.2 GB/s         0 GB/s          0 GB/s          0 GB/s          0 "
      "GB/s \n";
  TempFile c(clocked, ".txt");
  p = read_external_sweep(c.path(), SweepFormat::GpuBenches);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_DOUBLE_EQ(p[1].y, 21915.2);
  EXPECT_NE(error_of(clocked + "clock: 1980\n", SweepFormat::GpuBenches).find(":5: no '<number> GB/s'"),
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
  // Runs of another test appended to the same file (a peakflops or copy run among the loads): its
  // rates are another kernel's, refused at the run's Test: line (the 44th, the file's second run).
  std::ifstream in(fixture("likwid_load_avx512_zen4_vm.txt"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t second = text.find("Test: load_avx512", text.find("Test: load_avx512") + 1);
  ASSERT_NE(second, std::string::npos);
  text.replace(second, std::string("Test: load_avx512").size(), "Test: copy_avx512");
  EXPECT_NE(error_of(text, SweepFormat::Likwid).find(":44: runs of two tests ('load_avx512' and 'copy_avx512')"),
            std::string::npos)
      << error_of(text, SweepFormat::Likwid);

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
  o.cache_bytes = {1e300};  // no cache, and no byte count
  EXPECT_THROW(fit_bandwidth_csv(fixture("ert_try_h100_cg_read.txt"), m, o), InputError);
}

// Rates a double holds but the fit's arithmetic does not: the readers refuse them as no memory's,
// and the level fit, reached from elsewhere, says so rather than taking them for too few sizes.
TEST(ExternalSweep, RatesNoFitCanTakeAreNamedAsSuch) {
  std::string text = "working_set_bytes,gbs\n";
  std::vector<CurvePoint> points;
  for (int i = 0; i < 15; ++i) {
    const double gbs = i < 7 ? 4e200 : 1e200;
    text += std::to_string(4096LL << i) + "," + (i < 7 ? "4e200" : "1e200") + "\n";
    points.push_back({static_cast<double>(4096LL << i), gbs});
  }
  TempFile f(text, ".csv");
  Machine m = gpu();
  try {
    fit_bandwidth_csv(f.path(), m, {});
    FAIL() << "a fit of rates at 1e200 GB/s";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find(":2: a rate of 4e+200 GB/s is over 10 PB/s"), std::string::npos) << e.what();
  }
  const LevelModelFit fit = fit_level_model(points);
  EXPECT_TRUE(fit.rejected);
  EXPECT_NE(fit.model.find("no level model could be fitted to the curve (rates 1e+200 to 4e+200 GB/s)"),
            std::string::npos)
      << fit.model;
}

// ---- the result tables gpu-benches publishes (tests/unit/fixtures/gpu-benches/README.md) --------

// What `fit --gpu NAME` takes from results/reference/NAME.yaml.
ExternalSweepOptions with_gpu(const std::string& reference, Machine& m) {
  const Machine ref =
      read_machine_file(std::string(ROOFPROBE_SOURCE_DIR) + "/results/reference/" + reference + ".yaml");
  ExternalSweepOptions o;
  o.format = SweepFormat::GpuBenches;
  o.device_caches = ref.device.caches;
  o.caches_from = "--gpu " + reference;
  for (const MemoryLevel& l : ref.memory)
    if (l.level == ref.device.memory_name) o.memory_peak_gbs = std::max(o.memory_peak_gbs, l.gbs);
  m = gpu();
  return o;
}

struct Expected {
  std::string name;
  double lo, hi;  // GB/s: the plateau's range in the table
};

// The levels, their names and rates as the table shows them; every level with a 95% interval.
std::string check_levels(const Machine& m, const std::vector<Expected>& want) {
  std::string got;
  for (const MemoryLevel& l : m.memory) got += " " + l.level + " " + std::to_string(std::lround(l.gbs));
  if (m.memory.size() != want.size()) return "levels:" + got;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const MemoryLevel& l = m.memory[i];
    if (l.level != want[i].name || l.gbs < want[i].lo || l.gbs > want[i].hi) return "levels:" + got;
    if (!l.gbs_ci95.known()) return l.level + " has no interval:" + got;
  }
  return "";
}

bool has_note(const Machine& m, const std::string& part) {
  return std::any_of(m.missing.begin(), m.missing.end(),
                     [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

TEST(GpuBenchesTables, V100GpuCacheKneeSampleIsNoLevel) {
  Machine m;
  const ExternalSweepOptions o = with_gpu("v100-sxm2", m);
  fit_bandwidth_csv(fixture("gpu-benches/gpu-cache_v100.txt"), m, o);
  // L1 13.7-13.9 TB/s to 120 kB; 7.9 at 172 kB is one size in the knee; L2 2.3-2.45 TB/s on.
  EXPECT_EQ(check_levels(m, {{"L1", 13600, 13950}, {"L2", 2280, 2470}}), "");
  // It ends at 68 MB still at 2.3 TB/s, far above the V100's 900 GB/s HBM: no HBM level.
  EXPECT_TRUE(has_note(m, "before HBM is reached")) << ::testing::PrintToString(m.missing);
}

TEST(GpuBenchesTables, ASweepFasterThanTheReferencesMemoryFarPastItsCachesIsRefused) {
  // An H200's gpu-l2-cache table (4.2 TB/s at 4.66 GiB) named by the H100 PCIe's reference
  // (50 MiB L2, 2 TB/s HBM): no cache serves 95 times its L2, and its HBM is slower than that.
  Machine m;
  ExternalSweepOptions o = with_gpu("h100-pcie", m);
  try {
    fit_bandwidth_csv(fixture("gpu-benches/gpu-l2-cache_h200.txt"), m, o);
    ADD_FAILURE() << "an H200 sweep was named by the H100 PCIe's caches";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--gpu h100-pcie: the sweep runs at"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("ran on another GPU"), std::string::npos) << e.what();
  }
  // Its own GPU's reference names the same table's HBM.
  o = with_gpu("h200-sxm", m);
  fit_bandwidth_csv(fixture("gpu-benches/gpu-l2-cache_h200.txt"), m, o);
  EXPECT_TRUE(std::any_of(m.memory.begin(), m.memory.end(), [](const MemoryLevel& l) { return l.level == "HBM"; }));
}

TEST(GpuBenchesTables, A100GpuCacheEndsInTheFarL2) {
  Machine m;
  const ExternalSweepOptions o = with_gpu("a100-sxm4-80gb", m);
  fit_bandwidth_csv(fixture("gpu-benches/gpu-cache_a100_80.txt"), m, o);
  EXPECT_EQ(check_levels(m, {{"L1", 18700, 19300}, {"L2", 4250, 4720}, {"L2.b", 2440, 3100}}), "");
  EXPECT_TRUE(has_note(m, "before HBM is reached")) << ::testing::PrintToString(m.missing);
}

TEST(GpuBenchesTables, H100PcieGpuCacheFarL2IsNotHbm) {
  Machine m;
  const ExternalSweepOptions o = with_gpu("h100-pcie", m);
  fit_bandwidth_csv(fixture("gpu-benches/gpu-cache_h100_pcie.txt"), m, o);
  // 3.6-4.1 TB/s from 31 to 68 MB is the far L2 half, not HBM (2 TB/s on this card).
  EXPECT_EQ(check_levels(m, {{"L1", 24900, 25300}, {"L2", 7600, 8550}, {"L2.b", 3600, 4120}}), "");
  EXPECT_TRUE(has_note(m, "before HBM is reached")) << ::testing::PrintToString(m.missing);
}

TEST(GpuBenchesTables, H200GpuCacheKneeOfFourSizesIsNoLevel) {
  // Recorded on an H200 (README.md there): its L2 sizes alternate between ~7.7 and ~8.9 TB/s,
  // which widens the noise the neighbouring sizes give, and four sizes down the L1 knee (18.4,
  // 15.2, 13.8, 11.0 TB/s) were fitted as a level of 14.6 TB/s between L1 and L2.
  Machine m;
  const ExternalSweepOptions o = with_gpu("h200-sxm", m);
  fit_bandwidth_csv(fixture("gpu-benches/gpu-cache_h200_run.txt"), m, o);
  // Past 33 MB the sweep is in the far L2; the reference file's L2 is 60 MiB, so the level there
  // is named a second L2 level, and no phantom sits between L1 and L2.
  Machine near = m;
  if (near.memory.size() > 2) near.memory.resize(2);
  EXPECT_EQ(check_levels(near, {{"L1", 25300, 29300}, {"L2", 7600, 9400}}), "");
  for (const MemoryLevel& l : m.memory) EXPECT_FALSE(l.gbs > 9400 && l.gbs < 25300) << l.level << " " << l.gbs;
}

TEST(GpuBenchesTables, Mi210GpuCacheAgentLinesBeforeTheRows) {
  // ROCm's gpu-cache prints the HSA agents it found between the header and the first row.
  const std::vector<CurvePoint> p =
      read_external_sweep(fixture("gpu-benches/gpu-cache_mi210.txt"), SweepFormat::GpuBenches);
  ASSERT_EQ(p.size(), 73u);
  EXPECT_DOUBLE_EQ(p.front().x, 4 * 1024.0);
  EXPECT_DOUBLE_EQ(p.front().y, 10566.5);
  Machine m = gpu();
  ExternalSweepOptions o;
  o.format = SweepFormat::GpuBenches;
  fit_bandwidth_csv(fixture("gpu-benches/gpu-cache_mi210.txt"), m, o);
  // Named by order (no reference file for an MI210): its L1, then its L2 to the end.
  EXPECT_EQ(check_levels(m, {{"L1", 10500, 10650}, {"HBM", 4700, 5150}}), "");
  EXPECT_TRUE(has_note(m, "levels named by their order")) << ::testing::PrintToString(m.missing);
}

// Tables of GPUs without a reference file: fitted without capacities, the levels are named by
// their order (the last as memory, whatever it is).
Machine fit_by_order(const std::string& file) {
  Machine m = gpu();
  ExternalSweepOptions o;
  o.format = SweepFormat::GpuBenches;
  fit_bandwidth_csv(fixture("gpu-benches/" + file), m, o);
  return m;
}

// gpu-benches' gpu-cache on an MI300X (github.com/xxrjun/gpu-benches): L1 at 38.8 TB/s up to
// 48 kB, L2 near 27.5 TB/s to 4 MB, then down to 5.3-6.7 TB/s by 40-270 MB, where the rows rise
// again to 13-23 TB/s from 312 MiB to the end. Fitted with that tail, the L1 was lost in one
// 27.7 TB/s level and the tail's rates were averaged into a "DRAM" of 6.0. Without it, the
// levels before it stand, the file is incomplete, and its last level is not called memory.
TEST(GpuBenchesTables, Mi300xGpuCacheTailThatRisesAgainIsLeftOut) {
  Machine m = fit_by_order("gpu-cache_mi300x_xxrjun.txt");
  ASSERT_GE(m.memory.size(), 3u) << ::testing::PrintToString(m.missing);
  EXPECT_EQ(m.memory[0].level, "L1");
  EXPECT_NEAR(m.memory[0].gbs / 38800, 1, 0.03);
  EXPECT_EQ(m.memory[1].level, "L2");
  EXPECT_NEAR(m.memory[1].gbs / 27500, 1, 0.03);
  EXPECT_NEAR(m.memory.back().gbs / 5560, 1, 0.06);
  EXPECT_NE(m.memory.back().level, "HBM");
  EXPECT_FALSE(m.complete);
  EXPECT_TRUE(has_note(m, "9 largest sizes, 312 MiB to 1.07 GiB, are left out: their rate rises again"))
      << ::testing::PrintToString(m.missing);
  for (const MemoryLevel& l : m.memory) EXPECT_LT(l.working_set_hi, 300e6) << l.level;
}

// gpu-benches' gpu-cache on an RX 6900 XT (github.com/xxrjun/gpu-benches): its smallest sets
// rise with the launch to 23.3 TB/s at 32 kB and fall at once to 8.2 at 192 kB. The launch ramp
// of the model drew a first level of 28.5 TB/s (95% CI 17.6 - 46.0, spread 145%) through them,
// 22% above every sample: a rate no size ran at, published as L1.
TEST(GpuBenchesTables, Rx6900xtFirstLevelAboveEverySampleIsNotPublished) {
  Machine m = fit_by_order("gpu-cache_rx6900xt_xxrjun.txt");
  ASSERT_FALSE(m.memory.empty()) << ::testing::PrintToString(m.missing);
  for (const MemoryLevel& l : m.memory) EXPECT_LT(l.gbs, 23258.3) << l.level;
  // Not published, but named: the curve has a faster level there, which the levels after it keep
  // their place for.
  EXPECT_TRUE(has_note(m, "above the fastest sample of its sizes, 23258")) << ::testing::PrintToString(m.missing);
  EXPECT_EQ(m.memory.front().level, "L2");
  EXPECT_NEAR(m.memory.front().gbs / 4658, 1, 0.05);
  // Its 17 largest sizes rise again (5.5-6.3 TB/s past 89 MB): left out, and the last level
  // before them is not called memory.
  EXPECT_TRUE(has_note(m, "17 largest sizes, 88.9 MiB to 1.07 GiB, are left out"))
      << ::testing::PrintToString(m.missing);
  EXPECT_NE(m.memory.back().level, "DRAM");
  EXPECT_FALSE(m.complete);
}

// No table's published level lies above every sample of its span by more than a level's +-5%.
TEST(GpuBenchesTables, NoPublishedLevelIsAboveEverySampleOfItsSizes) {
  for (const char* file :
       {"gpu-cache_v100.txt", "gpu-cache_a100_80.txt", "gpu-cache_h100_pcie.txt", "gpu-cache_h200_run.txt",
        "gpu-cache_mi210.txt", "gpu-cache_a40.txt", "gpu-cache_l40.txt", "gpu-cache_h200_nvl_xxrjun.txt",
        "gpu-cache_mi300x_xxrjun.txt", "gpu-cache_rx6900xt_xxrjun.txt", "gpu-l2-cache_a100_80.txt",
        "gpu-l2-cache_h100_pcie.txt", "gpu-l2-cache_h200.txt", "gpu-l2-cache_l40.txt", "gpu-l2-cache_l40_71a3611.txt",
        "gpu-l2-cache_gb200_xxrjun.txt", "gpu-l2-cache_mi100.txt", "gpu-l2-cache_mi210.txt",
        "gpu-l2-cache_rx6900xt.txt"}) {
    const std::vector<CurvePoint> points =
        read_external_sweep(fixture(std::string("gpu-benches/") + file), SweepFormat::GpuBenches);
    const Machine m = fit_by_order(file);
    for (const MemoryLevel& l : m.memory) {
      double best = 0;
      for (const CurvePoint& p : points)
        if (p.x >= l.working_set_lo && p.x <= l.working_set_hi) best = std::max(best, p.y);
      EXPECT_LE(l.gbs, 1.05 * best) << file << " " << l.level;
    }
  }
}

// gpu-cache prints the device's memory counters beside the bandwidth ("DRAM read", "DRAM write").
// Every multiprocessor reads the same set, so at an A100's largest sets (22-68 MB, 2.6-2.9 TB/s)
// its DRAM read column stays at 23-27 GB/s: the last level is a cache, not memory, even named by
// order. Columns that read 0 throughout (a run without counters) say nothing.
TEST(GpuBenchesTables, GpuCacheMemoryCountersNameALastLevelThatStayedInACache) {
  ExternalSweepShape shape;
  read_external_sweep(fixture("gpu-benches/gpu-cache_a100_80.txt"), SweepFormat::GpuBenches, &shape);
  ASSERT_FALSE(shape.memory_traffic.empty());
  EXPECT_DOUBLE_EQ(shape.memory_traffic.back().x, 68320 * 1024.0);
  EXPECT_DOUBLE_EQ(shape.memory_traffic.back().y, 24);  // DRAM read 24, DRAM write 0
  Machine m = fit_by_order("gpu-cache_a100_80.txt");
  ASSERT_EQ(m.memory.size(), 3u) << ::testing::PrintToString(m.missing);
  EXPECT_EQ(m.memory.back().level, "L3");
  EXPECT_TRUE(has_note(m, "is L3, not HBM: the table's DRAM read and write columns give 23-27 GB/s"))
      << ::testing::PrintToString(m.missing);
  // The MI210's counters carry its last level's rate: named memory, as before.
  read_external_sweep(fixture("gpu-benches/gpu-cache_mi210.txt"), SweepFormat::GpuBenches, &shape);
  EXPECT_FALSE(shape.memory_traffic.empty());
  EXPECT_EQ(fit_by_order("gpu-cache_mi210.txt").memory.back().level, "HBM");
  // The A40's columns are 0 on every row; gpu-l2-cache's header names no counters.
  for (const char* file : {"gpu-cache_a40.txt", "gpu-l2-cache_a100_80.txt"}) {
    ExternalSweepShape none;
    read_external_sweep(fixture(std::string("gpu-benches/") + file), SweepFormat::GpuBenches, &none);
    EXPECT_TRUE(none.memory_traffic.empty()) << file;
  }
  EXPECT_EQ(fit_by_order("gpu-cache_a40.txt").memory.back().level, "HBM");
}

TEST(GpuBenchesTables, A40AndL40GpuCacheL1ThenL2) {
  EXPECT_EQ(check_levels(fit_by_order("gpu-cache_a40.txt"), {{"L1", 9250, 9360}, {"HBM", 2190, 2450}}), "");
  EXPECT_EQ(check_levels(fit_by_order("gpu-cache_l40.txt"), {{"L1", 22200, 22630}, {"HBM", 5370, 5720}}), "");
}

TEST(GpuBenchesTables, SlowlyDecliningMemoryIsOneLevel) {
  // The memory's rate drifts down with the set: 845 to 796 GB/s on the L40, 513 to 450 on the
  // RX 6900 XT, 1.37 to 1.25 TB/s on the MI210. A knee no steeper than that drift is not a knee:
  // these were fitted with two memory levels (845 and 795; 513 and 442; 1350 and 1257).
  EXPECT_EQ(check_levels(fit_by_order("gpu-l2-cache_l40.txt"), {{"L1", 5100, 5340}, {"HBM", 796, 850}}), "");
  EXPECT_EQ(check_levels(fit_by_order("gpu-l2-cache_rx6900xt.txt"),
                         {{"L1", 4550, 4700}, {"L2", 1900, 2000}, {"HBM", 450, 513}}),
            "");
  EXPECT_EQ(check_levels(fit_by_order("gpu-l2-cache_mi210.txt"), {{"L1", 4700, 5110}, {"HBM", 1250, 1460}}), "");
  // Scattered from size to size (0.79 to 1.31 TB/s): one level, not 1132 and 853 with a 2.34
  // TB/s one from three sizes in the knee before them.
  EXPECT_EQ(check_levels(fit_by_order("gpu-l2-cache_mi100.txt"), {{"L1", 2600, 2730}, {"HBM", 850, 1000}}), "");
}

TEST(GpuBenchesTables, AGentleDeclineIsNotSplitByAKneeThatSharesASharpWidth) {
  // One knee width shared by every knee took the narrowest (the L2's into memory) for a knee
  // inside memory's even decline from 743 to 661 GB/s: 5255, 732 and 666 (older L40 table).
  EXPECT_EQ(check_levels(fit_by_order("gpu-l2-cache_l40_71a3611.txt"), {{"L1", 5200, 5300}, {"HBM", 661, 745}}), "");
  // A GB200's L2, 22.6 TB/s at 1.5 MB declining to 19 at 20 MB and flat to 84 MB: one level, not
  // 21226 and 18916 with a knee of that width at 7.8 MB between two sizes 1% apart.
  EXPECT_EQ(check_levels(fit_by_order("gpu-l2-cache_gb200_xxrjun.txt"), {{"L1", 18700, 22700}, {"HBM", 7700, 7900}}),
            "");
  // A real drop keeps its knee, though a wide knee of its own also draws the L2's decline before
  // it: an H200 NVL's gpu-cache L2, 12.4 to 9.9 TB/s, then 7.8 and 7.1 at the next two sizes.
  EXPECT_EQ(check_levels(fit_by_order("gpu-cache_h200_nvl_xxrjun.txt"),
                         {{"L1", 29000, 31500}, {"L2", 9800, 12500}, {"HBM", 6200, 7100}}),
            "");
}

TEST(GpuBenchesTables, A100GpuL2CacheStartsPastL1) {
  Machine m;
  const ExternalSweepOptions o = with_gpu("a100-sxm4-80gb", m);
  fit_bandwidth_csv(fixture("gpu-benches/gpu-l2-cache_a100_80.txt"), m, o);
  // L2 5.26-5.48 TB/s to 25 MB; HBM declining slowly from 1.95 to 1.73 TB/s: one level.
  EXPECT_EQ(check_levels(m, {{"L2", 5250, 5490}, {"HBM", 1720, 1960}}), "");
}

TEST(GpuBenchesTables, H100PcieGpuL2CacheGradualDeclineIsOneLevel) {
  Machine m;
  const ExternalSweepOptions o = with_gpu("h100-pcie", m);
  fit_bandwidth_csv(fixture("gpu-benches/gpu-l2-cache_h100_pcie.txt"), m, o);
  // L2 from 7.76 TB/s at 1 MB down to 6.85-6.95 at 9-37 MB: one sloped level, not 7762, 7240, 6983.
  EXPECT_EQ(check_levels(m, {{"L2", 6840, 7770}, {"HBM", 1920, 2000}}), "");
}

TEST(GpuBenchesTables, H200GpuL2CacheGradualDeclineIsOneLevel) {
  Machine m;
  const ExternalSweepOptions o = with_gpu("h200-sxm", m);
  fit_bandwidth_csv(fixture("gpu-benches/gpu-l2-cache_h200.txt"), m, o);
  // 13.5 TB/s at the first size, then 11.7 down to 9.5-10.1 at 9-41 MB: one L2 level, then HBM.
  EXPECT_EQ(check_levels(m, {{"L2", 9450, 11750}, {"HBM", 3850, 3920}}), "");
}

TEST(GpuBenchesTables, WithoutCapacitiesTheNamesSaySoAndWithTooFewCachesTheFitRefuses) {
  Machine m = gpu();
  ExternalSweepOptions o;
  o.format = SweepFormat::GpuBenches;
  fit_bandwidth_csv(fixture("gpu-benches/gpu-l2-cache_h200.txt"), m, o);
  EXPECT_TRUE(has_note(m, "named by their order")) << ::testing::PrintToString(m.missing);
  // Only an L1 given for a sweep whose knee is at 50 MB: no cache near that knee.
  Machine few = gpu();
  o.cache_bytes = {256 * 1024.0};
  try {
    fit_bandwidth_csv(fixture("gpu-benches/gpu-l2-cache_h200.txt"), few, o);
    FAIL() << "a knee at 50 MB named from a 256 KiB cache";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("no cache near it"), std::string::npos) << e.what();
  }
}

TEST(GpuBenchesTables, MbPerSecondDecimalCommaAndTwoTablesAreRefused) {
  const std::string header = "     data set   exec time     spread        Eff. bw       DRAM read\n";
  EXPECT_NE(error_of(header + "  2 kB  5ms  0.4%  13646300.0 MB/s  0 GB/s\n", SweepFormat::GpuBenches)
                .find(":2: the bandwidth is in 'MB/s'"),
            std::string::npos);
  EXPECT_NE(error_of(header + "  2 kB  5ms  0.4%  13646,3 GB/s  0 GB/s\n", SweepFormat::GpuBenches)
                .find(":2: '13646,3' has a decimal comma"),
            std::string::npos);
  EXPECT_NE(error_of(header + "  2 kB  5ms  0.4%  13646.3 GB/s\n" + header + "  2 kB  5ms  0.4%  1.0 GB/s\n",
                     SweepFormat::GpuBenches)
                .find(":3: a second table starts here"),
            std::string::npos);
}

// A rate that is not a measurement is refused at its line, never dropped or read from the next
// column: the search for '<number> GB/s' once passed over "inf GB/s" to DRAM read's "0 GB/s" and
// read "-5 GB/s" as 5.
TEST(GpuBenchesTables, RatesThatAreNoMeasurementAreRefusedAtTheirLine) {
  const std::string header = "     data set   exec time     spread        Eff. bw       DRAM read\n";
  const std::string good = "  1 kB  5ms  0.4%  13646.3 GB/s  0 GB/s\n";
  for (const auto& [rate, why] :
       std::vector<std::pair<std::string, std::string>>{{"inf", "'inf' before 'GB/s' is not a number"},
                                                        {"nan", "'nan' before 'GB/s' is not a number"},
                                                        {"0x10", "'0x10' before 'GB/s' is not a number"},
                                                        {"-5", "the rate -5 GB/s is not a positive number"},
                                                        {"0.0", "the rate 0 GB/s is not a positive number"},
                                                        {"1e300", "a rate of 1e+300 GB/s is over 10 PB/s"}}) {
    const std::string e =
        error_of(header + good + "  2 kB  5ms  0.4%  " + rate + " GB/s  0 GB/s\n", SweepFormat::GpuBenches);
    EXPECT_NE(e.find(":3: " + why), std::string::npos) << rate << ": " << e;
  }
  // A size with a comma is refused at its line, not read from its digits after the comma.
  for (const std::string size : {"7,2 kB", "1,012 kB"})
    EXPECT_NE(error_of(header + good + "  " + size + "  5ms  0.4%  13646.3 GB/s  0 GB/s\n", SweepFormat::GpuBenches)
                  .find(":3: '" + size + "': a size with a comma"),
              std::string::npos)
        << size;
  // Rates and sizes written without a space before the unit are read as such.
  TempFile tight(header + "  2kB  5ms  0.4%  13646.3GB/s  0GB/s\n", ".txt");
  const std::vector<CurvePoint> p = read_external_sweep(tight.path(), SweepFormat::GpuBenches);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_DOUBLE_EQ(p[0].y, 13646.3);
}

TEST(ExternalSweep, ErtAndLikwidSamplesThatAreNoMeasurementAreRefusedAtTheirLine) {
  const std::string try_row = "     1000000   16   16000.000   16000000000   0\n";
  // A trial timed at 0.000 us (ERT's 3 decimals) is no rate: skipped, the set's other trials stand.
  TempFile zero_time(try_row + "1000000 1 0.000 1000000 0\n", ".txt");
  const std::vector<CurvePoint> kept = read_external_sweep(zero_time.path(), SweepFormat::Ert);
  ASSERT_EQ(kept.size(), 1u);
  EXPECT_NEAR(kept[0].y, 1000, 1e-3);
  EXPECT_NE(error_of(try_row + "2000000 16 -35.2 32000000000 0\n", SweepFormat::Ert).find(":2: a negative number"),
            std::string::npos);
  EXPECT_NE(error_of(try_row + "2000000 16 0x10 32000000000 0\n", SweepFormat::Ert).find(":2: '0x10' is not a number"),
            std::string::npos);
  EXPECT_NE(error_of("8 134217728 385955.789 386532.213 407579.93 0 0 0 0.3 0.34 0.35\n", SweepFormat::Ert)
                .find(":1: the rate 0 GB/s is not a positive number"),
            std::string::npos);
  const std::string run = "Size (Byte):\t\t7936\nMByte/s:\t\t113800.5\n";
  EXPECT_NE(error_of(run + "Size (Byte):\t\t15872\nMByte/s:\t\t0\n", SweepFormat::Likwid)
                .find(":4: the rate 0 GB/s is not a positive number"),
            std::string::npos);
  EXPECT_NE(error_of(run + "Size (Byte):\t\t15872\nMByte/s:\t\t-81766.38\n", SweepFormat::Likwid)
                .find(":4: the rate -81.7664 GB/s is not a positive number"),
            std::string::npos);
  EXPECT_NE(error_of(run + "Size (Byte):\t\t1e30\nMByte/s:\t\t81766.38\n", SweepFormat::Likwid)
                .find(":4: a working set of 1e+30 bytes is over 1 PiB"),
            std::string::npos);
}

// likwid-bench 5.2.2 as it runs on this project's build machine: `likwid-bench -t load_avx
// -W N:<size>:1 -s 0.1` for 30 sizes from 8 kB to 256 MB, the runs appended to one file.
TEST(LikwidBench, RecordedSweepIsReadRunByRun) {
  const std::vector<CurvePoint> p =
      read_external_sweep(fixture("likwid_load_avx_epyc_vm_1thread.txt"), SweepFormat::Likwid);
  ASSERT_EQ(p.size(), 30u);
  EXPECT_DOUBLE_EQ(p.front().x, 7936);  // likwid sanitizes 8 kB to 7936 bytes
  EXPECT_NEAR(p.front().y, 81.76638, 1e-6);
  EXPECT_DOUBLE_EQ(p.back().x, 256000000);
}

// The same file cut after the 1.5 MB run: its last level is a cache, not DRAM.
TEST(LikwidBench, TruncatedSweepHasNoMemoryLevel) {
  std::ifstream in(fixture("likwid_load_avx_epyc_vm_1thread.txt"));
  std::string text, line;
  bool cut = false;
  while (!cut && std::getline(in, line)) {
    text += line + "\n";
    cut = line.rfind("MByte/s:", 0) == 0 && text.find("Size (Byte):\t\t1536000") != std::string::npos;
  }
  ASSERT_TRUE(cut);
  TempFile f(text, ".txt");
  Machine m;
  m.device.kind = "cpu";
  m.device.memory_name = "DRAM";
  ExternalSweepOptions o;
  o.format = SweepFormat::Likwid;
  o.cache_bytes = {32 * 1024.0, 512 * 1024.0, 32 * 1048576.0};  // this machine's L1d, L2, L3 per core
  fit_bandwidth_csv(f.path(), m, o);
  ASSERT_FALSE(m.memory.empty());
  for (const MemoryLevel& l : m.memory) EXPECT_NE(l.level, "DRAM");
  EXPECT_TRUE(has_note(m, "before DRAM is reached")) << ::testing::PrintToString(m.missing);
  // A decimal comma in a run's rate is not read as another number.
  EXPECT_NE(error_of("Size (Byte):\t\t16000\nMByte/s:\t\t15409,39\n", SweepFormat::Likwid).find("without a number"),
            std::string::npos);
}

}  // namespace
}  // namespace roofprobe
