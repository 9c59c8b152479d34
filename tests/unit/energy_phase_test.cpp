// The energy phase: which ceilings and levels it runs on part of the device, its phase text in
// sweep.csv, the CPU probes on fewer workers (run for real), and the energy model fitted from its
// rows. The energy counter here is a model (E = pi0 T + eps W with known coefficients, over the
// launches' real work); no counter can be read on the machines the tests run on.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>
#include <vector>

#include "driver/fit/energy_model.hpp"
#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"
#include "driver/run/config.hpp"
#include "driver/run/energy_counter.hpp"
#include "driver/run/engine.hpp"
#include "driver/run/plan.hpp"
#include "driver/session/energy_phase.hpp"
#include "kernels/cuda/backend/sm_partition.hpp"
#include "tests/unit/energy_sweep_support.hpp"
#include "tests/unit/temp_dir.hpp"

namespace roofprobe {
namespace {

TEST(EnergyShares, AQuarterAHalfAndAllOfTheWorkers) {
  EXPECT_EQ(energy_workers(8, false), (std::vector<int>{2, 4, 8}));
  EXPECT_EQ(energy_workers(8, true), (std::vector<int>{2, 4})) << "the sustained phase measured all 8";
  EXPECT_EQ(energy_workers(2, false), (std::vector<int>{1, 2}));
  EXPECT_EQ(energy_workers(2, true), (std::vector<int>{1}));
  EXPECT_EQ(energy_workers(132, false), (std::vector<int>{33, 66, 132}));
}

TEST(EnergyShares, AGpuGetsTheSmsItsPartitionsHold) {
  // The rule the CUDA backend grants green contexts by: at least the device's minimum partition,
  // in multiples of its alignment (8 and 8 on compute capability 9.0; 4 and 2 on 8.x).
  EXPECT_EQ(cuda::granted_sms(33, 132, 8, 8), 40);
  EXPECT_EQ(cuda::granted_sms(66, 132, 8, 8), 72);
  EXPECT_EQ(cuda::granted_sms(1, 132, 8, 8), 8);
  EXPECT_EQ(cuda::granted_sms(129, 132, 8, 8), 132) << "rounded past the device: the whole of it";
  EXPECT_EQ(cuda::granted_sms(27, 108, 4, 2), 28);
  EXPECT_EQ(cuda::granted_sms(1, 108, 4, 2), 4);
  EXPECT_EQ(cuda::granted_sms(0, 108, 4, 2), 0);
  EXPECT_EQ(cuda::granted_sms(5, 0, 4, 2), 0) << "no SM resource read";

  const auto h200 = [](int k) { return cuda::granted_sms(k, 132, 8, 8); };
  EXPECT_EQ(energy_workers(132, false, h200), (std::vector<int>{40, 72, 132}));
  EXPECT_EQ(energy_workers(132, true, h200), (std::vector<int>{40, 72}));
  // A small device whose quarter rounds up to its half: that share once.
  const auto small = [](int k) { return cuda::granted_sms(k, 16, 8, 8); };
  EXPECT_EQ(energy_workers(16, false, small), (std::vector<int>{8, 16}));
  const auto tiny = [](int k) { return cuda::granted_sms(k, 8, 8, 8); };
  EXPECT_EQ(energy_workers(8, true, tiny), std::vector<int>{}) << "no part smaller than the whole";
}

TEST(EnergyShares, PhaseTextRoundTripsAndAMalformedOneIsRefused) {
  Sample s;
  s.phase = energy_phase({"TENSOR.FP16.FP32", 33, 132});
  EXPECT_EQ(s.phase, "energy:TENSOR.FP16.FP32:33/132");
  const auto share = energy_share(s);
  ASSERT_TRUE(share);
  EXPECT_EQ(share->target, "TENSOR.FP16.FP32");
  EXPECT_EQ(share->workers, 33);
  EXPECT_EQ(share->of, 132);
  s.phase = "sustained:L2";
  EXPECT_FALSE(energy_share(s));
  // The ceilings are those of the whole device: an energy row never feeds one.
  Sample sweep_row, energy_row;
  energy_row.phase = "energy:L2:1/4";
  EXPECT_EQ(burst_samples({sweep_row, energy_row}).size(), 1u);
  for (const char* bad : {"energy:L2:3/2", "energy::1/2", "energy:L2:x/4", "energy:L2:1", "energy:L2:0/4"}) {
    s.phase = bad;
    EXPECT_THROW(energy_share(s), std::invalid_argument) << bad;
  }

  // sweep.csv keeps the phase, and its reader refuses a malformed one with the row's line.
  TempDir d;
  const std::string path = (d.path() / "sweep.csv").string();
  {
    SweepWriter w(path);
    Sample row;
    row.backend = "cpu";
    row.probe = "bandwidth";
    row.seconds = 0.1;
    row.bytes = 1e9;
    row.gbs = 10;
    row.energy_j = 3;
    row.point_samples = 1;
    row.phase = "energy:L2:1/4";
    w.append_point({row});
  }
  const std::vector<Sample> back = read_sweep_csv(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].phase, "energy:L2:1/4");
  {
    std::ofstream out(path, std::ios::app);
    std::string row = sweep_csv_row(back[0]);
    row.replace(row.rfind("1/4"), 3, "5/4");
    out << row << "\n" << sweep_csv_row(back[0]) << "\n";  // not the last line, which may be torn
  }
  try {
    read_sweep_csv(path);
    ADD_FAILURE() << "a share of 5 of 4 workers was read";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("energy:<target>:<k>/<n>"), std::string::npos) << e.what();
  }
}

