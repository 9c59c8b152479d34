// Fleet report (outliers over synthetic fleets of machine files), aggregate arithmetic, and the
// rank -> cores / GPU mapping on fake topologies.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "driver/model/errors.hpp"
#include "driver/fleet/fleet.hpp"
#include "driver/fleet/fleet_run.hpp"
#include "driver/fleet/mpi.hpp"
#include "driver/fleet/mpi_binding.hpp"

namespace fs = std::filesystem;
using namespace roofprobe;

namespace {

Machine synthetic_machine(const std::string& host, double dram, double l1, double fma, int rank, int ranks) {
  Machine m;
  m.provenance = {{"tool", "roofprobe"},
                  {"host", host},
                  {"mpi_rank", std::to_string(rank)},
                  {"mpi_ranks", std::to_string(ranks)},
                  {"mpi_local_rank", std::to_string(rank % 2)}};
  m.device.backend = "cpu";
  m.device.kind = "cpu";
  m.device.name = "Synthetic CPU";
  m.device.compute_units = 1;
  m.device.compute_unit_name = "cores";
  m.device.threads = 1;
  MemoryLevel a;
  a.level = "L1";
  a.gbs = l1;
  a.probe = "bandwidth";
  MemoryLevel b;
  b.level = "DRAM";
  b.gbs = dram;
  b.probe = "bandwidth";
  m.memory = {a, b};
  ComputeCeiling c;
  c.name = "FP64.FMA";
  c.gflops = fma;
  c.probe = "flops";
  m.compute = {c};
  return m;
}

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("roofprobe-fleet-" + name + "-" + std::to_string(getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(Fleet, MedianMinMaxAndOutliers) {
  std::vector<FleetRank> ranks;
  const double dram[] = {100, 102, 98, 90, 101};  // rank 3: 10% below the median (100)
  for (int r = 0; r < 5; ++r)
    ranks.push_back(fleet_rank_from_machine(synthetic_machine("node" + std::to_string(r / 2), dram[r], 1000, 50, r, 5),
                                            r, "rank-" + std::to_string(r) + "/machine.yaml"));
  std::vector<FleetCeiling> c = fleet_ceilings(ranks, 0.05);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].name, "DRAM");  // memory levels first (by name), then compute
  EXPECT_EQ(c[1].name, "L1");
  EXPECT_EQ(c[2].name, "FP64.FMA");
  EXPECT_EQ(c[2].unit, "GFLOP/s");
  EXPECT_DOUBLE_EQ(c[0].median, 100);
  EXPECT_DOUBLE_EQ(c[0].min, 90);
  EXPECT_DOUBLE_EQ(c[0].max, 102);
  ASSERT_EQ(c[0].outliers.size(), 1u);
  EXPECT_EQ(c[0].outliers[0].rank, 3);
  EXPECT_EQ(c[0].outliers[0].host, "node1");
  EXPECT_EQ(c[0].outliers[0].device, "Synthetic CPU");
  EXPECT_NEAR(c[0].outliers[0].below_median, 0.10, 1e-12);
  EXPECT_TRUE(c[1].outliers.empty());
  // A wider margin forgives it; exactly at the margin is not an outlier.
  EXPECT_TRUE(fleet_ceilings(ranks, 0.15)[0].outliers.empty());
  EXPECT_TRUE(fleet_ceilings(ranks, 0.10)[0].outliers.empty());
  EXPECT_EQ(fleet_ceilings(ranks, 0.02)[0].outliers.size(), 1u);  // 98 is not below 98
  EXPECT_EQ(fleet_ceilings(ranks, 0.01)[0].outliers.size(), 2u);  // 90 and 98 below 99
}

TEST(Fleet, EvenCountMedianAndSingleRank) {
  std::vector<FleetRank> ranks = {fleet_rank_from_machine(synthetic_machine("a", 10, 1, 1, 0, 2), 0, "x"),
                                  fleet_rank_from_machine(synthetic_machine("a", 20, 1, 1, 1, 2), 1, "y")};
  auto c = fleet_ceilings(ranks, 0.05);
  EXPECT_DOUBLE_EQ(c[0].median, 15);
  ASSERT_EQ(c[0].outliers.size(), 1u);
  EXPECT_EQ(c[0].outliers[0].rank, 0);
  auto one = fleet_ceilings({ranks[0]}, 0.05);
  EXPECT_TRUE(one[0].outliers.empty());
}

// Ranks of different devices (a CPU and a GPU backend, two GPU models in one job) are never
// pooled: a median over an H200 and two Xeons made the Xeons' L2 an "outlier 97% below".
TEST(Fleet, EachDeviceModelHasItsOwnMedian) {
  std::vector<FleetRank> ranks;
  for (int r = 0; r < 3; ++r) {
    Machine m = synthetic_machine("node" + std::to_string(r), r == 1 ? 4000 : 100, 1000, 50, r, 3);
    if (r == 1) m.device.name = "Synthetic GPU";
    ranks.push_back(fleet_rank_from_machine(m, r, "rank-" + std::to_string(r) + "/machine.yaml"));
  }
  const std::vector<FleetCeiling> c = fleet_ceilings(ranks, 0.05);
  ASSERT_EQ(c.size(), 6u);  // three ceilings of each device, the first rank's device first
  for (std::size_t i = 0; i < c.size(); ++i) {
    EXPECT_EQ(c[i].device, i < 3 ? "Synthetic CPU" : "Synthetic GPU") << i;
    EXPECT_TRUE(c[i].outliers.empty()) << c[i].device << " " << c[i].name;
  }
  EXPECT_EQ(c[0].name, "DRAM");
  EXPECT_EQ(c[0].ranks, 2);
  EXPECT_DOUBLE_EQ(c[0].median, 100);
  EXPECT_EQ(c[3].ranks, 1);
  EXPECT_DOUBLE_EQ(c[3].median, 4000);
  Fleet f;
  f.ranks = ranks;
  f.ceilings = c;
  const YAML::Node root = YAML::Load(fleet_to_yaml(f));
  EXPECT_DOUBLE_EQ(root["ceilings"]["Synthetic CPU"]["DRAM"]["median"].as<double>(), 100);
  EXPECT_DOUBLE_EQ(root["ceilings"]["Synthetic GPU"]["DRAM"]["median"].as<double>(), 4000);
  std::ostringstream summary;
  print_fleet_summary(summary, f, "fleet.yaml");
  EXPECT_NE(summary.str().find("  Synthetic GPU:\n    DRAM       median 4 TB/s"), std::string::npos) << summary.str();
  EXPECT_NE(summary.str().find("outliers: none"), std::string::npos) << summary.str();
}

TEST(Fleet, MemoryLevelWithADotIsStillMemory) {
  Machine m = synthetic_machine("a", 10, 1, 1, 0, 1);
  m.memory[0].level = "L2.b";  // the fitter names a second plateau of one cache level so
  auto c = fleet_ceilings({fleet_rank_from_machine(m, 0, "x")}, 0.05);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[1].name, "L2.b");
  EXPECT_EQ(c[1].unit, "GB/s");
  EXPECT_EQ(c[2].unit, "GFLOP/s");
}

