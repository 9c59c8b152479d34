// Probe "scaling" on the CUDA backend: how two ceilings grow with the number of SMs doing the
// work (roofline scaling trajectories): the DRAM read bandwidth over an HBM-sized working set
// (memory_read) and the FP64 FMA rate (fp64_fma), with the work restricted to k SMs.
//
// Restriction without affinity APIs (CUDA has none for SMs): one full wave of resident blocks is
// launched, blocks on SMs outside the k chosen return at once, and the others share the work
// through a global item counter (kernels/cuda/scaling/kernel.cuh, kernels/cuda/scaling/model.hpp). The k SMs are the k
// smallest SM ids a census kernel (sm_ids_in_use) finds at prepare time (%smid values need not be contiguous).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"
#include "kernels/cuda/scaling/model.hpp"
#include "kernels/cuda/backend/stream_pattern.hpp"
#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/backend/green_context.hpp"
#include "kernels/cuda/backend/probe_decl.hpp"
#include "kernels/cuda/backend/repeated_point.hpp"
#include "kernels/cuda/scaling/kernel.cuh"

namespace roofprobe::cuda {

RP_CUDA_CARVEOUT("scaling", Carveout::MaxL1);  // its bandwidth part streams through L1
namespace {

constexpr double kTargetLaunchSeconds = 4e-3;

__global__ void scaling_fill_kernel(uint4* data, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < n; e += stride) {
    data[e] = make_uint4(stream_initial_word(e, 0), stream_initial_word(e, 1), stream_initial_word(e, 2),
                         stream_initial_word(e, 3));
  }
}

using ScalingKernelFn = void (*)(const uint4*, unsigned long long, std::uint32_t, std::uint32_t, double,
                                 unsigned long long*, std::uint32_t*, std::uint32_t*, unsigned long long*);

const char* kernel_name(ScalingKernel k) { return k == ScalingKernel::MemoryRead ? "memory_read" : "fp64_fma"; }

class ScalingPoint final : public RepeatedPoint {
 public:
  ScalingPoint(ScalingKernel kind, int sm_count, const DeviceInfo& dev)
      : kind_(kind),
        kernel_(kind == ScalingKernel::MemoryRead ? &scaling_kernel<ScalingKernel::MemoryRead>
                                                  : &scaling_kernel<ScalingKernel::Fp64Fma>),
        sm_count_(sm_count) {
    use_selected_device();
    blocks_ = resident_blocks(kernel_, kScalingBlock, carveout_of("scaling"));
    if (kind == ScalingKernel::MemoryRead) {
      n_ = scaling_elements(scaling_working_set_bytes(cache_bytes(dev, "L2"), dev.memory_bytes));
      if (n_ == 0) throw std::invalid_argument("scaling: device memory too small for one item");
      data_ = DeviceBuffer<uint4>(n_);
      scaling_fill_kernel<<<1024, 256>>>(data_.get(), n_);
      RP_CUDA_CHECK(cudaGetLastError());
    }
    items_per_pass_ = scaling_items_per_pass(kind, n_);
    next_item_ = DeviceBuffer<unsigned long long>(1);
    item_done_ = DeviceBuffer<std::uint32_t>(items_per_pass_);
    sm_worked_ = DeviceBuffer<std::uint32_t>(kScalingMaxSmIds);
    sums_ = DeviceBuffer<unsigned long long>(static_cast<std::size_t>(blocks_));
    RP_CUDA_CHECK(cudaMemset(item_done_.get(), 0, item_done_.bytes()));
    RP_CUDA_CHECK(cudaMemset(sm_worked_.get(), 0, sm_worked_.bytes()));
    RP_CUDA_CHECK(cudaMemset(sums_.get(), 0, sums_.bytes()));
    choose_sms(dev.compute_units);
    set_repetitions(reps_for(seconds_per_pass(dev), kTargetLaunchSeconds));
  }

  Work work() const override {
    const ScalingWork s = scaling_work_per_launch(kind_, n_, reps_);
    Work w;
    w.bytes_read = s.bytes_read;
    w.flops = s.flops;
    w.transactions = s.transactions;
    w.working_set_bytes = static_cast<double>(n_ * kScalingElementBytes);
    return w;
  }