// A burst machine of the CPU plan below: FP64.FMA and FP64.noFMA at their best points, L1 and
// DRAM of the read series.
struct Burst {
  Plan plan;
  Machine machine;
};

Burst cpu_burst(int threads) {
  const RunConfig config = parse_config(
      "cpu:\n  probes:\n"
      "    bandwidth: {mode: [read], working_set_bytes: [16KiB, 64MiB, 128MiB]}\n"
      "    flops: {precision: [fp64], form: [fma, nofma], flops_per_element: [64]}\n",
      "t.yaml");
  Burst b;
  b.plan = build_plan(config, *config.backend("cpu"), DeviceInfo{});
  b.machine.device.memory_name = "DRAM";
  b.machine.device.threads = b.machine.device.compute_units = threads;
  b.machine.device.caches = {{"L1", 48 * 1024, threads}, {"L3", 32 << 20, 1}};
  for (const PlanPoint& p : b.plan.points) {
    if (p.probe->info().name != "flops") continue;
    ComputeCeiling c;
    c.name = p.params.at("form") == "fma" ? "FP64.FMA" : "FP64.noFMA";
    c.probe = "flops";
    c.params = p.params;
    b.machine.compute.push_back(c);
  }
  MemoryLevel l1, dram;
  l1.level = "L1";
  l1.probe = dram.probe = "bandwidth";
  l1.params = dram.params = {{"mode", "read"}};
  l1.working_set_lo = l1.working_set_hi = 16384;
  dram.level = "DRAM";
  dram.working_set_lo = 64.0 * 1024 * 1024;
  dram.working_set_hi = 128.0 * 1024 * 1024;
  b.machine.memory = {l1, dram};
  return b;
}