TEST(Fleet, CollectFromDirectoryWithMissingRank) {
  fs::path dir = fresh_dir("collect");
  const double dram[] = {100, 80, 101, 99};
  for (int r = 0; r < 4; ++r) {
    if (r == 2) continue;  // rank 2 died before writing its machine file
    fs::create_directories(dir / ("rank-" + std::to_string(r)));
    write_machine_file(synthetic_machine("h" + std::to_string(r), dram[r], 500, 40, r, 4),
                       (dir / ("rank-" + std::to_string(r)) / "machine.yaml").string());
  }
  fs::create_directories(dir / "rank-2");
  std::ofstream(dir / "aggregates.yaml") << "node: {h0: {DRAM: 150}}\njob: {DRAM: 300, FP64.FMA: 160}\n";
  Fleet f = collect_fleet(dir.string(), 0.05);
  ASSERT_EQ(f.ranks.size(), 3u);
  EXPECT_EQ(f.expected_ranks, 4);
  ASSERT_EQ(f.missing.size(), 1u);
  EXPECT_NE(f.missing[0].find("rank 2"), std::string::npos);
  EXPECT_DOUBLE_EQ(f.aggregates.job.at("DRAM"), 300);
  EXPECT_DOUBLE_EQ(f.aggregates.node.at("h0").at("DRAM"), 150);
  ASSERT_EQ(f.ceilings[0].name, "DRAM");
  ASSERT_EQ(f.ceilings[0].outliers.size(), 1u);
  EXPECT_EQ(f.ceilings[0].outliers[0].rank, 1);
  EXPECT_EQ(f.ceilings[0].outliers[0].host, "h1");
  const std::string yaml = fleet_to_yaml(f);
  EXPECT_NE(yaml.find("schema: roofprobe.fleet/2"), std::string::npos);
  EXPECT_NE(yaml.find("machine: rank-3/machine.yaml"), std::string::npos);
  EXPECT_NE(yaml.find("outliers: 1"), std::string::npos);
  EXPECT_EQ(fleet_command(dir.string(), 0.05), 0);
  EXPECT_TRUE(fs::exists(dir / "fleet.yaml"));
  fs::remove_all(dir);
}

