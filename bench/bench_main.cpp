// roofprobe-bench: the probes as Google Benchmarks (for --benchmark_filter, JSON output and
// comparison tools) plus benchmarks of the fitter. Probe points come from the embedded quick
// configuration, so a new probe appears here without edits.
#include <benchmark/benchmark.h>

#include <cmath>
#include <iostream>
#include <random>

#include "driver/run/config.hpp"
#include "driver/fit/fit.hpp"
#include "driver/run/plan.hpp"
#include "kernels/cpu/core_clock.hpp"

namespace roofprobe {
namespace {

void register_probe_points(const std::string& backend_name) {
  Backend* backend = Registry::instance().backend(backend_name);
  if (backend == nullptr || !backend->unavailable_reason().empty()) return;
  static RunConfig config = load_embedded_config("quick.yaml");
  const BackendConfig* bc = config.backend(backend_name);
  if (bc == nullptr || !bc->built) return;
  static std::map<std::string, DeviceInfo> devices;
  DeviceInfo& device = devices[backend_name] = backend->describe(bc->threads);
  Plan plan = build_plan(config, *bc, device);
  for (const PlanPoint& point : plan.points) {
    std::string name = backend_name + "/" + point.probe->info().name + "/" + params_to_string(point.params);
    const Probe* probe = point.probe;
    Params params = point.params;
    benchmark::RegisterBenchmark(
        name.c_str(),
        [=, &device](benchmark::State& state) {
          // A point that cannot run here (out of device memory, a launch error) is reported as this
          // benchmark's error; the others still run.
          std::unique_ptr<PreparedPoint> prepared;
          try {
            prepared = probe->prepare(params, device);
          } catch (const std::exception& e) {
            state.SkipWithError(e.what());
            for (auto _ : state) {
            }
            return;
          }
          // One launch of at least ~1 ms so the backend's timer dominates nothing.
          double t = backend->time_launch(*prepared);
          if (t < 1e-3) prepared->set_repetitions(static_cast<std::int64_t>(std::ceil(1e-3 / std::max(t, 1e-8))));
          double seconds = 0;
          for (auto _ : state) {
            double s = backend->time_launch(*prepared);
            state.SetIterationTime(s);
            seconds += s;
          }
          const Work w = prepared->work();
          const double n = static_cast<double>(state.iterations());
          // The engine's rates (rates_of, 1e9 units) of one launch of the mean length, in the
          // per-second units Google Benchmark prints with its own prefixes; zero counts left out.
          const Rates r = rates_of(w, seconds / n);
          auto rate = [&](const char* name, double per_second_1e9) {
            if (per_second_1e9 > 0) state.counters[name] = benchmark::Counter(per_second_1e9 * 1e9);
          };
          rate("bytes_per_second", r.gbs);
          rate("flops_per_second", r.gflops);
          rate("transactions_per_second", r.gtxn_s);
          rate("warp_instructions_per_second", r.gips);
          rate("shared_wavefronts_per_second", r.shared_gtxn_s);
          rate("clock_hz", w.clock_cycles * n / seconds / 1e9);  // cycles counted by the probe, not a Work rate
          state.counters["working_set_bytes"] = w.working_set_bytes;
          Check check = prepared->verify();
          if (!check.ok) state.SkipWithError(("verification failed: " + check.detail).c_str());
        })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
}

// A CPU-like four-level sweep with noise and soft knees, as the fitter sees real data.
std::vector<CurvePoint> synthetic_sweep(int points_per_octave) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(0.0, 0.02);
  const double caps[] = {64e3, 1e6, 32e6};
  const double levels[] = {180, 90, 45, 18};
  std::vector<CurvePoint> out;
  for (double x = 4096; x <= (1ull << 30); x *= std::pow(2.0, 1.0 / points_per_octave)) {
    int level = 0;
    while (level < 3 && x > caps[level]) ++level;
    for (int s = 0; s < 3; ++s) out.push_back({x, levels[level] * (1 + noise(rng))});
  }
  return out;
}

void BM_FindPlateaus(benchmark::State& state) {
  auto sweep = synthetic_sweep(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(find_plateaus(sweep));
  state.counters["points"] = static_cast<double>(sweep.size());
}
BENCHMARK(BM_FindPlateaus)->Arg(2)->Arg(4)->Arg(8)->Unit(benchmark::kMicrosecond);

// The core clock the dependent-add chain reads alone (0) and among vector FMAs of the build's
// widest vector (1), kernels/cpu/core_clock.hpp: where the second is lower, the core clocks down
// for vector work, and the flops ceilings' theoretical peaks use it. One thread: the clock is
// per core; run two copies pinned to two cores to see an all-core figure.
void BM_ChainClock(benchmark::State& state) {
  const auto load = state.range(0) == 0 ? cpu::ChainLoad::scalar : cpu::ChainLoad::vector_fma;
  double mhz = 0;
  for (auto _ : state) mhz += cpu::chain_clock_mhz(cpu::CoreClock::kChainSeconds, load);
  state.counters["clock_hz"] = mhz * 1e6 / static_cast<double>(state.iterations());
  state.SetLabel(load == cpu::ChainLoad::scalar ? "scalar" : "among vector FMAs");
}
BENCHMARK(BM_ChainClock)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace roofprobe

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  try {
    roofprobe::register_probe_points("cpu");
    roofprobe::register_probe_points("cuda");
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
