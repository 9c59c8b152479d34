// Probe "issue" on the CUDA backend: the instruction roofline's compute side. Every thread runs
// 8 independent chains of FFMA (fp32), IMAD (int32) or both interleaved (mixed) in registers, so
// the 4 schedulers of an SM can issue every cycle; the engine turns the payload warp instructions
// (kernels/cuda/issue/model.hpp) into warp GIPS.
//   active_lanes < 32: only lanes below it run the payload (thread predication): the warp issues
//     as often, the threads do active/32 of the work (thread GIPS = warp GIPS x active / 32).
//   instructions_per_transaction = n > 0: the warps also stream a DRAM-sized buffer with
//     coalesced 128-byte loads, n payload warp instructions per 32-byte sector, so a sweep over n
//     traces GIPS against instruction intensity (memory-bound below the ridge, issue-bound above).
// Loop overhead, branches and the loads themselves are not counted: measured GIPS are a slight
// lower bound of the issue rate. The theoretical warp GIPS (SMs x schedulers x clock) is the
// fitter's, from DeviceInfo; this probe adds no theoretical_gflops.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/cuda/issue/model.hpp"
#include "kernels/contract/probe.hpp"
#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/issue/kernel.cuh"
#include "kernels/cuda/backend/probe_decl.hpp"

namespace roofprobe::cuda {

RP_CUDA_CARVEOUT("issue", Carveout::MaxL1);  // no shared memory
namespace {

constexpr double kTargetLaunchSeconds = 4e-3;
// The chains' constants: x = fma(x, 1, 1) counts (exact); the IMAD ring multiplies by an odd
// constant so its period is long and a missed or extra step changes the result.
constexpr float kFpA = 1.0f, kFpB = 1.0f;
constexpr std::uint32_t kIntA = 0x2545F491u;

using IssueKernel = void (*)(const std::uint32_t*, std::uint32_t*, int, int, int, int, int, float, float,
                             std::uint32_t);

template <IssueStream S>
IssueKernel kernel_for_stream(int loads_per_group) {
  switch (loads_per_group) {
    case 0:
      return &issue_kernel<S, 0>;
    case 1:
      return &issue_kernel<S, 1>;
    case 2:
      return &issue_kernel<S, 2>;
    case 4:
      return &issue_kernel<S, 4>;
    case 8:
      return &issue_kernel<S, 8>;
    case 16:
      return &issue_kernel<S, 16>;
    case 32:
      return &issue_kernel<S, 32>;
    default:
      break;
  }
  throw std::logic_error("issue: no kernel for " + std::to_string(loads_per_group) + " loads per group");
}

IssueKernel kernel_for(IssueStream s, int loads_per_group) {
  switch (s) {
    case IssueStream::Fp32:
      return kernel_for_stream<IssueStream::Fp32>(loads_per_group);
    case IssueStream::Int32:
      return kernel_for_stream<IssueStream::Int32>(loads_per_group);
    case IssueStream::Mixed:
      return kernel_for_stream<IssueStream::Mixed>(loads_per_group);
  }
  throw std::logic_error("issue: unknown stream");
}

IssueStream parse_stream(const std::string& text) {
  if (text == "fp32") return IssueStream::Fp32;
  if (text == "int32") return IssueStream::Int32;
  if (text == "mixed") return IssueStream::Mixed;
  throw std::invalid_argument("issue: stream '" + text + "' is not fp32, int32 or mixed");
}

std::string intensity_problem(std::int64_t n) {
  if (issue_intensity_valid(n)) return {};
  return "issue: instructions_per_transaction=" + std::to_string(n) +
         " is not 0 (register only), 1, 2, 4, 8, 16, 32 or a multiple of 32 (the payload comes "
         "in groups of " +
         std::to_string(kIssueGroupInstructions) + " instructions per thread)";
}

std::string lanes_problem(std::int64_t lanes) {
  if (lanes >= 1 && lanes <= 32) return {};
  return "issue: active_lanes=" + std::to_string(lanes) + " is not in 1..32";
}

__global__ void issue_fill_kernel(std::uint32_t* data, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < n; e += stride)
    data[e] = issue_data_word(e);
}

class IssuePoint final : public PreparedPoint {
 public:
  IssuePoint(IssueStream stream, std::int64_t n, int active_lanes, const DeviceInfo& dev)
      : stream_(stream), n_(n), active_lanes_(active_lanes), kernel_(kernel_for(stream, issue_loads_per_group(n))) {
    use_selected_device();
    blocks_ = resident_blocks(kernel_, kIssueBlock, carveout_of("issue"));
    warps_ = static_cast<std::int64_t>(blocks_) * (kIssueBlock / 32);
    loads_per_warp_ = n > 0 ? issue_loads_per_warp(warps_, issue_stream_bytes(cache_bytes(dev, "L2"))) : 0;
    groups_per_pass_ = issue_groups_per_pass(n, loads_per_warp_);
    out_ = DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(warps_) * 32);
    if (n > 0) {
      const std::size_t words =
          static_cast<std::size_t>(warps_) * static_cast<std::size_t>(loads_per_warp_) * kIssueWordsPerLoad;
      data_ = DeviceBuffer<std::uint32_t>(words);
      fill_data();
    }
    set_repetitions(reps_for(seconds_per_pass(dev), kTargetLaunchSeconds));
  }