TEST(EnergyTargets, EveryFmaCeilingAndEveryLevelOnPartOfTheDevice) {
  const Burst b = cpu_burst(8);
  std::vector<std::string> missing;
  const std::vector<EnergyTarget> targets = energy_targets(b.plan, b.machine, {}, WorkerSplit{8}, missing);
  EXPECT_TRUE(missing.empty()) << missing.front();
  ASSERT_EQ(targets.size(), 3u) << "FP64.FMA, L1 and DRAM; not noFMA";
  EXPECT_EQ(targets[0].target, "FP64.FMA");
  EXPECT_EQ(targets[0].workers, (std::vector<int>{2, 4, 8}));
  EXPECT_FALSE(targets[0].scale_working_set);
  EXPECT_EQ(targets[1].target, "L1");
  EXPECT_TRUE(targets[1].scale_working_set) << "each worker keeps its share of the data in its L1";
  EXPECT_EQ(targets[2].target, "DRAM");
  EXPECT_EQ(targets[2].point->params.at("working_set_bytes"), std::to_string(128 * 1024 * 1024));
  EXPECT_EQ(targets[2].workers, (std::vector<int>{8})) << "a shared level on every worker only";
  EXPECT_FALSE(targets[2].scale_working_set);
  for (const EnergyTarget& t : targets) EXPECT_EQ(t.of, 8);
  EXPECT_TRUE(private_level(b.machine.device, "L1"));
  EXPECT_FALSE(private_level(b.machine.device, "L3")) << "one instance for all the cores";
  EXPECT_FALSE(private_level(b.machine.device, "DRAM"));

  // A resumed run: the sustained phase measured FP64.FMA on every worker, the energy phase L1 on 2.
  Sample sustained, done;
  sustained.phase = "sustained:FP64.FMA";
  done.phase = "energy:L1:2/8";
  const std::vector<EnergyTarget> rest = energy_targets(b.plan, b.machine, {sustained, done}, WorkerSplit{8}, missing);
  ASSERT_EQ(rest.size(), 3u);
  EXPECT_EQ(rest[0].workers, (std::vector<int>{2, 4}));
  EXPECT_EQ(rest[1].workers, (std::vector<int>{4, 8}));
  // Where the sustained phase ran the device memory, the phase leaves it out.
  Sample dram_sustained;
  dram_sustained.phase = "sustained:DRAM";
  EXPECT_EQ(energy_targets(b.plan, b.machine, {dram_sustained}, WorkerSplit{8}, missing).size(), 2u);

  // One worker has no part to run on: one line names every target as short of rates. (A backend
  // none of whose probes can run on part of the device has nothing to say here: the model's own
  // line says why it is not fitted.)
  const std::vector<EnergyTarget> none = energy_targets(b.plan, cpu_burst(1).machine, {}, WorkerSplit{1}, missing);
  EXPECT_TRUE(none.empty());
  ASSERT_EQ(missing.size(), 1u) << "one line for every target";
  EXPECT_NE(missing[0].find("energy model: FP64.FMA, L1, DRAM: only at full rate: probes 'bandwidth', 'flops' ran "
                            "on one worker"),
            std::string::npos)
      << missing[0];
}

// A probe whose launches always fill the whole device, as the CUDA probes' do: only a backend
// that confines launches (a GPU's green contexts) puts its point on part of the device.
class WholeDeviceProbe : public Probe {
 public:
  explicit WholeDeviceProbe(const std::string& name) : info_{name, "cuda", "whole-device launches", {}, {}, {}} {}
  const ProbeInfo& info() const override { return info_; }
  std::uint64_t footprint_bytes(const Params&) const override { return 0; }
  std::unique_ptr<PreparedPoint> prepare(const Params&, const DeviceInfo&) const override { return nullptr; }

 private:
  ProbeInfo info_;
};