TEST(Fleet, RanksBelowTheHighestPresentAreNamedInRuns) {
  // Machine files copied together from runs of one process each record no job size: ranks 0, 2
  // and 7 present name rank 1 and ranks 3-6 absent, in two lines.
  fs::path dir = fresh_dir("gaps");
  for (int r : {0, 2, 7}) {
    fs::create_directories(dir / ("rank-" + std::to_string(r)));
    write_machine_file(synthetic_machine("h", 100, 500, 40, r, 1),
                       (dir / ("rank-" + std::to_string(r)) / "machine.yaml").string());
  }
  Fleet f = collect_fleet(dir.string(), 0.05);
  EXPECT_EQ(f.expected_ranks, 8);
  EXPECT_EQ(f.missing, (std::vector<std::string>{"rank 1: no rank-1/machine.yaml",
                                                 "ranks 3-6: no rank-<r>/machine.yaml for any of them"}));
  // A job size far above the ranks present is one line, not one per rank.
  Machine huge = synthetic_machine("h", 100, 500, 40, 0, 1);
  huge.provenance["mpi_ranks"] = "2147483647";
  write_machine_file(huge, (dir / "rank-0" / "machine.yaml").string());
  f = collect_fleet(dir.string(), 0.05);
  ASSERT_EQ(f.missing.size(), 3u);
  EXPECT_EQ(f.missing[2], "ranks 8-2147483646: no rank-<r>/machine.yaml for any of them");
  fs::remove_all(dir);
}

