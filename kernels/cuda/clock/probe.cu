// Probe "clock" on the CUDA backend: the SM clock while the chip is loaded. One full wave of
// resident blocks (every SM holds as many as fit) spins until clock64() has advanced N cycles,
// N = repetitions x kCyclesPerRep; the launch declares Work::clock_cycles = N and the engine
// derives each sample's clock as N / seconds. Two loads:
//   idle      the threads only read the clock: the clock of a busy-looking but cool chip;
//   fp32_fma  between clock reads, independent FFMA chains at full occupancy: the power draw of
//             an FP32 FMA ceiling run, so the clock it sags to shows.
// The launch lasts N cycles plus at most one loop turn and the launch overhead (microseconds
// against milliseconds), so N / seconds slightly underestimates the clock, never overestimates it.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"
#include "kernels/cuda/clock/kernel.cuh"
#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/backend/probe_decl.hpp"
#include "kernels/cuda/backend/repeated_point.hpp"

namespace roofprobe::cuda {

RP_CUDA_CARVEOUT("clock", Carveout::MaxL1);  // no shared memory
namespace {

constexpr double kTargetLaunchSeconds = 4e-3;
constexpr long long kCyclesPerRep = 100000;  // the unit the engine scales a launch by
// Keeps N far below the 2^63 clock64 range and each launch under ~10 s at 100 MHz.
constexpr int kMaxReps = 10000;

ClockLoad parse_load(const std::string& text) {
  if (text == "idle") return ClockLoad::Idle;
  if (text == "fp32_fma") return ClockLoad::Fp32Fma;
  throw std::invalid_argument("clock: load '" + text + "' is not idle or fp32_fma");
}

using ClockKernel = void (*)(long long, float, long long, long long*, long long*, long long*, long long*,
                             std::uint32_t*);

class ClockPoint final : public RepeatedPoint {
 public:
  ClockPoint(ClockLoad load, const DeviceInfo& dev)
      : RepeatedPoint(kMaxReps),
        load_(load),
        kernel_(load == ClockLoad::Idle ? &clock_kernel<ClockLoad::Idle> : &clock_kernel<ClockLoad::Fp32Fma>) {
    use_selected_device();
    blocks_ = resident_blocks(kernel_, kClockBlock, carveout_of("clock"));
    start_ = DeviceBuffer<long long>(static_cast<std::size_t>(blocks_));
    stop_ = DeviceBuffer<long long>(static_cast<std::size_t>(blocks_));
    turns_ = DeviceBuffer<long long>(static_cast<std::size_t>(blocks_));
    launch_ids_ = DeviceBuffer<long long>(static_cast<std::size_t>(blocks_));
    RP_CUDA_CHECK(cudaMemset(launch_ids_.get(), 0, launch_ids_.bytes()));
    results_ = DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(blocks_) * kClockBlock);
    RP_CUDA_CHECK(cudaMemset(turns_.get(), 0, turns_.bytes()));
    RP_CUDA_CHECK(cudaMemset(results_.get(), 0, results_.bytes()));
    const double mhz = dev.clock_measured_mhz > 0 ? dev.clock_measured_mhz
                       : dev.clock_max_mhz > 0    ? dev.clock_max_mhz
                                                  : 1500.0;
    set_repetitions(reps_for(kCyclesPerRep / (mhz * 1e6), kTargetLaunchSeconds));
  }

  Work work() const override {
    Work w;
    w.clock_cycles = static_cast<double>(cycles());
    return w;  // no bytes, FLOPs or instructions are declared: the FFMA count depends on the clock
  }

  void launch() override {
    // Each block records the number of the launch it last ran in (1, 2, ...).
    kernel_<<<blocks_, kClockBlock>>>(cycles(), 1.0f, launches_ + 1, start_.get(), stop_.get(), turns_.get(),
                                      launch_ids_.get(), results_.get());
    RP_CUDA_CHECK(cudaGetLastError());
    count_launch();
  }

