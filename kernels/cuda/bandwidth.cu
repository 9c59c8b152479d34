// Probe "bandwidth" on the CUDA backend: streams a working set with 16-byte accesses in the
// grid-stride pattern of kernels/common/stream_pattern.hpp, `reps` passes per launch, in three
// modes (read, rmw, copy). Swept over the working set, its GB/s curve shows one plateau per
// memory level (L1, L2, HBM/DRAM), which the fitter turns into the hierarchy's ceilings.
//
// The grid is one full wave of resident blocks (occupancy API), so every SM streams; each thread
// keeps its elements across passes, so a working set that fits the SMs' L1s is served from L1.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/probe.hpp"
#include "kernels/common/stream_pattern.hpp"
#include "kernels/cuda/bandwidth_kernel.cuh"
#include "kernels/cuda/cuda_support.hpp"
#include "kernels/cuda/probe_decl.hpp"

namespace roofprobe::cuda {
namespace {

constexpr std::size_t kElementBytes = sizeof(uint4);  // 16
constexpr double kTargetLaunchSeconds = 2e-3;
// Elements verify() copies back at a time (16 MiB).
constexpr std::size_t kVerifyChunk = std::size_t{1} << 20;

__global__ void stream_init_kernel(uint4* data, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < n;
       e += stride) {
    data[e] = make_uint4(stream_initial_word(e, 0), stream_initial_word(e, 1),
                         stream_initial_word(e, 2), stream_initial_word(e, 3));
  }
}

using StreamKernel = void (*)(uint4*, uint4*, std::size_t, int, std::uint32_t*);

StreamKernel stream_kernel_for(StreamMode mode) {
  switch (mode) {
    case StreamMode::Read: return &stream_kernel<StreamMode::Read>;
    case StreamMode::Rmw: return &stream_kernel<StreamMode::Rmw>;
    case StreamMode::Copy: return &stream_kernel<StreamMode::Copy>;
  }
  throw std::logic_error("bandwidth: unknown mode");
}

StreamMode parse_mode(const std::string& text) {
  if (text == "read") return StreamMode::Read;
  if (text == "rmw") return StreamMode::Rmw;
  if (text == "copy") return StreamMode::Copy;
  throw std::invalid_argument("bandwidth: mode '" + text + "' is not read, rmw or copy");
}

// A rough rate for the level the working set lands in, only to size `reps`: L1 at 128 B/clk/SM
// while the set fits half the SMs' L1s, then 4x DRAM while it fits L2, then DRAM.
double estimated_gbs(const DeviceInfo& dev, std::uint64_t working_set) {
  const double dram = extra_number(dev, kExtraMemoryPeakGbs, 500.0);
  const double mhz = dev.clock_measured_mhz > 0 ? dev.clock_measured_mhz : 1500.0;
  double l1_total = 0, l2 = 0;
  for (const CacheInfo& c : dev.caches) {
    if (c.name == "L1") l1_total = static_cast<double>(c.bytes) * c.instances;
    if (c.name == "L2") l2 = static_cast<double>(c.bytes);
  }
  const double ws = static_cast<double>(working_set);
  if (ws <= l1_total / 2) return std::max(dram, dev.compute_units * 128.0 * mhz * 1e-3);
  if (ws <= l2) return 4 * dram;
  return dram;
}

class StreamPoint final : public PreparedPoint {
 public:
  StreamPoint(StreamMode mode, std::uint64_t working_set, const DeviceInfo& dev)
      : mode_(mode),
        kernel_(stream_kernel_for(mode)),
        n_(stream_elements(mode, working_set, kElementBytes)) {
    if (n_ == 0)
      throw std::invalid_argument("bandwidth: working set smaller than one element per array");
    use_selected_device();
    blocks_ = resident_blocks(kernel_, kStreamBlock);
    const StreamBytes pass = stream_bytes_per_launch(mode, n_, kElementBytes, 1);
    set_repetitions(reps_for((pass.read + pass.written) / (estimated_gbs(dev, working_set) * 1e9),
                             kTargetLaunchSeconds));
    allocate_and_fill();
  }

  Work work() const override {
    const StreamBytes bytes = stream_bytes_per_launch(mode_, n_, kElementBytes, reps_);
    Work w;
    w.bytes_read = bytes.read;
    w.bytes_written = bytes.written;
    // Coalesced 16-byte accesses: a warp request covers 16 whole sectors (stream_pattern.hpp).
    w.transactions = w.bytes() / kSectorBytes;
    w.working_set_bytes =
        static_cast<double>(n_ * kElementBytes) * (mode_ == StreamMode::Copy ? 2 : 1);
    return w;
  }

  void launch() override {
    kernel_<<<blocks_, kStreamBlock>>>(a_.get(), b_.get(), n_, reps_, sums_.get());
    RP_CUDA_CHECK(cudaGetLastError());
    last_launch_reps_ = reps_;
    passes_done_ += reps_;
  }

  // Copy keeps an even count, so every launch starts with a -> b and ends with the data in a.
  void set_repetitions(std::int64_t reps) override {
    reps_ = clamp_reps(reps);
    if (mode_ == StreamMode::Copy) reps_ += reps_ % 2;
  }
  std::int64_t repetitions() const override { return reps_; }

