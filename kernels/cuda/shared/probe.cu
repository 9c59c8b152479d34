// Probe "shared" on the CUDA backend: shared-memory bandwidth and the shared walls of the
// instruction roofline. Every warp of one full wave of resident blocks chases through a table in
// shared memory with 4-byte loads whose lane addresses have a chosen bank-conflict degree
// (kernels/cuda/shared/model.hpp): "broadcast" (one word for all lanes), or d-way conflicts
// for d = 1 (conflict-free), 2, ..., 32.
//
// Accounting: each warp load instruction takes shared_pattern_wavefronts(d) 128-byte wavefronts
// (computed from the 32 lane addresses) and delivers 32 x 4 bytes to the lanes. The conflict-free
// series gives the "shared" memory level (GB/s, theory 32 banks x 4 B = 128 B/clk/SM); every
// series gives one shared wall (warp instructions per wavefront: 1/d, broadcast 1).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"
#include "kernels/cuda/shared/model.hpp"
#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/backend/probe_decl.hpp"
#include "kernels/cuda/backend/repeated_point.hpp"
#include "kernels/cuda/shared/kernel.cuh"

namespace roofprobe::cuda {

RP_CUDA_CARVEOUT("shared", Carveout::MaxShared);  // its data lives in shared memory
namespace {

constexpr double kTargetLaunchSeconds = 2e-3;
// Odd, so the chase visits every row; passed at run time so the compiler cannot fold the table.
constexpr std::uint32_t kRowStep = 3;
// Shared memory serves one 128-byte wavefront per clock per SM (32 banks x 4 bytes) on every
// architecture from Volta to Hopper (CUDA C++ Programming Guide, "Shared Memory" of each compute
// capability). Only used to size launches here; the GPU test checks the measured rate against it.
constexpr double kWavefrontsPerClockPerSm = 1.0;

int parse_degree(const std::string& text) {
  if (text == "broadcast") return kSharedBroadcast;
  int d = -1;
  try {
    std::size_t used = 0;
    d = std::stoi(text, &used);
    if (used != text.size()) d = -1;
  } catch (const std::exception&) {
    d = -1;
  }
  if (d == kSharedBroadcast || !shared_degree_valid(d))
    throw std::invalid_argument("shared: conflict_degree '" + text + "' is not broadcast, 1, 2, 4, 8, 16 or 32");
  return d;
}

class SharedPoint final : public RepeatedPoint {
 public:
  SharedPoint(int degree, const DeviceInfo& dev) : degree_(degree) {
    use_selected_device();
    blocks_ = resident_blocks(&shared_kernel<kSharedSlots>, kSharedBlock, carveout_of("shared"));
    warps_ = static_cast<std::size_t>(blocks_) * (kSharedBlock / kSharedWarpLanes);
    // Seconds per loop iteration if the SMs deliver one wavefront per clock.
    const SharedWork per_iteration =
        shared_work(static_cast<double>(warps_), kSharedSlots, kSharedStepsPerIteration, degree_);
    const double mhz = dev.clock_measured_mhz > 0 ? dev.clock_measured_mhz : 1500.0;
    const int sms = std::max(dev.compute_units, 1);
    set_repetitions(
        reps_for(per_iteration.wavefronts / (sms * kWavefrontsPerClockPerSm * mhz * 1e6), kTargetLaunchSeconds));
    out_ = DeviceBuffer<std::uint32_t>(warps_ * kSharedWarpLanes);
    // A pattern no thread's checksum can have, so a kernel that stored nothing is caught.
    RP_CUDA_CHECK(cudaMemset(out_.get(), 0xff, out_.bytes()));
  }

  Work work() const override {
    const SharedWork s =
        shared_work(static_cast<double>(warps_), kSharedSlots, static_cast<double>(steps_per_chain(reps_)), degree_);
    Work w;
    w.bytes_read = s.bytes;
    w.shared_wavefronts = s.wavefronts;
    w.warp_instructions = s.warp_instructions;
    w.working_set_bytes = kSharedTableBytes;  // per block, in each SM's shared memory
    return w;
  }