  void launch() override {
    // The counter restarts at item 0 on the same stream, ahead of the kernel (a few us against
    // milliseconds of work).
    RP_CUDA_CHECK(cudaMemsetAsync(next_item_.get(), 0, next_item_.bytes(), 0));
    const unsigned long long items = static_cast<unsigned long long>(reps_) * items_per_pass_;
    kernel_<<<blocks_, kScalingBlock>>>(data_.get(), items, items_per_pass_, smid_limit_, 1.0, next_item_.get(),
                                        item_done_.get(), sm_worked_.get(), sums_.get());
    RP_CUDA_CHECK(cudaGetLastError());
    count_launch();
  }

  Check verify_launches() override {
    const std::string point =
        std::string("scaling ") + kernel_name(kind_) + " sm_count=" + std::to_string(sm_count_) + ": ";
    // 1. The last launch's checksum: what its items compute, whichever blocks ran them.
    std::vector<unsigned long long> sums(sums_.size());
    RP_CUDA_CHECK(cudaMemcpy(sums.data(), sums_.get(), sums_.bytes(), cudaMemcpyDeviceToHost));
    unsigned long long total = 0;
    for (unsigned long long s : sums) total += s;
    if (kind_ == ScalingKernel::MemoryRead) {
      const std::uint32_t want = scaling_read_checksum(n_, last_launch_reps_);
      if (static_cast<std::uint32_t>(total) != want)
        return Check{false, point + "read checksum of the last launch " +
                                std::to_string(static_cast<std::uint32_t>(total)) + ", expected " +
                                std::to_string(want)};
    } else {
      const std::uint64_t want = scaling_fma_checksum(static_cast<std::uint64_t>(last_launch_reps_) * items_per_pass_);
      if (total != want)
        return Check{false, point + "FMA chain checksum of the last launch " + std::to_string(total) + ", expected " +
                                std::to_string(want)};
    }
    // 2. Every item of every pass of every launch done exactly once.
    std::vector<std::uint32_t> done(item_done_.size());
    RP_CUDA_CHECK(cudaMemcpy(done.data(), item_done_.get(), item_done_.bytes(), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < done.size(); ++i) {
      if (done[i] != static_cast<std::uint32_t>(passes_done_))
        return Check{false, point + "item " + std::to_string(i) + " done " + std::to_string(done[i]) + " times in " +
                                std::to_string(passes_done_) + " passes"};
    }
    // 3. The work ran on exactly the SMs chosen.
    std::vector<std::uint32_t> worked(sm_worked_.size());
    RP_CUDA_CHECK(cudaMemcpy(worked.data(), sm_worked_.get(), sm_worked_.bytes(), cudaMemcpyDeviceToHost));
    int sms = 0;
    for (std::size_t id = 0; id < worked.size(); ++id) {
      if (worked[id] == 0) continue;
      ++sms;
      if (id >= smid_limit_)
        return Check{false, point + "SM " + std::to_string(id) + " worked, limit " + std::to_string(smid_limit_)};
    }
    if (sms != active_sms_)
      return Check{false, point + std::to_string(sms) + " SMs ran blocks, expected " + std::to_string(active_sms_) +
                              " (the wave did not spread over the SMs chosen)"};
    return {};
  }

 private:
  // The SM census: which %smid values the device has, hence the limit that keeps k of them.
  // A full wave of the census kernel itself: while its blocks wait for each other, every SM
  // holds as many as fit, so every SM id shows up.
  void choose_sms(int device_sms) {
    const std::vector<std::uint32_t> ids = sm_ids_in_use();
    if (static_cast<int>(ids.size()) < device_sms)
      throw std::runtime_error("scaling: the SM census saw " + std::to_string(ids.size()) + " of the device's " +
                               std::to_string(device_sms) + " SMs (is the GPU shared with other processes?)");
    smid_limit_ = scaling_smid_limit(ids, sm_count_);
    active_sms_ = scaling_active_sms(sm_count_, static_cast<int>(ids.size()));
  }

  // Estimated seconds per pass, only to size the first launches: memory_read at the DRAM's
  // theoretical rate scaled by the share of SMs (one SM streams several times its 1/SMs share
  // of the DRAM rate, hence the factor 4); fp64_fma at the FP64 FMA peak of the SMs used.
  double seconds_per_pass(const DeviceInfo& dev) const {
    const int sms = std::max(1, dev.compute_units);
    const double share = static_cast<double>(active_sms_) / sms;
    if (kind_ == ScalingKernel::MemoryRead) {
      const double gbs = extra_number(dev, kExtraMemoryPeakGbs, 500.0) * std::min(1.0, 4 * share);
      return static_cast<double>(n_ * kScalingElementBytes) / (gbs * 1e9);
    }
    auto it = dev.theoretical_gflops.find("FP64.FMA");
    const double peak = it != dev.theoretical_gflops.end() && it->second > 0 ? it->second : 1000.0;
    return scaling_work_per_launch(kind_, n_, 1).flops / (peak * share * 1e9);
  }

  ScalingKernel kind_;
  ScalingKernelFn kernel_;
  int sm_count_;
  int blocks_ = 0;
  std::size_t n_ = 0;  // memory_read: 16-byte elements of the working set
  std::uint32_t items_per_pass_ = 0;
  std::uint32_t smid_limit_ = 0xFFFFFFFFu;
  int active_sms_ = 0;
  DeviceBuffer<uint4> data_;
  DeviceBuffer<unsigned long long> next_item_;
  DeviceBuffer<std::uint32_t> item_done_, sm_worked_;
  DeviceBuffer<unsigned long long> sums_;
};

class CudaScalingProbe final : public Probe {
 public:
  CudaScalingProbe() {
    info_.name = "scaling";
    info_.backend = "cuda";
    info_.description =
        "ceilings vs concurrency: DRAM read bandwidth (HBM-sized working set) and FP64 FMA rate "
        "with the work restricted to sm_count SMs (blocks elsewhere exit; a global item counter "
        "shares the work)";
    info_.axes = {
        choice_axis("kernel",
                    "memory_read: 128-bit loads over max(1 GiB, 4x L2); fp64_fma: independent "
                    "DFMA chains",
                    {"memory_read", "fp64_fma"}),
        numeric_axis("sm_count", AxisType::Integer, "SMs doing the work; 0: all of them", 0, 100000,
                     {"0", "1", "2", "4", "8", "16", "32", "64", "128"}),
    };
    FeedSpec feed;
    feed.kind = FeedKind::Scaling;
    feed.metric = "";  // gflops where the samples carry FLOPs (fp64_fma), else gbs
    feed.x_axis = "sm_count";
    feed.series_axes = {"kernel"};
    feed.name_pattern = "{kernel}";
    info_.feeds = {feed};
  }