TEST(EnergyTargets, AGpuBackendThatConfinesLaunchesPutsAnyProbeOnPartOfTheDevice) {
  const WholeDeviceProbe tensor("tensor"), shared("shared");
  Plan plan;
  PlanPoint point;
  point.probe = &tensor;
  point.params = {{"type", "fp16_fp32"}};
  plan.points.push_back(point);
  // Shared memory's probe has no working-set axis: its level names its point by the parameters.
  for (const char* degree : {"1", "2"}) {
    point.probe = &shared;
    point.params = {{"conflict_degree", degree}};
    plan.points.push_back(point);
  }
  Machine burst;
  burst.device.compute_units = 132;
  ComputeCeiling c;
  c.name = "TENSOR.FP16.FP32";
  c.probe = "tensor";
  c.params = plan.points[0].params;
  burst.compute.push_back(c);
  MemoryLevel level;
  level.level = "shared";
  level.probe = "shared";
  level.params = {{"conflict_degree", "2"}};
  burst.memory.push_back(level);

  std::vector<std::string> missing;
  EXPECT_TRUE(energy_targets(plan, burst, {}, WorkerSplit{132}, missing).empty());
  EXPECT_TRUE(missing.empty()) << "nothing runs: the model's own line says why";

  const WorkerSplit green{132, [](int k) { return cuda::granted_sms(k, 132, 8, 8); }};
  const std::vector<EnergyTarget> targets = energy_targets(plan, burst, {}, green, missing);
  ASSERT_EQ(targets.size(), 2u);
  EXPECT_EQ(targets[0].target, "TENSOR.FP16.FP32");
  EXPECT_EQ(targets[0].workers, (std::vector<int>{40, 72, 132}));
  EXPECT_EQ(targets[0].of, 132);
  EXPECT_EQ(targets[1].target, "shared");
  EXPECT_EQ(targets[1].point, &plan.points[2]) << "the point with the level's parameters";
  EXPECT_EQ(targets[1].workers, (std::vector<int>{132})) << "not a cache the device lists per SM: all SMs only";
  EXPECT_TRUE(missing.empty()) << missing.front();
  // A resumed run finds its shares under the counts it was granted.
  Sample done;
  done.phase = "energy:TENSOR.FP16.FP32:40/132";
  EXPECT_EQ(energy_targets(plan, burst, {done}, green, missing)[0].workers, (std::vector<int>{72, 132}));
}

DeviceInfo cpu_device(int threads) {
  static const DeviceInfo described = Registry::instance().backend("cpu")->describe(2);
  DeviceInfo d = described;
  d.threads = threads;
  d.compute_units = std::min(d.compute_units, threads);
  return d;
}

// The narrowest vector width the bandwidth probe offers in this build.
std::string narrowest_vector() {
  for (const Axis& a : Registry::instance().probe("cpu", "bandwidth")->info().axes)
    if (a.name == "vector_bits" && !a.choices.empty()) return a.choices.back();
  return "";
}

TEST(EnergyPhaseProbes, CpuProbesOnFewerWorkersDoTheirShareAndVerify) {
  const Probe* flops = Registry::instance().probe("cpu", "flops");
  const Probe* bandwidth = Registry::instance().probe("cpu", "bandwidth");
  ASSERT_TRUE(flops->runs_on_fewer_workers());
  ASSERT_TRUE(bandwidth->runs_on_fewer_workers());
  const Params fp = {{"precision", "fp64"}, {"form", "fma"}, {"flops_per_element", "8"}, {"bytes_per_thread", "16384"}};
  auto whole = flops->prepare(fp, cpu_device(2));
  auto part = flops->prepare(fp, cpu_device(1));
  for (auto* p : {whole.get(), part.get()}) {
    p->set_repetitions(3);
    p->launch();
    const Check c = p->verify();
    EXPECT_TRUE(c.ok) << c.detail;
  }
  EXPECT_DOUBLE_EQ(part->work().flops * 2, whole->work().flops) << "one of two workers does half the FLOPs";
  EXPECT_DOUBLE_EQ(part->work().working_set_bytes * 2, whole->work().working_set_bytes);

  const Params bw = {{"mode", "rmw"}, {"vector_bits", narrowest_vector()}, {"working_set_bytes", "65536"}};
  auto one = bandwidth->prepare(bw, cpu_device(1));
  one->set_repetitions(2);
  one->launch();
  const Check c = one->verify();
  EXPECT_TRUE(c.ok) << c.detail;
  EXPECT_DOUBLE_EQ(one->work().bytes(), 2 * 2 * 65536.0);
}