TEST(Fleet, NamesThatAreNotPlainYamlTextReadBackAsTheSameStrings) {
  // A host named "no" or "1.5e3", and a device name from a driver holding a control character or
  // a byte that is not UTF-8: each must read back from fleet.yaml as the string it was (the
  // invalid byte as U+FFFD), and the file must stay one well-formed document.
  Fleet f;
  f.ranks = {fleet_rank_from_machine(synthetic_machine("no", 10, 1, 1, 0, 3), 0, "rank-0/machine.yaml"),
             fleet_rank_from_machine(synthetic_machine("1.5e3", 5, 1, 1, 1, 3), 1, "rank-1/machine.yaml"),
             fleet_rank_from_machine(synthetic_machine("host\r\x01", 10, 1, 1, 2, 3), 2, "rank-2/machine.yaml")};
  f.ranks[2].device = "GPU\xff\r";
  f.missing = {"rank 3: \xfe\n: unreadable"};
  f.aggregates.node["off"] = {{"DRAM", 30}};
  f.aggregates.points["DRAM"] = "yes";
  f.ceilings = fleet_ceilings(f.ranks, 0.05);
  const std::string text = fleet_to_yaml(f);
  // yaml-cpp reads a plain `no` back as a string; a YAML 1.1 reader (PyYAML) takes it for false,
  // and `001` for 1, as a value or as a key: such text is written quoted.
  EXPECT_NE(text.find("host: \"no\""), std::string::npos) << text;
  EXPECT_NE(text.find("host: \"1.5e3\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"off\": {DRAM: 30}"), std::string::npos) << text;
  EXPECT_NE(text.find("DRAM: \"yes\""), std::string::npos) << text;
  const YAML::Node root = YAML::Load(text);
  EXPECT_EQ(root["ranks"][0]["host"].as<std::string>(), "no");
  EXPECT_EQ(root["ranks"][1]["host"].as<std::string>(), "1.5e3");
  EXPECT_EQ(root["ranks"][2]["host"].as<std::string>(), "host\r\x01");
  EXPECT_EQ(root["ranks"][2]["device"].as<std::string>(), "GPU\xEF\xBF\xBD\r");
  EXPECT_EQ(root["missing"][0].as<std::string>(), "rank 3: \xEF\xBF\xBD\n: unreadable");
  EXPECT_DOUBLE_EQ(root["aggregates"]["node"]["off"]["DRAM"].as<double>(), 30);
  EXPECT_EQ(root["aggregates"]["points"]["DRAM"].as<std::string>(), "yes");
  // The outlier (rank 1, DRAM 5 against its device's median of 7.5) names its host as written.
  EXPECT_EQ(root["ceilings"]["Synthetic CPU"]["DRAM"]["outliers"][0]["host"].as<std::string>(), "1.5e3");
  EXPECT_DOUBLE_EQ(root["ceilings"]["GPU\xEF\xBF\xBD\r"]["DRAM"]["median"].as<double>(), 10);
  EXPECT_EQ(root["outliers"].as<int>(), 1);

  FleetAggregates a;
  a.node["no"] = {{"DRAM", 1.25}};
  a.job = {{"DRAM", 2.5}};
  a.points["DRAM"] = "bandwidth \x01";
  const fs::path dir = fresh_dir("text");
  std::ofstream(dir / "aggregates.yaml") << aggregates_to_yaml(a);
  const FleetAggregates back = read_aggregates_file((dir / "aggregates.yaml").string());
  EXPECT_DOUBLE_EQ(back.node.at("no").at("DRAM"), 1.25);
  EXPECT_DOUBLE_EQ(back.job.at("DRAM"), 2.5);
  EXPECT_EQ(back.points.at("DRAM"), "bandwidth \x01");
  fs::remove_all(dir);
}

TEST(Fleet, SingleProcessRunDirectory) {
  fs::path dir = fresh_dir("single");
  write_machine_file(synthetic_machine("solo", 10, 100, 5, 0, 1), (dir / "machine.yaml").string());
  Fleet f = collect_fleet(dir.string(), 0.05);
  ASSERT_EQ(f.ranks.size(), 1u);
  EXPECT_EQ(f.ranks[0].machine, "machine.yaml");
  EXPECT_TRUE(f.missing.empty());
  fs::remove_all(dir);
}

TEST(Fleet, CollectErrors) {
  fs::path dir = fresh_dir("empty");
  EXPECT_THROW(collect_fleet(dir.string(), 0.05), InputError);
  EXPECT_THROW(collect_fleet(dir.string(), 1.5), InputError);
  EXPECT_THROW(collect_fleet((dir / "nope").string(), 0.05), InputError);
  fs::remove_all(dir);
}