  const ProbeInfo& info() const override { return info_; }

  std::string unsupported_reason(const Params& p, const DeviceInfo& dev) const override {
    const std::int64_t k = param_int(p, "sm_count");
    if (k > dev.compute_units) return "device has " + std::to_string(dev.compute_units) + " SMs";
    return {};
  }

  std::uint64_t footprint_bytes(const Params& p) const override {
    // The working set adapts to the device in prepare() (1 GiB or 4x L2, at most half of device
    // memory: kernels/cuda/scaling/model.hpp), so it always passes the plan's 80% check; this counts only the
    // fixed part. A device too small for even that shows as DeviceOutOfMemory at prepare().
    (void)p;
    return 1u << 20;
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& dev) const override {
    const std::int64_t k = param_int(p, "sm_count");
    if (k < 0 || k > dev.compute_units)
      throw std::invalid_argument("scaling: sm_count=" + std::to_string(k) + " but the device has " +
                                  std::to_string(dev.compute_units) + " SMs");
    return std::make_unique<ScalingPoint>(parse_scaling_kernel(param_text(p, "kernel")), static_cast<int>(k), dev);
  }

 private:
  ProbeInfo info_;
};

}  // namespace

RP_REGISTER_PROBE(CudaScalingProbe);

}  // namespace roofprobe::cuda