// The CPU backend's launches, timed by a model: each worker's share of a launch takes
// kSecondsPerRep per repetition whatever the number of workers (so k workers do k shares in the
// time of one), and the counter advances by pi0 T + eps_flop W + eps_byte Q over it.
class ModelledCounterBackend : public Backend {
 public:
  static constexpr double kSecondsPerRep = 0.002;
  static constexpr double kPi0 = 40, kPjPerFlop = 150, kPjPerByte = 12;

  std::string name() const override { return "cpu"; }
  std::string unavailable_reason() const override { return {}; }
  DeviceInfo identify() override { return {}; }
  DeviceInfo describe(int) override { return {}; }
  double time_launch(PreparedPoint& p) override {
    p.launch();
    const Work w = p.work();
    const double seconds = kSecondsPerRep * static_cast<double>(p.repetitions());
    joules_ += kPi0 * seconds + (kPjPerFlop * w.flops + kPjPerByte * w.bytes()) * 1e-12;
    return seconds;
  }
  double measure_clock_mhz() override { return 2000; }
  std::optional<double> energy_joules() override { return joules_; }
  EnergyCounterInfo energy_counter() const override { return {true, "modelled counter", ""}; }
  // With foreign_cores > 0, another process ("4242 stress") keeps that many of the run's cores busy.
  ForeignUse foreign_use() override {
    ForeignUse f;
    if (foreign_cores <= 0) return f;
    f.known = f.measures_time = true;
    f.busy_seconds = foreign_cores * std::chrono::duration<double>(std::chrono::steady_clock::now() - created_).count();
    f.processes = {"4242 stress"};
    return f;
  }
  double foreign_cores = 0;

 private:
  double joules_ = 0;
  std::chrono::steady_clock::time_point created_ = std::chrono::steady_clock::now();
};

// FP64.FMA and L1 of a small CPU plan, the flops probe's bytes served from L1 too (its 16 KiB
// per worker), on two workers, with the modelled counter's update interval.
struct SmallRun {
  Plan plan;
  Machine machine;
};

SmallRun small_cpu_run() {
  const std::string bits = narrowest_vector();
  const RunConfig config = parse_config(
      "cpu:\n  probes:\n"
      "    bandwidth: {mode: [read], vector_bits: [" +
          bits +
          "], working_set_bytes: [64KiB]}\n"
          "    flops: {precision: [fp64], form: [fma], flops_per_element: [8], bytes_per_thread: [16KiB]}\n",
      "t.yaml");
  SmallRun r;
  r.plan = build_plan(config, *config.backend("cpu"), DeviceInfo{});
  Machine& machine = r.machine;
  machine.device = cpu_device(2);
  machine.device.extra[kEnergyCounterKey] = "modelled counter";
  machine.device.extra[kEnergyUpdateKey] = "0.001";  // observations of 40 ms
  MemoryLevel l1;
  l1.level = "L1";
  l1.probe = "bandwidth";
  l1.params = {{"mode", "read"}, {"vector_bits", bits}};
  l1.working_set_lo = 1024;
  l1.working_set_hi = 65536;
  l1.gbs = 100;
  machine.memory = {l1};
  for (const PlanPoint& p : r.plan.points)
    if (p.probe->info().name == "flops") {
      ComputeCeiling c;
      c.name = "FP64.FMA";
      c.probe = "flops";
      c.params = p.params;
      c.gflops = 50;
      machine.compute.push_back(c);
    }
  return r;
}

