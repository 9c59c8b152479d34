// feeds.yaml (driver/fit/feeds_file.cpp): every registered probe's feeds survive the round trip, a
// malformed file is an error with its line, and a recorded sweep is fitted from the file alone,
// by a "build" that has none of the probes that measured it.
#include "driver/fit/feeds_file.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "driver/model/errors.hpp"
#include "driver/fit/fit.hpp"
#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"
#include "tests/unit/temp_file.hpp"

namespace roofprobe {
namespace {

void expect_same_feed(const FeedSpec& a, const FeedSpec& b, const std::string& where) {
  EXPECT_EQ(a.kind, b.kind) << where;
  EXPECT_EQ(a.metric, b.metric) << where;
  EXPECT_EQ(a.x_axis, b.x_axis) << where;
  EXPECT_EQ(a.series_axes, b.series_axes) << where;
  EXPECT_EQ(a.primary_series, b.primary_series) << where;
  ASSERT_EQ(a.series_reach.size(), b.series_reach.size()) << where;
  for (std::size_t i = 0; i < a.series_reach.size(); ++i) {
    EXPECT_EQ(a.series_reach[i].params, b.series_reach[i].params) << where;
    EXPECT_EQ(a.series_reach[i].first_level, b.series_reach[i].first_level) << where;
    EXPECT_EQ(a.series_reach[i].first_level_only, b.series_reach[i].first_level_only) << where;
  }
  EXPECT_EQ(a.name_pattern, b.name_pattern) << where;
  EXPECT_EQ(a.level_name, b.level_name) << where;
  EXPECT_EQ(a.wall_set, b.wall_set) << where;
  EXPECT_EQ(a.instruction_axis, b.instruction_axis) << where;
  EXPECT_EQ(a.instruction_text, b.instruction_text) << where;
}

TEST(FeedsFile, AnInstructionAxisAndItsTextsRoundTrip) {
  FeedSpec tensor;
  tensor.kind = FeedKind::ComputeCeiling;
  tensor.metric = "gflops";
  tensor.series_axes = {"type"};
  tensor.name_pattern = "TENSOR.{type}";
  tensor.instruction_axis = "api";
  tensor.instruction_text = {{"mma", "mma.sync.aligned: m16n8k16"}, {"wgmma", "wgmma.mma_async m64n128k16"}};
  FeedSpec plain = tensor;
  plain.instruction_axis.clear();
  plain.instruction_text.clear();
  const FeedTable table = {{{"cuda", "tensor"}, {tensor, plain}}};
  const std::string text = feeds_to_yaml(table);
  TempFile f(text, ".yaml");
  const FeedTable back = read_feeds_file(f.path());
  ASSERT_EQ(back.at({"cuda", "tensor"}).size(), 2u);
  expect_same_feed(back.at({"cuda", "tensor"})[0], tensor, "with an instruction axis");
  expect_same_feed(back.at({"cuda", "tensor"})[1], plain, "without");
  // Written once, for the feed that has it: older feeds files (none) still read.
  ASSERT_NE(text.find("instruction_axis"), std::string::npos);
  EXPECT_EQ(text.find("instruction_axis"), text.rfind("instruction_axis"));
}

TEST(FeedsFile, EveryRegisteredProbeRoundTrips) {
  const FeedTable all = registered_feeds();
  ASSERT_GE(all.size(), 2u);  // at least the CPU probes
  TempFile f(feeds_to_yaml(all), ".yaml");
  const FeedTable back = read_feeds_file(f.path());
  ASSERT_EQ(back.size(), all.size());
  for (const auto& [key, feeds] : all) {
    const auto it = back.find(key);
    ASSERT_NE(it, back.end()) << key.first << "/" << key.second;
    ASSERT_EQ(it->second.size(), feeds.size());
    for (std::size_t i = 0; i < feeds.size(); ++i)
      expect_same_feed(it->second[i], feeds[i], key.first + "/" + key.second);
  }
}

TEST(FeedsFile, MalformedFilesAreErrorsWithTheirLine) {
  auto error_of = [](const std::string& text) {
    TempFile f(text, ".yaml");
    try {
      read_feeds_file(f.path());
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no InputError)");
  };
  EXPECT_NE(error_of("schema: roofprobe.machine/1\nprobes: []\n").find("is not roofprobe.feeds/1"), std::string::npos);
  EXPECT_NE(error_of("schema: roofprobe.feeds/1\n").find("probes: expected a list"), std::string::npos);
  const std::string bad_kind =
      "schema: roofprobe.feeds/1\nprobes:\n  - backend: cpu\n    probe: p\n    feeds:\n      - kind: plateaus\n";
  EXPECT_NE(error_of(bad_kind).find(":6: kind: unknown 'plateaus'"), std::string::npos) << error_of(bad_kind);
  EXPECT_NE(error_of("schema: [").find("malformed YAML"), std::string::npos);
}

// The H100 run of results/measured, fitted from a feed table only: its samples' backend renamed
// to one this build has no probes for, so nothing can come from the registry.
TEST(FeedsFile, AGpuSweepIsFittedWithoutItsProbes) {
  const std::string run = std::string(ROOFPROBE_SOURCE_DIR) + "/results/measured/h100-sxm/20261124T2305Z/";
  std::vector<Sample> samples = read_sweep_csv(run + "sweep.csv");
  ASSERT_FALSE(samples.empty());
  FeedTable cuda = registered_feeds("cuda");
  if (cuda.empty()) GTEST_SKIP() << "built without CUDA: the H100 probes' feeds come only from a recorded file";
  FeedTable renamed;
  for (auto& [key, feeds] : cuda) renamed[{"absent-backend", key.second}] = feeds;
  for (Sample& s : samples) s.backend = "absent-backend";
  TempFile file(feeds_to_yaml(renamed), ".yaml");
  const FeedTable from_file = read_feeds_file(file.path());

  Machine with_file;
  with_file.device = read_machine_file(run + "run.yaml").device;
  fit_samples(samples, with_file, &from_file);
  std::vector<std::string> levels;
  for (const MemoryLevel& l : with_file.memory) levels.push_back(l.level);
  EXPECT_EQ(levels, (std::vector<std::string>{"L1", "shared", "L2", "HBM", "system"}));
  EXPECT_GE(with_file.compute.size(), 10u);

  Machine without;
  without.device = with_file.device;
  fit_samples(samples, without);
  EXPECT_TRUE(without.memory.empty());
  EXPECT_NE(without.missing.front().find("no feeds.yaml beside the sweep declares it"), std::string::npos);
}

}  // namespace
}  // namespace roofprobe
