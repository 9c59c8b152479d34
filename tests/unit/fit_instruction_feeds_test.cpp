// fit_samples on the GPU feeds beyond memory levels and FLOP ceilings: named levels (shared,
// system), warp GIPS against SMs x schedulers x clock, the predication table, global and shared
// walls, tensor instruction ceilings, scaling trajectories and clock readings. Test probes with
// the same FeedSpecs as the CUDA probes are registered under the backend "fit_feeds_test", so
// these tests run without a GPU and do not depend on the CUDA probes being built.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "driver/fit/fit.hpp"
#include "driver/model/machine.hpp"

namespace roofprobe {
namespace {

class FeedOnlyProbe : public Probe {
 public:
  explicit FeedOnlyProbe(ProbeInfo info) : info_(std::move(info)) {}
  const ProbeInfo& info() const override { return info_; }
  std::uint64_t footprint_bytes(const Params&) const override { return 0; }
  std::unique_ptr<PreparedPoint> prepare(const Params&, const DeviceInfo&) const override {
    throw std::logic_error("feed test probe cannot run");
  }

 private:
  ProbeInfo info_;
};

FeedSpec feed(FeedKind kind, const std::string& metric, std::vector<std::string> series,
              const std::string& pattern = {}) {
  FeedSpec f;
  f.kind = kind;
  f.metric = metric;
  f.series_axes = std::move(series);
  f.name_pattern = pattern;
  return f;
}

void add(const std::string& name, std::vector<FeedSpec> feeds) {
  ProbeInfo info;
  info.name = name;
  info.backend = "fit_feeds_test";
  info.feeds = std::move(feeds);
  Registry::instance().add_probe(std::make_unique<FeedOnlyProbe>(info));
}

void register_feed_probes() {
  static const bool done = [] {
    FeedSpec shared_level = feed(FeedKind::NamedLevel, "gbs", {"conflict_degree"});
    shared_level.level_name = "shared";
    shared_level.primary_series = "conflict_degree=1";
    FeedSpec shared_walls = feed(FeedKind::Walls, "shared_gtxn_s", {"conflict_degree"}, "conflict-{conflict_degree}");
    shared_walls.wall_set = "shared";
    add("ff_shared", {shared_level, shared_walls});

    FeedSpec global_walls = feed(FeedKind::Walls, "gtxn_s", {"stride", "word_bytes"}, "stride-{stride}");
    global_walls.wall_set = "global";
    add("ff_stride", {global_walls});

    FeedSpec gips = feed(FeedKind::WarpGips, "gips", {});
    FeedSpec pred = feed(FeedKind::Predication, "gips", {});
    pred.x_axis = "active_lanes";
    add("ff_issue", {gips, pred});

    add("ff_tensor", {feed(FeedKind::ComputeCeiling, "gflops", {"type"}, "TENSOR.{type}")});
    FeedSpec by_api = feed(FeedKind::ComputeCeiling, "gflops", {"type"}, "TENSOR.{type}");
    by_api.instruction_axis = "api";
    by_api.instruction_text = {{"mma", "mma.sync m16n8k16"},
                               {"wgmma", "wgmma.mma_async m64n128k16"},
                               {"api=mma;type=bf16.fp32", "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"}};
    add("ff_tensor_api", {by_api});

    FeedSpec scaling = feed(FeedKind::Scaling, "", {"kernel"}, "{kernel}");
    scaling.x_axis = "sm_count";
    add("ff_scaling", {scaling});

    add("ff_clock", {feed(FeedKind::Clock, "clock_mhz", {"load"}, "{load}")});

    FeedSpec system = feed(FeedKind::NamedLevel, "gbs", {"transfer"});
    system.level_name = "system";
    system.primary_series = "transfer=h2d";
    add("ff_system", {system});

    FeedSpec bad_walls = feed(FeedKind::Walls, "gtxn_s", {}, "x");
    bad_walls.wall_set = "texture";
    add("ff_bad_walls", {bad_walls});
    return true;
  }();
  (void)done;
}

// Samples of one point with the given rates; counts per launch scale with `seconds`.
std::vector<Sample> point(const std::string& probe, Params params, double seconds, double bytes, double flops,
                          double transactions, double warp_instructions, double wavefronts, int n = 3) {
  std::vector<Sample> out;
  for (int k = 0; k < n; ++k) {
    Sample s;
    s.backend = "fit_feeds_test";
    s.probe = probe;
    s.params = params;
    s.sample = k;
    s.seconds = seconds * (1 + 0.01 * k);  // the median is the middle sample
    s.bytes = bytes;
    s.flops = flops;
    s.transactions = transactions;
    s.warp_instructions = warp_instructions;
    s.shared_wavefronts = wavefronts;
    s.gbs = bytes / s.seconds / 1e9;
    s.gflops = flops / s.seconds / 1e9;
    s.gtxn_s = transactions / s.seconds / 1e9;
    s.gips = warp_instructions / s.seconds / 1e9;
    s.shared_gtxn_s = wavefronts / s.seconds / 1e9;
    out.push_back(s);
  }
  return out;
}

void append(std::vector<Sample>& to, const std::vector<Sample>& from) { to.insert(to.end(), from.begin(), from.end()); }

Machine gpu_machine() {
  Machine m;
  m.device.kind = "gpu";
  m.device.compute_units = 100;
  m.device.clock_measured_mhz = 1000;
  m.device.extra["schedulers_per_sm"] = "4";
  m.device.caches = {{"L1", 256 << 10, 100}, {"L2", 50 << 20, 1}};
  m.device.memory_name = "HBM";
  return m;
}

TEST(FitFeeds, SharedLevelAndWallsFromConflictDegrees) {
  register_feed_probes();
  std::vector<Sample> samples;
  // 1e9 instructions per launch; degree d takes d wavefronts per instruction and d times longer.
  for (int d : {1, 2, 4, 32}) {
    const double inst = 1e9;
    append(samples,
           point("ff_shared", {{"conflict_degree", std::to_string(d)}}, 0.1 * d, 128 * inst, 0, 0, inst, d * inst));
  }
  append(samples, point("ff_shared", {{"conflict_degree", "broadcast"}}, 0.1, 128e9, 0, 0, 1e9, 1e9));
  Machine m = gpu_machine();
  fit_samples(samples, m);
  ASSERT_EQ(m.memory.size(), 1u);
  const MemoryLevel& shared = m.memory[0];
  EXPECT_EQ(shared.level, "shared");
  EXPECT_NEAR(shared.gbs, 1280, 1280 * 0.011);
  EXPECT_DOUBLE_EQ(shared.gtxn_s, shared.gbs / 128) << "shared transactions are 128-byte wavefronts";
  EXPECT_NEAR(shared.bytes_per_clk_per_unit, 12.8, 0.2);
  EXPECT_EQ(shared.by_series.count("conflict_degree=32"), 1u);
  // Three samples at 1280, 1267 and 1255 GB/s: an interval about the median that holds them.
  ASSERT_TRUE(shared.gbs_ci95.known());
  EXPECT_LT(shared.gbs_ci95.lo, shared.gbs);
  EXPECT_GT(shared.gbs_ci95.hi, shared.gbs);
  EXPECT_LT(shared.gbs_ci95.lo, 1255);
  EXPECT_GT(shared.gbs_ci95.hi, 1280);

  ASSERT_EQ(m.shared_walls.size(), 5u);
  // Highest intensity first; the 1-way and broadcast walls are at 1, 32-way at 1/32.
  EXPECT_DOUBLE_EQ(m.shared_walls[0].instruction_intensity, 1.0);
  const Wall& w32 = m.shared_walls.back();
  EXPECT_EQ(w32.pattern, "conflict-32");
  EXPECT_EQ(w32.conflict_degree, 32);
  EXPECT_DOUBLE_EQ(w32.instruction_intensity, 1.0 / 32);
  EXPECT_NEAR(w32.gtxn_s, 10, 0.11);  // 32e9 wavefronts in 3.2 s
  EXPECT_NEAR(w32.warp_gips, 10.0 / 32, 0.01);
  EXPECT_NEAR(w32.measured_intensity, 1.0 / 32, 1e-9);
  const auto broadcast = std::find_if(m.shared_walls.begin(), m.shared_walls.end(),
                                      [](const Wall& w) { return w.pattern == "conflict-broadcast"; });
  ASSERT_NE(broadcast, m.shared_walls.end()) << "wall patterns keep the axis value as written";
  EXPECT_EQ(broadcast->conflict_degree, 0);
}

TEST(FitFeeds, ASharedLevelFromFlaggedPointsIsMarkedNoisyOrWithheld) {
  register_feed_probes();
  std::vector<Sample> samples;
  for (int d : {1, 32}) {
    const double inst = 1e9;
    append(samples,
           point("ff_shared", {{"conflict_degree", std::to_string(d)}}, 0.2 * d, 128 * inst, 0, 0, inst, d * inst));
  }
  // Noisy points (the machine's own jitter): the level stands, and says so.
  for (Sample& s : samples) s.flags = "noisy";
  Machine m = gpu_machine();
  fit_samples(samples, m);
  ASSERT_EQ(m.memory.size(), 1u);
  EXPECT_TRUE(m.memory[0].noisy);

  // Beside another process's GEMMs on an H200, every shared point ran at half speed and was
  // flagged foreign-load: the level is marked, and missing: says it is not the device's own.
  for (Sample& s : samples) s.flags = "noisy|foreign-load";
  Machine beside = gpu_machine();
  fit_samples(samples, beside);
  ASSERT_EQ(beside.memory.size(), 1u);
  EXPECT_TRUE(beside.memory[0].noisy);
  for (const char* degree : {"1", "32"})
    EXPECT_NE(std::find(beside.missing.begin(), beside.missing.end(),
                        std::string("probe 'ff_shared' (conflict_degree=") + degree +
                            "): every point was measured beside other processes' load: its figures are marked noisy "
                            "and are not the device's own"),
              beside.missing.end())
        << ::testing::PrintToString(beside.missing);

  // Clean points: no flag.
  for (Sample& s : samples) s.flags.clear();
  Machine clean = gpu_machine();
  fit_samples(samples, clean);
  ASSERT_EQ(clean.memory.size(), 1u);
  EXPECT_FALSE(clean.memory[0].noisy);
}

TEST(FitFeeds, GlobalWallsPerStrideAndWordSize) {
  register_feed_probes();
  std::vector<Sample> samples;
  // Sectors per request: stride 0 -> 1, unit stride -> 4 (4-byte) / 8 (8-byte), stride 8 -> 32.
  const struct { int stride, word, sectors; } cases[] = {{0, 4, 1}, {1, 4, 4}, {1, 8, 8}, {8, 4, 32}};
  for (const auto& c : cases) {
    const double requests = 1e8;
    append(samples, point("ff_stride", {{"stride", std::to_string(c.stride)}, {"word_bytes", std::to_string(c.word)}},
                          0.01 * c.sectors, requests * c.sectors * 32, 0, requests * c.sectors, requests, 0));
  }
  Machine m = gpu_machine();
  fit_samples(samples, m);
  ASSERT_EQ(m.global_walls.size(), 4u);
  EXPECT_EQ(m.global_walls[0].pattern, "stride-0");
  EXPECT_DOUBLE_EQ(m.global_walls[0].instruction_intensity, 1.0);
  const Wall& last = m.global_walls.back();
  EXPECT_EQ(last.pattern, "stride-8");
  EXPECT_EQ(last.word_bytes, 4);
  EXPECT_DOUBLE_EQ(last.instruction_intensity, 1.0 / 32);
  EXPECT_NEAR(last.gtxn_s, 10, 0.11);
  const auto eight = std::find_if(m.global_walls.begin(), m.global_walls.end(),
                                  [](const Wall& w) { return w.pattern == "stride-1" && w.word_bytes == 8; });
  ASSERT_NE(eight, m.global_walls.end());
  EXPECT_DOUBLE_EQ(eight->instruction_intensity, 1.0 / 8);
}

TEST(FitFeeds, WarpGipsAgainstSchedulersAndPredicationTable) {
  register_feed_probes();
  std::vector<Sample> samples;
  // 400 GIPS theoretical (100 SMs x 4 x 1 GHz); measured 380 with all lanes, any lane count.
  for (int lanes : {32, 16, 8, 1})
    for (const char* stream : {"fp32", "int32"}) {
      const double gips = std::string(stream) == "fp32" ? 380 : 200;
      append(samples, point("ff_issue", {{"active_lanes", std::to_string(lanes)}, {"stream", stream}}, 0.01, 0, 0, 0,
                            gips * 1e9 * 0.01, 0));
    }
  Machine m = gpu_machine();
  fit_samples(samples, m);
  ASSERT_TRUE(m.warp_gips.has_value());
  EXPECT_NEAR(m.warp_gips->measured_gips, 380, 4);
  EXPECT_DOUBLE_EQ(m.warp_gips->theoretical_gips, 400);
  EXPECT_DOUBLE_EQ(m.warp_gips->clock_mhz, 1000);
  EXPECT_EQ(m.warp_gips->probe, "ff_issue");
  ASSERT_EQ(m.predication.size(), 4u);
  EXPECT_EQ(m.predication[0].active_lanes, 32);
  EXPECT_EQ(m.predication[3].active_lanes, 1);
  EXPECT_NEAR(m.predication[3].warp_gips, 380, 4);
  EXPECT_NEAR(m.predication[3].thread_gips, 380.0 / 32, 0.2);
  EXPECT_NEAR(m.predication[1].thread_gips, 190, 2);
}

TEST(FitFeeds, WarpGipsAboveTheoryIsRejected) {
  register_feed_probes();
  std::vector<Sample> samples = point("ff_issue", {{"active_lanes", "32"}}, 0.01, 0, 0, 0, 500e9 * 0.01, 0);
  Machine m = gpu_machine();
  fit_samples(samples, m);
  EXPECT_FALSE(m.warp_gips.has_value());
  ASSERT_FALSE(m.missing.empty());
  EXPECT_NE(m.missing.back().find("warp_gips: rejected"), std::string::npos) << m.missing.back();
}

TEST(FitFeeds, TensorCeilingCarriesInstructionRateAndShape) {
  register_feed_probes();
  // m16n8k16: 4096 FLOPs per mma; 1e9 mmas in 0.01 s -> 409.6 TFLOP/s, 100 instruction GIPS.
  std::vector<Sample> samples = point("ff_tensor", {{"type", "fp16.fp32"}}, 0.01, 0, 4096e9, 0, 1e9, 0);
  Machine m = gpu_machine();
  m.device.theoretical_gflops["TENSOR.FP16.FP32"] = 500e3;
  fit_samples(samples, m);
  ASSERT_EQ(m.compute.size(), 1u);
  const ComputeCeiling& c = m.compute[0];
  EXPECT_EQ(c.name, "TENSOR.FP16.FP32");
  EXPECT_DOUBLE_EQ(c.flops_per_instruction, 4096);
  EXPECT_NEAR(c.instructions_gips, 100, 1.1);
  EXPECT_NEAR(c.fraction_of_theoretical, 409.6e3 / 500e3, 0.01);
  EXPECT_TRUE(c.instruction.empty());  // a feed without an instruction axis has one way of doing its work
  EXPECT_TRUE(c.by_instruction.empty());
}

TEST(FitFeeds, EachInstructionKeepsItsOwnTensorCeilingAndTheFastestIsTheHeadline) {
  register_feed_probes();
  // mma.sync at 409.6 TFLOP/s (4096 FLOPs x 100 GIPS), wgmma at 614.4 (131072 FLOPs per
  // warpgroup instruction x 4.69 GIPS), and a WMMA point with no text of its own.
  std::vector<Sample> samples =
      point("ff_tensor_api", {{"type", "fp16.fp32"}, {"api", "mma"}}, 0.01, 0, 4096e9, 0, 1e9, 0);
  append(samples,
         point("ff_tensor_api", {{"type", "fp16.fp32"}, {"api", "wgmma"}}, 0.01, 0, 6144e9, 0, 6144e9 / 131072, 0));
  append(samples,
         point("ff_tensor_api", {{"type", "fp16.fp32"}, {"api", "wmma"}}, 0.01, 0, 2048e9, 0, 2048e9 / 8192, 0));
  append(samples,
         point("ff_tensor_api", {{"type", "bf16.fp32"}, {"api", "mma"}}, 0.01, 0, 4000e9, 0, 4000e9 / 4096, 0));
  Machine m = gpu_machine();
  fit_samples(samples, m);
  ASSERT_EQ(m.compute.size(), 2u);  // one ceiling per type: plots and exports see the headline only
  const bool fp16_first = m.compute[0].name == "TENSOR.FP16.FP32";
  const ComputeCeiling& c = m.compute[fp16_first ? 0 : 1];
  const ComputeCeiling& bf16 = m.compute[fp16_first ? 1 : 0];
  EXPECT_EQ(c.name, "TENSOR.FP16.FP32");
  EXPECT_NEAR(c.gflops, 614.4e3, 614.4e3 * 0.011);
  EXPECT_EQ(c.instruction, "wgmma.mma_async m64n128k16");
  EXPECT_EQ(c.params.at("api"), "wgmma");
  EXPECT_DOUBLE_EQ(c.flops_per_instruction, 131072);
  ASSERT_EQ(c.by_instruction.size(), 3u);
  EXPECT_EQ(c.by_instruction[0].instruction, "wgmma.mma_async m64n128k16");
  EXPECT_EQ(c.by_instruction[1].instruction, "mma.sync m16n8k16");
  EXPECT_NEAR(c.by_instruction[1].gflops, 409.6e3, 409.6e3 * 0.011);
  EXPECT_DOUBLE_EQ(c.by_instruction[1].flops_per_instruction, 4096);
  EXPECT_NEAR(c.by_instruction[1].instructions_gips, 100, 1.1);
  EXPECT_EQ(c.by_instruction[1].stats.samples, 3);
  EXPECT_EQ(c.by_instruction[2].instruction, "api=wmma");  // no text given: the axis value says it
  EXPECT_EQ(bf16.by_instruction.size(), 1u);
  // The text of the point itself (type and api) wins over the api's.
  EXPECT_EQ(bf16.instruction, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");

  // The machine file keeps all of it, and reads it back.
  const Machine back = read_machine_text(machine_to_yaml(m), "m.yaml");
  ASSERT_EQ(back.compute.size(), 2u);
  const ComputeCeiling& read = back.compute[fp16_first ? 0 : 1];
  EXPECT_EQ(read.instruction, c.instruction);
  ASSERT_EQ(read.by_instruction.size(), 3u);
  EXPECT_EQ(read.by_instruction[1].instruction, "mma.sync m16n8k16");
  EXPECT_NEAR(read.by_instruction[1].gflops, c.by_instruction[1].gflops, 1e-6 * c.by_instruction[1].gflops);
  EXPECT_EQ(read.by_instruction[1].params.at("api"), "mma");
}

TEST(FitFeeds, ScalingTrajectoriesUseFlopsOrBytesAndZeroMeansAllUnits) {
  register_feed_probes();
  std::vector<Sample> samples;
  for (int sms : {1, 2, 0}) {
    const int units = sms == 0 ? 100 : sms;
    append(samples, point("ff_scaling", {{"kernel", "memory_read"}, {"sm_count", std::to_string(sms)}}, 0.01,
                          std::min(units, 50) * 30e9 * 0.01, 0, 0, 0, 0));
    append(samples, point("ff_scaling", {{"kernel", "fp64_fma"}, {"sm_count", std::to_string(sms)}}, 0.01, 8e6,
                          units * 128e9 * 0.01, 0, 0, 0));
  }
  Machine m = gpu_machine();
  fit_samples(samples, m);
  ASSERT_EQ(m.scaling.size(), 3u);
  EXPECT_EQ(m.scaling[0].units, 1);
  EXPECT_EQ(m.scaling[2].units, 100) << "sm_count 0 is every SM";
  EXPECT_NEAR(m.scaling[0].ceilings.at("FP64_FMA"), 128, 1.3);
  EXPECT_NEAR(m.scaling[2].ceilings.at("FP64_FMA"), 12800, 130) << "FLOP probes scale in GFLOP/s";
  EXPECT_NEAR(m.scaling[2].ceilings.at("HBM"), 1500, 16) << "bandwidth in GB/s, named after the memory level";
}

TEST(FitFeeds, ClockReadingsPerLoad) {
  register_feed_probes();
  std::vector<Sample> samples;
  for (const char* load : {"idle", "fp32_fma"}) {
    auto p = point("ff_clock", {{"load", load}}, 0.01, 0, 0, 0, 0, 0, 5);
    for (std::size_t k = 0; k < p.size(); ++k) p[k].clock_mhz = (std::string(load) == "idle" ? 1980 : 1755) + 10.0 * k;
    append(samples, p);
  }
  Machine m = gpu_machine();
  fit_samples(samples, m);
  ASSERT_EQ(m.clocks.size(), 2u);
  const auto fma =
      std::find_if(m.clocks.begin(), m.clocks.end(), [](const ClockReading& c) { return c.load == "fp32_fma"; });
  ASSERT_NE(fma, m.clocks.end());
  EXPECT_DOUBLE_EQ(fma->median_mhz, 1775);
  EXPECT_DOUBLE_EQ(fma->min_mhz, 1755);
  EXPECT_DOUBLE_EQ(fma->max_mhz, 1795);
  EXPECT_EQ(fma->samples, 5);
}

TEST(FitFeeds, SystemLevelGoesLastAndSharedAfterL1) {
  register_feed_probes();
  std::vector<Sample> samples;
  append(samples, point("ff_system", {{"transfer", "h2d"}}, 0.01, 0.5e9, 0, 0, 0, 0));
  append(samples, point("ff_system", {{"transfer", "d2h"}}, 0.01, 0.55e9, 0, 0, 0, 0));
  append(samples, point("ff_shared", {{"conflict_degree", "1"}}, 0.01, 128e9, 0, 0, 1e9, 1e9));
  Machine m = gpu_machine();
  MemoryLevel l1;
  l1.level = "L1";
  MemoryLevel hbm;
  hbm.level = "HBM";
  m.memory = {l1, hbm};  // as if the bandwidth probe came first
  fit_samples(samples, m);
  std::vector<std::string> order;
  for (const auto& l : m.memory) order.push_back(l.level);
  EXPECT_EQ(order, (std::vector<std::string>{"L1", "shared", "HBM", "system"}));
  EXPECT_NEAR(m.memory[3].gbs, 50, 0.6);
  EXPECT_EQ(m.memory[3].by_series.count("transfer=d2h"), 1u);
}

TEST(FitFeeds, UnknownWallSetIsReportedNotFatal) {
  register_feed_probes();
  std::vector<Sample> samples = point("ff_bad_walls", {}, 0.01, 0, 0, 1e6, 1e6, 0);
  Machine m = gpu_machine();
  fit_samples(samples, m);
  ASSERT_EQ(m.missing.size(), 1u);
  EXPECT_NE(m.missing[0].find("wall_set 'texture'"), std::string::npos) << m.missing[0];
}

TEST(FitFeeds, MachineFileKeepsWallRatesAndClocks) {
  register_feed_probes();
  std::vector<Sample> samples;
  append(samples, point("ff_stride", {{"stride", "8"}, {"word_bytes", "4"}}, 0.01, 32e8 * 32, 0, 32e8, 1e8, 0));
  auto clock = point("ff_clock", {{"load", "idle"}}, 0.01, 0, 0, 0, 0, 0);
  for (auto& s : clock) s.clock_mhz = 1980;
  append(samples, clock);
  Machine m = gpu_machine();
  fit_samples(samples, m);
  const Machine back = read_machine_text(machine_to_yaml(m), "roundtrip.yaml");
  ASSERT_EQ(back.global_walls.size(), 1u);
  EXPECT_NEAR(back.global_walls[0].warp_gips, m.global_walls[0].warp_gips,
              1e-9 * m.global_walls[0].warp_gips);  // 10 digits kept
  EXPECT_GT(back.global_walls[0].warp_gips, 0);
  ASSERT_EQ(back.clocks.size(), 1u);
  EXPECT_EQ(back.clocks[0].load, "idle");
  EXPECT_DOUBLE_EQ(back.clocks[0].median_mhz, 1980);
  EXPECT_EQ(back.clocks[0].samples, 3);
  EXPECT_EQ(back.clocks[0].probe, "ff_clock");
}

}  // namespace
}  // namespace roofprobe