TEST(EnergyPhaseRun, ItsSharesLetTheModelTellWorkFromConstantPower) {
  const SmallRun run = small_cpu_run();
  const Plan& plan = run.plan;
  Machine machine = run.machine;
  ASSERT_EQ(plan.points.size(), 2u);
  const auto flop_type = [](const Sample& s) { return s.probe == "flops" ? std::string("FP64.FMA") : std::string(); };

  // The sweep alone, every point on both workers: one rate per ceiling, so the model cannot be
  // fitted, whatever the number of points.
  ModelledCounterBackend backend;
  std::vector<Sample> all;
  for (int round = 0; round < 8; ++round)
    for (const PlanPoint& p : plan.points) {
      auto prepared = p.probe->prepare(p.params, machine.device);
      const PointMeasurement m = measure_point(backend, *prepared, energy_testing::quick_settings());
      ASSERT_TRUE(m.check.ok) << m.check.detail;
      for (Sample s : samples_of(m, "cpu", p.probe->info().name, p.params, p.index, 0)) {
        s.point = p.index + 2 * round;  // eight points of each
        all.push_back(s);
      }
    }
  Machine alone = machine;
  fit_energy_model(all, flop_type, alone);
  EXPECT_FALSE(alone.energy_model);
  ASSERT_FALSE(alone.missing.empty());
  EXPECT_NE(alone.missing.back().find("cannot tell apart"), std::string::npos) << alone.missing.back();

  // The energy phase adds each target on one of the two workers.
  std::vector<std::string> missing;
  const std::vector<EnergyTarget> targets = energy_targets(plan, machine, all, WorkerSplit{2}, missing);
  ASSERT_EQ(targets.size(), 2u);
  TempDir d;
  SweepWriter sweep((d.path() / "sweep.csv").string());
  std::vector<std::string> lines;
  const EnergyPhaseOutcome out = run_energy_phase(
      backend, machine.device, WorkerSplit{2}, targets, energy_testing::quick_settings(), 0.3, sweep,
      [] { return false; }, [&](const std::string& line) { lines.push_back(line); });
  EXPECT_EQ(out.failures, 0);
  EXPECT_TRUE(out.missing.empty());
  ASSERT_EQ(lines.size(), 4u) << "FP64.FMA and L1, each on 1 and on 2 of 2 workers";
  EXPECT_NE(lines[0].find("energy FP64.FMA on 1 of 2 workers"), std::string::npos) << lines[0];
  // The rates of the sweep's rows: each share runs at its fraction of them (the modelled time
  // of a launch does not depend on the workers, so the work per second is the work per launch's).
  double fma_gflops = 0, l1_gbs = 0;
  for (const Sample& s : all) {
    if (s.probe == "flops") fma_gflops = s.gflops;
    if (s.probe == "bandwidth") l1_gbs = s.gbs;
  }
  bool half_l1 = false;
  for (const Sample& s : out.samples) {
    const auto share = energy_share(s);
    ASSERT_TRUE(share) << s.phase;
    const double fraction = static_cast<double>(share->workers) / share->of;
    if (share->target == "FP64.FMA") EXPECT_NEAR(s.gflops / fma_gflops, fraction, 1e-9) << s.phase;
    if (share->target == "L1") EXPECT_NEAR(s.gbs / l1_gbs, fraction, 1e-9) << s.phase;
    if (share->target == "L1" && share->workers == 1) {
      half_l1 = true;
      EXPECT_EQ(s.working_set_bytes, 32768) << "one worker keeps its 32 KiB share";
      EXPECT_EQ(s.params.at("working_set_bytes"), "65536") << "the row names its plan point";
    }
  }
  EXPECT_TRUE(half_l1);
  EXPECT_EQ(read_sweep_csv((d.path() / "sweep.csv").string()).size(), out.samples.size());

  all.insert(all.end(), out.samples.begin(), out.samples.end());
  fit_energy_model(all, flop_type, machine);
  ASSERT_TRUE(machine.energy_model) << (machine.missing.empty() ? "" : machine.missing.back());
  const EnergyModelSection& m = *machine.energy_model;
  EXPECT_NEAR(m.constant_power_w, ModelledCounterBackend::kPi0, 1e-3 * ModelledCounterBackend::kPi0);
  ASSERT_EQ(m.pj_per_flop.size(), 1u);
  EXPECT_NEAR(m.pj_per_flop[0].value, ModelledCounterBackend::kPjPerFlop, 1e-3 * ModelledCounterBackend::kPjPerFlop);
  ASSERT_EQ(m.pj_per_byte.size(), 1u);
  EXPECT_EQ(m.pj_per_byte[0].name, "L1");
  EXPECT_NEAR(m.pj_per_byte[0].value, ModelledCounterBackend::kPjPerByte, 1e-3 * ModelledCounterBackend::kPjPerByte);
  EXPECT_EQ(m.within_5pct, m.launches);
  EXPECT_GT(m.points, 16 + 4 * 2) << "each share gives several observations of 40 ms";
}