TEST(Fleet, CombineAggregatesSumsWorkOverLongestTime) {
  // Two ranks on node a, one on b; two samples each. Job sample 1: (1e9+1e9+2e9)/0.5 s = 8 GB/s.
  std::vector<std::string> lines = {"a\tDRAM=1e9,0.25,0.5\tFP64.FMA=1e9,1,1", "a\tDRAM=1e9,0.5,0.25",
                                    "b\tDRAM=2e9,0.4,0.5"};
  FleetAggregates agg = combine_aggregates(lines);
  // sample 0: 4e9 / 0.5 = 8; sample 1: 4e9 / 0.5 = 8
  EXPECT_DOUBLE_EQ(agg.job.at("DRAM"), 8);
  EXPECT_DOUBLE_EQ(agg.node.at("a").at("DRAM"), 4);  // 2e9 / 0.5
  EXPECT_DOUBLE_EQ(agg.node.at("b").at("DRAM"), 5);  // best of 2e9/0.4, 2e9/0.5
  EXPECT_DOUBLE_EQ(agg.job.at("FP64.FMA"), 1);
  EXPECT_EQ(agg.node.count("b") ? agg.node.at("b").count("FP64.FMA") : 0u, 0u);
}

TEST(Binding, EvenSplitOfCores) {
  std::vector<CorePus> cores;
  for (int i = 0; i < 8; ++i) cores.push_back({i, i + 8});  // 8 cores, 2 PUs each
  auto r0 = cores_for_rank(cores, 0, 2);
  auto r1 = cores_for_rank(cores, 1, 2);
  ASSERT_EQ(r0.size(), 4u);
  ASSERT_EQ(r1.size(), 4u);
  EXPECT_EQ(r0.front(), (CorePus{0, 8}));
  EXPECT_EQ(r1.front(), (CorePus{4, 12}));
  EXPECT_EQ(omp_places_text({r0[0], r0[1]}), "{0,8},{1,9}");
  // 8 cores over 3 ranks: 3, 3, 2, contiguous, disjoint, covering all.
  std::vector<int> sizes;
  int next = 0;
  for (int r = 0; r < 3; ++r) {
    auto share = cores_for_rank(cores, r, 3);
    sizes.push_back(static_cast<int>(share.size()));
    for (const auto& c : share) EXPECT_EQ(c[0], next++);
  }
  EXPECT_EQ(sizes, (std::vector<int>{3, 3, 2}));
  EXPECT_EQ(next, 8);
}

TEST(Binding, MoreRanksThanCoresAndEdgeCases) {
  std::vector<CorePus> two = {{0}, {1}};
  EXPECT_EQ(cores_for_rank(two, 0, 4), (std::vector<CorePus>{{0}}));
  EXPECT_EQ(cores_for_rank(two, 3, 4), (std::vector<CorePus>{{1}}));
  EXPECT_EQ(cores_for_rank(two, 0, 1).size(), 2u);
  EXPECT_TRUE(cores_for_rank({}, 0, 2).empty());
  EXPECT_TRUE(cores_for_rank(two, 0, 0).empty());
}

TEST(Binding, GpuPerLocalRank) {
  EXPECT_EQ(gpu_for_rank(0, 4), 0);
  EXPECT_EQ(gpu_for_rank(3, 4), 3);
  EXPECT_EQ(gpu_for_rank(5, 4), 1);  // 8 ranks on 4 GPUs: two per GPU
  EXPECT_EQ(gpu_for_rank(1, 1), 0);
  EXPECT_EQ(gpu_for_rank(0, 0), -1);  // no GPU known
}

TEST(Binding, CpuListText) {
  EXPECT_EQ(cpu_list_text({5, 0, 1, 2}), "0-2,5");
  EXPECT_EQ(cpu_list_text({}), "");
  EXPECT_EQ(parse_cpu_list("0-2,5"), (std::vector<int>{0, 1, 2, 5}));
  EXPECT_THROW(parse_cpu_list("3-1"), std::invalid_argument);
}

TEST(Comm, SingleProcessWithoutLauncher) {
  // The unit tests run without mpirun: one process, rank 0 of 1, collectives are no-ops.
  if (launched_by_mpi_launcher()) GTEST_SKIP() << "started by an MPI launcher";
  Comm& c = Comm::world();
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
  EXPECT_EQ(c.local_rank(), 0);
  EXPECT_FALSE(c.distributed());
  c.barrier("test", 1);
  EXPECT_EQ(c.allgather("x", "test", 1), (std::vector<std::string>{"x"}));
  EXPECT_EQ(rank_prefix(), "");
}