  void launch() override {
    shared_kernel<kSharedSlots><<<blocks_, kSharedBlock>>>(degree_, kRowStep, reps_, out_.get());
    RP_CUDA_CHECK(cudaGetLastError());
    count_launch();
  }

  // Every thread's checksum of the last launch, as the host predicts it.
  Check verify_launches() override {
    std::vector<std::uint32_t> got(out_.size());
    RP_CUDA_CHECK(cudaMemcpy(got.data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost));
    const std::uint64_t steps = steps_per_chain(last_launch_reps_);
    for (std::size_t t = 0; t < got.size(); ++t) {
      const auto warp = static_cast<std::uint32_t>(t / kSharedWarpLanes);
      const int lane = static_cast<int>(t % kSharedWarpLanes);
      const std::uint32_t want = shared_expected_checksum(warp, lane, degree_, kSharedSlots, steps, kRowStep);
      if (got[t] != want) {
        return Check{false, "shared conflict_degree=" + degree_text() + ": thread " + std::to_string(t) + " after " +
                                std::to_string(steps) + " loads per chain: expected checksum " + std::to_string(want) +
                                ", got " + std::to_string(got[t])};
      }
    }
    return {};
  }

 private:
  static std::uint64_t steps_per_chain(int iterations) {
    return static_cast<std::uint64_t>(iterations) * kSharedStepsPerIteration;
  }
  std::string degree_text() const { return degree_ == kSharedBroadcast ? "broadcast" : std::to_string(degree_); }

  int degree_;
  int blocks_ = 0;
  std::size_t warps_ = 0;
  DeviceBuffer<std::uint32_t> out_;
};

class CudaSharedProbe final : public Probe {
 public:
  CudaSharedProbe() {
    info_.name = "shared";
    info_.backend = "cuda";
    info_.description =
        "shared-memory bandwidth and walls: every warp chases 8 independent chains of 4-byte "
        "ld.shared through a 32 KiB table per block, lanes in a d-way bank-conflict pattern "
        "(broadcast: one word for all lanes); wavefronts per request counted from the 32 "
        "lane addresses";
    info_.axes = {
        choice_axis("conflict_degree",
                    "distinct words per bank in one warp request (d-way bank conflict: d "
                    "wavefronts); broadcast: all lanes read one word (1 wavefront)",
                    {"broadcast", "1", "2", "4", "8", "16", "32"}),
    };
    FeedSpec level;
    level.kind = FeedKind::NamedLevel;
    level.level_name = "shared";
    level.metric = "gbs";
    level.series_axes = {"conflict_degree"};
    level.primary_series = "conflict_degree=1";
    FeedSpec walls;
    walls.kind = FeedKind::Walls;
    walls.wall_set = "shared";
    walls.metric = "shared_gtxn_s";
    walls.series_axes = {"conflict_degree"};
    walls.name_pattern = "conflict-{conflict_degree}";
    info_.feeds = {level, walls};
  }

  const ProbeInfo& info() const override { return info_; }

  std::string unsupported_reason(const Params& p, const DeviceInfo& dev) const override {
    (void)p;
    auto it = dev.extra.find("shared_per_block_optin_bytes");
    if (it != dev.extra.end()) {
      try {
        if (std::stoull(it->second) < kSharedTableBytes)
          return "shared: the kernel needs " + std::to_string(kSharedTableBytes) +
                 " bytes of shared memory per block, the device offers " + it->second;
      } catch (const std::exception&) {
      }
    }
    return {};
  }

  std::uint64_t footprint_bytes(const Params&) const override {
    // One 4-byte checksum per thread of a full wave: about 1 MiB on the largest GPUs.
    return std::uint64_t{4} << 20;
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& dev) const override {
    return std::make_unique<SharedPoint>(parse_degree(param_text(p, "conflict_degree")), dev);
  }

 private:
  ProbeInfo info_;
};

}  // namespace

RP_REGISTER_PROBE(CudaSharedProbe);

}  // namespace roofprobe::cuda