  Work work() const override {
    const IssueWork iw = issue_work(stream_, n_, warps_, loads_per_warp_, reps_);
    Work w;
    w.warp_instructions = iw.warp_instructions;
    w.bytes_read = iw.load_sectors * kIssueSectorBytes;
    w.bytes_written = static_cast<double>(warps_) * 32 * sizeof(std::uint32_t);
    // Load sectors plus the epilogue's one coalesced checksum store per warp: intensity is
    // n x (1 - a fraction of a percent) for n > 0.
    w.transactions = iw.load_sectors + iw.store_sectors;
    w.working_set_bytes = n_ > 0 ? iw.buffer_bytes : w.bytes_written;
    return w;
  }

  void launch() override {
    kernel_<<<blocks_, kIssueBlock>>>(data_.get(), out_.get(), reps_, static_cast<int>(groups_per_pass_),
                                      static_cast<int>(loads_per_warp_), issue_groups_per_load(n_), active_lanes_, kFpA,
                                      kFpB, kIntA);
    RP_CUDA_CHECK(cudaGetLastError());
    last_launch_reps_ = reps_;
  }

  // The FP32 chains count exactly only up to 2^24 (kIssueMaxFpSteps steps per launch), which
  // caps a launch at about a second on any GPU: far beyond the engine's launch target.
  void set_repetitions(std::int64_t reps) override {
    const std::int64_t steps_per_pass = groups_per_pass_ * kIssueStepsPerGroup;
    const std::int64_t cap = std::max<std::int64_t>(1, kIssueMaxFpSteps / steps_per_pass);
    reps_ = clamp_reps(std::min(reps, cap));
  }
  std::int64_t repetitions() const override { return reps_; }

  // Every thread's checksum of the last launch against the host's prediction: the chains'
  // values (closed forms: FP32 start + steps; the INT32 ring's matrix power) plus the words it
  // loaded (closed form of the address pattern), mod 2^32.
  Check verify() override {
    RP_CUDA_CHECK(cudaDeviceSynchronize());
    if (last_launch_reps_ == 0) return {};
    std::vector<std::uint32_t> got(out_.size());
    RP_CUDA_CHECK(cudaMemcpy(got.data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost));
    const std::int64_t steps = static_cast<std::int64_t>(last_launch_reps_) * groups_per_pass_ * kIssueStepsPerGroup;
    const int ints = issue_int_chains(stream_);
    const IssueRing advanced = issue_ring_power(ints, kIntA, steps);
    const IssueRing idle = issue_ring_power(ints, kIntA, 0);
    for (std::int64_t t = 0; t < static_cast<std::int64_t>(got.size()); ++t) {
      const int lane = static_cast<int>(t % 32);
      const bool active = lane < active_lanes_;
      const std::uint32_t loads = n_ > 0 ? static_cast<std::uint32_t>(last_launch_reps_) *
                                               issue_thread_load_sum(t / 32, lane, warps_, loads_per_warp_)
                                         : 0u;
      const std::uint32_t want =
          issue_expected_checksum(stream_, t, active ? steps : 0, active ? advanced : idle, loads);
      if (got[static_cast<std::size_t>(t)] != want) {
        char text[256];
        std::snprintf(text, sizeof text,
                      "thread %lld (lane %d, %s) after %d passes of %lld groups, n=%lld: "
                      "expected checksum %u, got %u",
                      static_cast<long long>(t), lane, active ? "active" : "masked", last_launch_reps_,
                      static_cast<long long>(groups_per_pass_), static_cast<long long>(n_), want,
                      got[static_cast<std::size_t>(t)]);
        return Check{false, text};
      }
    }
    return {};
  }