// The modelled counter's backend, confining launches as the CUDA backend does with green
// contexts: it records the shares it was asked for, or refuses them all.
class ConfiningBackend : public ModelledCounterBackend {
 public:
  int confinable_workers(int wanted) override { return wanted; }
  std::unique_ptr<Confinement> confine(int workers) override {
    if (out_of_memory) throw DeviceOutOfMemory("no memory for a green context");
    if (!refuse.empty()) throw std::runtime_error(refuse);
    events.push_back("confine " + std::to_string(workers));
    struct Part : Confinement {
      Part(int k, std::vector<std::string>& events) : k(k), events(events) {}
      ~Part() override { events.push_back("release"); }
      int workers() const override { return k; }
      int k;
      std::vector<std::string>& events;
    };
    return std::make_unique<Part>(workers, events);
  }
  double time_launch(PreparedPoint& p) override {
    if (events.empty() || events.back() != "launch") events.push_back("launch");
    return ModelledCounterBackend::time_launch(p);
  }
  std::vector<std::string> events;  // "confine k", "launch" (for a run of launches), "release"
  std::string refuse;
  bool out_of_memory = false;
};

// A GPU whose smallest partition is the whole of it (8 SMs in partitions of 8).
class OnePartitionBackend : public ConfiningBackend {
 public:
  int confinable_workers(int wanted) override { return wanted > 0 ? 8 : 0; }
};

TEST(EnergyPhaseRun, TheSplitIsTheBackendsWhereItHasAPartSmallerThanTheDevice) {
  DeviceInfo gpu;
  gpu.compute_units = 132;
  ConfiningBackend confining;
  const WorkerSplit split = worker_split(confining, gpu);
  EXPECT_TRUE(split.backend_confines());
  EXPECT_EQ(split.workers, 132);
  ASSERT_TRUE(split.granted);
  EXPECT_EQ(split.granted(33), 33) << "the backend's grant";

  gpu.compute_units = 8;
  gpu.threads = 0;
  OnePartitionBackend whole;
  EXPECT_FALSE(worker_split(whole, gpu).backend_confines()) << "no part smaller than the device";
  ModelledCounterBackend cpu;
  DeviceInfo host;
  host.compute_units = 2;
  host.threads = 2;
  const WorkerSplit threads = worker_split(cpu, host);
  EXPECT_FALSE(threads.backend_confines()) << "a backend that cannot confine: its probes' threads";
  EXPECT_EQ(threads.workers, 2);
}