  Check verify_launches() override {
    const long long last_cycles = static_cast<long long>(last_launch_reps_) * kCyclesPerRep;
    const auto blocks = static_cast<std::size_t>(blocks_);
    std::vector<long long> start(blocks), stop(blocks), turns(blocks), launch(blocks);
    RP_CUDA_CHECK(cudaMemcpy(start.data(), start_.get(), start_.bytes(), cudaMemcpyDeviceToHost));
    RP_CUDA_CHECK(cudaMemcpy(stop.data(), stop_.get(), stop_.bytes(), cudaMemcpyDeviceToHost));
    RP_CUDA_CHECK(cudaMemcpy(turns.data(), turns_.get(), turns_.bytes(), cudaMemcpyDeviceToHost));
    RP_CUDA_CHECK(cudaMemcpy(launch.data(), launch_ids_.get(), launch_ids_.bytes(), cudaMemcpyDeviceToHost));
    for (std::size_t b = 0; b < blocks; ++b) {
      if (launch[b] != launches_)
        return Check{false, "clock: block " + std::to_string(b) + " of " + std::to_string(blocks) +
                                " last ran in launch " + std::to_string(launch[b]) + " of " +
                                std::to_string(launches_)};
      if (turns[b] < 1 || stop[b] - start[b] < last_cycles) {
        return Check{false, "clock: block " + std::to_string(b) + " of " + std::to_string(blocks) + " spun " +
                                std::to_string(stop[b] - start[b]) + " cycles in " + std::to_string(turns[b]) +
                                " turns, expected at least " + std::to_string(last_cycles) + " cycles"};
      }
    }
    if (load_ == ClockLoad::Fp32Fma) return verify_chains();
    return {};
  }

 private:
  long long cycles() const { return static_cast<long long>(reps_) * kCyclesPerRep; }

  // Every thread's chains are back at their start values (kernels/cuda/clock/kernel.cuh).
  Check verify_chains() const {
    std::vector<std::uint32_t> results(results_.size());
    RP_CUDA_CHECK(cudaMemcpy(results.data(), results_.get(), results_.bytes(), cudaMemcpyDeviceToHost));
    for (std::size_t t = 0; t < results.size(); ++t) {
      const std::uint32_t want = clock_expected_result(t);
      if (results[t] != want)
        return Check{false, "clock fp32_fma: thread " + std::to_string(t) + " chain checksum " +
                                std::to_string(results[t]) + ", expected " + std::to_string(want)};
    }
    return {};
  }

  ClockLoad load_;
  ClockKernel kernel_;
  int blocks_ = 0;
  DeviceBuffer<long long> start_, stop_, turns_, launch_ids_;
  DeviceBuffer<std::uint32_t> results_;
};

class CudaClockProbe final : public Probe {
 public:
  CudaClockProbe() {
    info_.name = "clock";
    info_.backend = "cuda";
    info_.description =
        "SM clock under load: every SM spins a fixed number of clock64() cycles (idle: clock "
        "reads only; fp32_fma: independent FFMA chains between reads); clock = cycles / time";
    info_.axes = {
        choice_axis("load",
                    "idle: the threads only read the clock; fp32_fma: FFMA chains at full "
                    "occupancy between clock reads",
                    {"idle", "fp32_fma"}),
    };
    FeedSpec feed;
    feed.kind = FeedKind::Clock;
    feed.metric = "clock_mhz";
    feed.series_axes = {"load"};
    feed.name_pattern = "{load}";
    info_.feeds = {feed};
  }

  const ProbeInfo& info() const override { return info_; }

  std::uint64_t footprint_bytes(const Params&) const override { return 16u << 20; }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& dev) const override {
    return std::make_unique<ClockPoint>(parse_load(param_text(p, "load")), dev);
  }

 private:
  ProbeInfo info_;
};

}  // namespace

RP_REGISTER_PROBE(CudaClockProbe);

}  // namespace roofprobe::cuda