 private:
  void fill_data() {
    const std::size_t n = data_.size();
    issue_fill_kernel<<<1024, 256>>>(data_.get(), n);
    RP_CUDA_CHECK(cudaGetLastError());
    RP_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // Estimated seconds per pass: payload at the issue peak (IMAD at half of it), or the loads'
  // bytes at DRAM bandwidth, whichever is slower. Only steers the launch length.
  double seconds_per_pass(const DeviceInfo& dev) const {
    const double mhz = dev.clock_measured_mhz > 0 ? dev.clock_measured_mhz : 1500.0;
    const double sms = dev.compute_units > 0 ? dev.compute_units : 80;
    const double schedulers = extra_number(dev, "schedulers_per_sm", 4.0);
    const double gips = sms * schedulers * mhz * 1e-3 * (stream_ == IssueStream::Int32 ? 0.5 : 1.0);
    const IssueWork pass = issue_work(stream_, n_, warps_, loads_per_warp_, 1);
    const double gbs = extra_number(dev, kExtraMemoryPeakGbs, 500.0);
    return std::max(pass.warp_instructions / (gips * 1e9), pass.load_sectors * kIssueSectorBytes / (gbs * 1e9));
  }

  IssueStream stream_;
  std::int64_t n_;
  int active_lanes_;
  IssueKernel kernel_;
  int blocks_ = 0;
  std::int64_t warps_ = 0;
  std::int64_t loads_per_warp_ = 0;
  std::int64_t groups_per_pass_ = 0;
  int reps_ = 1;
  int last_launch_reps_ = 0;
  DeviceBuffer<std::uint32_t> data_, out_;
};

class CudaIssueProbe final : public Probe {
 public:
  CudaIssueProbe() {
    info_.name = "issue";
    info_.backend = "cuda";
    info_.description =
        "Warp-instruction issue rate: 8 independent FFMA/IMAD chains per thread in registers, "
        "predicated to active_lanes, optionally streaming DRAM with n payload warp instructions "
        "per 32-byte sector (instruction intensity)";
    info_.axes = {
        choice_axis("stream",
                    "fp32: FFMA chains; int32: IMAD chains (half rate on Volta..Hopper); mixed: "
                    "FFMA and IMAD interleaved (two pipes)",
                    {"fp32", "int32", "mixed"}),
        choice_axis("active_lanes", "lanes (id < active_lanes) that run the payload; the rest are predicated off",
                    {"32", "16", "8", "1"}),
        // 0: the issue peak; 1: far below every GPU's DRAM ridge (~10-20 instructions per
        // sector); 16: around it. 3 x 4 x 3 = 36 points by default.
        numeric_axis("instructions_per_transaction", AxisType::Integer,
                     "payload warp instructions per 32-byte sector loaded from DRAM; 0: registers "
                     "only. 1, 2, 4, 8, 16, 32 or a multiple of 32, at most 4096",
                     // 4096: one pass stays far below the 2^24 steps the FP32 chains count
                     // exactly (a V100 reaches that near 8e4), so every launch verifies.
                     0, 4096, {"0", "1", "16"}),
    };
    FeedSpec peak;
    peak.kind = FeedKind::WarpGips;
    peak.metric = "gips";
    peak.x_axis = "";
    FeedSpec predication;
    predication.kind = FeedKind::Predication;
    predication.metric = "gips";
    predication.x_axis = "active_lanes";
    info_.feeds = {peak, predication};
  }

  const ProbeInfo& info() const override { return info_; }

  std::string unsupported_reason(const Params& p, const DeviceInfo&) const override {
    std::string why = intensity_problem(param_int(p, "instructions_per_transaction"));
    if (why.empty()) why = lanes_problem(param_int(p, "active_lanes"));
    return why;
  }

  std::uint64_t footprint_bytes(const Params& p) const override {
    // The buffer (rounded to whole load rounds: at most one quantum more) and one checksum per
    // resident thread (a few MiB at most). The device is not known here: the buffer of the largest
    // L2 the tables name, an upper bound of what prepare() allocates.
    const bool loads = param_int(p, "instructions_per_transaction") > 0;
    const std::uint64_t buffer = issue_stream_bytes(kIssueUnknownL2Bytes);
    return (loads ? buffer + buffer / 8 : 0) + (std::uint64_t{8} << 20);
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& dev) const override {
    const std::int64_t n = param_int(p, "instructions_per_transaction");
    const std::int64_t lanes = param_int(p, "active_lanes");
    std::string why = intensity_problem(n);
    if (why.empty()) why = lanes_problem(lanes);
    if (!why.empty()) throw std::invalid_argument(why);
    return std::make_unique<IssuePoint>(parse_stream(param_text(p, "stream")), n, static_cast<int>(lanes), dev);
  }

 private:
  ProbeInfo info_;
};

}  // namespace

RP_REGISTER_PROBE(CudaIssueProbe);

}  // namespace roofprobe::cuda