TEST(EnergyPhaseRun, ABackendThatConfinesLaunchesHoldsEachPartialShare) {
  const SmallRun run = small_cpu_run();
  ConfiningBackend backend;
  const WorkerSplit split = worker_split(backend, run.machine.device);
  ASSERT_TRUE(split.backend_confines());
  EXPECT_EQ(split.workers, run.machine.device.compute_units);
  std::vector<std::string> missing;
  const std::vector<EnergyTarget> targets = energy_targets(run.plan, run.machine, {}, split, missing);
  ASSERT_EQ(targets.size(), 2u);
  TempDir d;
  SweepWriter sweep((d.path() / "sweep.csv").string());
  const auto quiet = [](const std::string&) {};
  EnergyPhaseOutcome out = run_energy_phase(
      backend, run.machine.device, split, targets, energy_testing::quick_settings(), 0.05, sweep, [] { return false; },
      quiet);
  EXPECT_EQ(out.failures, 0);
  EXPECT_TRUE(out.missing.empty());
  // Each target's share of 1 of 2 launches inside its partition; the whole device needs none.
  EXPECT_EQ(backend.events, (std::vector<std::string>{"confine 1", "launch", "release", "launch", "confine 1", "launch",
                                                      "release", "launch"}));

  // A backend that cannot confine (no green contexts): the partial shares are named once, the
  // whole-device ones still run, and nothing counts as a failure.
  backend.refuse = "the driver has no cuGreenCtxCreate";
  std::vector<std::string> lines;
  out = run_energy_phase(
      backend, run.machine.device, split, targets, energy_testing::quick_settings(), 0.05, sweep, [] { return false; },
      [&](const std::string& line) { lines.push_back(line); });
  EXPECT_EQ(out.failures, 0);
  ASSERT_EQ(out.missing.size(), 1u);
  EXPECT_EQ(out.missing[0], "energy model: 2 shares on part of the device not run: the driver has no cuGreenCtxCreate");
  ASSERT_FALSE(out.samples.empty());
  for (const Sample& s : out.samples) EXPECT_EQ(energy_share(s)->workers, 2) << s.phase;
  const auto tried = std::count_if(lines.begin(), lines.end(),
                                   [](const std::string& l) { return l.find("not run: ") != std::string::npos; });
  EXPECT_EQ(tried, 1) << "after the first refusal the others are not tried";

  // A device out of memory is that share's gap, not a partition the backend cannot make.
  backend.refuse.clear();
  backend.out_of_memory = true;
  out = run_energy_phase(
      backend, run.machine.device, split, targets, energy_testing::quick_settings(), 0.05, sweep, [] { return false; },
      quiet);
  ASSERT_EQ(out.missing.size(), 2u);
  for (const std::string& line : out.missing)
    EXPECT_NE(line.find(":1/2: out of device memory: no memory for a green context"), std::string::npos) << line;
}

TEST(EnergyPhaseRun, SharesBesideAnotherProcessAreFlaggedAndNamedOnce) {
  const SmallRun run = small_cpu_run();
  ModelledCounterBackend backend;
  backend.foreign_cores = 1;
  std::vector<std::string> missing;
  const std::vector<EnergyTarget> targets = energy_targets(run.plan, run.machine, {}, WorkerSplit{2}, missing);
  TempDir d;
  SweepWriter sweep((d.path() / "sweep.csv").string());
  std::vector<std::string> lines;
  const EnergyPhaseOutcome out = run_energy_phase(
      backend, run.machine.device, WorkerSplit{2}, targets, energy_testing::quick_settings(), 0.05, sweep,
      [] { return false; }, [&](const std::string& line) { lines.push_back(line); });
  EXPECT_EQ(out.foreign, 4);
  ASSERT_EQ(out.missing.size(), 1u) << "one line for every share";
  EXPECT_EQ(out.missing[0].rfind("energy model: 4 of 4 shares measured while other processes used the device, not "
                                 "fitted (first: energy:FP64.FMA:1/2: other processes used ",
                                 0),
            0u)
      << out.missing[0];
  EXPECT_NE(out.missing[0].find("4242 stress)"), std::string::npos) << out.missing[0];
  ASSERT_FALSE(out.samples.empty());
  for (const Sample& s : out.samples) EXPECT_NE(s.flags.find(kForeignLoadFlag), std::string::npos) << s.phase;

  // The model leaves them out: no rows of its own, nothing fitted.
  Machine m = run.machine;
  fit_energy_model(
      out.samples, [](const Sample&) { return std::string("FP64.FMA"); }, m);
  EXPECT_FALSE(m.energy_model);
}

}  // namespace
}  // namespace roofprobe