  Check verify() override {
    RP_CUDA_CHECK(cudaDeviceSynchronize());
    if (passes_done_ == 0) return {};
    const long long passes = passes_done_;
    switch (mode_) {
      case StreamMode::Read: return verify_read();
      case StreamMode::Rmw: return verify_array(a_, "a", passes);
      case StreamMode::Copy: {
        Check c = verify_array(a_, "a", passes);
        return c.ok ? verify_array(b_, "b", passes - 1) : c;
      }
    }
    return {};
  }

 private:
  void allocate_and_fill() {
    a_ = DeviceBuffer<uint4>(n_);
    if (mode_ == StreamMode::Copy) {
      b_ = DeviceBuffer<uint4>(n_);
      RP_CUDA_CHECK(cudaMemset(b_.get(), 0, b_.bytes()));
    }
    sums_ = DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(blocks_));
    RP_CUDA_CHECK(cudaMemset(sums_.get(), 0, sums_.bytes()));
    stream_init_kernel<<<1024, 256>>>(a_.get(), n_);
    RP_CUDA_CHECK(cudaGetLastError());
    RP_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // The block sums of the last launch add up to its reps x (sum of all words), modulo 2^32.
  Check verify_read() const {
    std::vector<std::uint32_t> sums(sums_.size());
    RP_CUDA_CHECK(cudaMemcpy(sums.data(), sums_.get(), sums_.bytes(), cudaMemcpyDeviceToHost));
    std::uint32_t total = 0;
    for (std::uint32_t s : sums) total += s;
    const std::uint32_t want =
        static_cast<std::uint32_t>(last_launch_reps_) * stream_initial_sum(n_);
    if (total == want) return {};
    return Check{false, "read checksum of the last launch: expected " + std::to_string(want) +
                            ", got " + std::to_string(total) + " (" +
                            std::to_string(last_launch_reps_) + " passes over " +
                            std::to_string(n_) + " elements)"};
  }

  // Every word of `array` must be its initial value + `passes` (each pass adds 1), mod 2^32.
  // Checks the whole array, chunk by chunk, so a missed or doubled element anywhere shows.
  Check verify_array(const DeviceBuffer<uint4>& array, const char* name, long long passes) const {
    const auto delta = static_cast<std::uint32_t>(passes);
    std::vector<uint4> host(std::min(kVerifyChunk, n_));
    for (std::size_t first = 0; first < n_; first += host.size()) {
      const std::size_t count = std::min(host.size(), n_ - first);
      RP_CUDA_CHECK(cudaMemcpy(host.data(), array.get() + first, count * kElementBytes,
                               cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < count; ++i) {
        const std::uint32_t got[4] = {host[i].x, host[i].y, host[i].z, host[i].w};
        for (int w = 0; w < 4; ++w) {
          const std::uint32_t want = stream_initial_word(first + i, w) + delta;
          if (got[w] != want) return word_mismatch(name, first + i, w, want, got[w], passes);
        }
      }
    }
    return {};
  }

  static Check word_mismatch(const char* name, std::size_t e, int w, std::uint32_t want,
                             std::uint32_t got, long long passes) {
    char text[200];
    std::snprintf(text, sizeof text, "%s[%zu].word%d after %lld passes: expected %u, got %u", name,
                  e, w, passes, want, got);
    return Check{false, text};
  }

  StreamMode mode_;
  StreamKernel kernel_;
  std::size_t n_;  // elements per array
  int blocks_ = 0;
  int reps_ = 1;
  int last_launch_reps_ = 0;
  long long passes_done_ = 0;  // over all launches so far, what verify() predicts
  DeviceBuffer<uint4> a_, b_;
  DeviceBuffer<std::uint32_t> sums_;
};

class CudaBandwidthProbe final : public Probe {
 public:
  CudaBandwidthProbe() {
    info_.name = "bandwidth";
    info_.backend = "cuda";
    info_.description =
        "16-byte grid-stride streams over a working set: read (sum), rmw (+1 in place), copy "
        "(a -> b -> a); all SMs busy, every element touched once per pass";
    info_.axes = {
        choice_axis("mode",
                    "read: loads only; rmw: load and store in place; copy: load one "
                    "array, store the other (working set = both arrays)",
                    {"read", "rmw", "copy"}),
        // 16 KiB .. 1 GiB, two points per octave: from well inside one SM's L1 to 4x the
        // largest L2 of the reference GPUs (72 MB), where DRAM bandwidth has converged.
        numeric_axis("working_set_bytes", AxisType::Bytes, "bytes the stream touches per pass",
                     1024, 1e12, geometric_bytes(16 * 1024, std::uint64_t{1} << 30, 2, 1024)),
    };
    FeedSpec feed;
    feed.kind = FeedKind::MemoryLevels;
    feed.metric = "gbs";
    feed.x_axis = "working_set_bytes";
    feed.series_axes = {"mode"};
    feed.primary_series = "mode=read";
    info_.feeds = {feed};
  }

  const ProbeInfo& info() const override { return info_; }

  std::uint64_t footprint_bytes(const Params& p) const override {
    // The arrays (never more than the working set) plus one partial sum per block (small).
    return static_cast<std::uint64_t>(param_int(p, "working_set_bytes")) + (1u << 20);
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& dev) const override {
    return std::make_unique<StreamPoint>(
        parse_mode(param_text(p, "mode")),
        static_cast<std::uint64_t>(param_int(p, "working_set_bytes")), dev);
  }

 private:
  ProbeInfo info_;
};

}  // namespace

RP_REGISTER_PROBE(CudaBandwidthProbe);

}  // namespace roofprobe::cuda
