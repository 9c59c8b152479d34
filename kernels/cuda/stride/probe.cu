// Probe "stride" on the CUDA backend: the global walls of the instruction roofline. Warps issue
// global loads (ld.global.cg, L1 bypassed) of 4- or 8-byte words with lane stride 0, 1, 2, ..., 32
// elements over an L2-resident working set, so each warp request moves a known number of 32-byte
// sectors (kernels/cuda/stride/model.hpp): stride 0 one sector, unit stride 4 (4-byte words)
// or 8 (8-byte words), stride 8 of 4-byte words 32. The best GTXN/s of each series is a wall at
// warp instructions per transaction = 1 / sectors per request.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"
#include "kernels/cuda/stride/model.hpp"
#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/backend/probe_decl.hpp"
#include "kernels/cuda/backend/repeated_point.hpp"
#include "kernels/cuda/stride/kernel.cuh"

namespace roofprobe::cuda {

RP_CUDA_CARVEOUT("stride", Carveout::MaxL1);  // its walls are global-memory (L1/L2) patterns
namespace {

constexpr double kTargetLaunchSeconds = 2e-3;
// Default working set: inside the L2 of every reference GPU (V100's 6 MB is the smallest), well
// beyond the SMs' L1s (not that it matters: .cg loads never hit L1).
constexpr std::uint64_t kDefaultWorkingSet = std::uint64_t{4} << 20;

template <int WordBytes>
__global__ void stride_init_kernel(typename StrideWordType<WordBytes>::type* data, std::uint32_t n) {
  for (std::uint32_t e = blockIdx.x * blockDim.x + threadIdx.x; e < n; e += gridDim.x * blockDim.x)
    data[e] = static_cast<typename StrideWordType<WordBytes>::type>(stride_word(e, WordBytes));
}

int parse_choice(const std::string& axis, const std::string& text, bool (*valid)(int)) {
  int v = -1;
  try {
    std::size_t used = 0;
    v = std::stoi(text, &used);
    if (used != text.size()) v = -1;
  } catch (const std::exception&) {
    v = -1;
  }
  if (!valid(v)) throw std::invalid_argument("stride: " + axis + " '" + text + "' is not allowed");
  return v;
}

// The type-erased pieces of one (stride, word bytes) instantiation.
struct StrideFns {
  const void* kernel = nullptr;
  void (*launch)(int blocks, const void* data, std::uint32_t mask, int groups, unsigned long long* out) = nullptr;
  void (*init)(void* data, std::uint32_t n) = nullptr;
};

template <int Stride, int WordBytes>
StrideFns stride_fns() {
  using Word = typename StrideWordType<WordBytes>::type;
  StrideFns f;
  f.kernel = reinterpret_cast<const void*>(&stride_kernel<Stride, WordBytes>);
  f.launch = [](int blocks, const void* data, std::uint32_t mask, int groups, unsigned long long* out) {
    stride_kernel<Stride, WordBytes><<<blocks, kStrideBlock>>>(static_cast<const Word*>(data), mask, groups, out);
  };
  f.init = [](void* data, std::uint32_t n) {
    stride_init_kernel<WordBytes><<<1024, 256>>>(static_cast<Word*>(data), n);
  };
  return f;
}

template <int WordBytes>
StrideFns stride_fns_for_word(int stride) {
  switch (stride) {
    case 0:
      return stride_fns<0, WordBytes>();
    case 1:
      return stride_fns<1, WordBytes>();
    case 2:
      return stride_fns<2, WordBytes>();
    case 4:
      return stride_fns<4, WordBytes>();
    case 8:
      return stride_fns<8, WordBytes>();
    case 16:
      return stride_fns<16, WordBytes>();
    case 32:
      return stride_fns<32, WordBytes>();
  }
  throw std::invalid_argument("stride: stride " + std::to_string(stride) + " has no kernel");
}

StrideFns stride_fns_for(int stride, int word_bytes) {
  return word_bytes == 4 ? stride_fns_for_word<4>(stride) : stride_fns_for_word<8>(stride);
}

int resident_blocks_of(const void* kernel) {
  set_carveout(kernel, carveout_of("stride"), kStrideBlock);
  int device = 0, sms = 0, per_sm = 0;
  RP_CUDA_CHECK(cudaGetDevice(&device));
  RP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kStrideBlock, 0));
  return std::max(per_sm, 1) * sms;
}

class StridePoint final : public RepeatedPoint {
 public:
  StridePoint(int stride, int word_bytes, std::uint64_t working_set, const DeviceInfo& dev)
      : stride_(stride),
        word_bytes_(word_bytes),
        fns_(stride_fns_for(stride, word_bytes)),
        n_(stride_elements(working_set, stride, word_bytes)) {
    if (n_ == 0)
      throw std::invalid_argument(
          "stride: working_set_bytes=" + std::to_string(working_set) + " holds less than one group of requests (" +
          std::to_string(stride_min_elements(stride, word_bytes)) + " words) at stride " + std::to_string(stride));
    use_selected_device();
    blocks_ = resident_blocks_of(fns_.kernel);
    warps_ = static_cast<std::size_t>(blocks_) * (kStrideBlock / kWarpLanes);
    set_repetitions(reps_for(seconds_per_group(dev, working_set), kTargetLaunchSeconds));
    data_ = DeviceBuffer<unsigned char>(static_cast<std::size_t>(n_) * word_bytes_);
    out_ = DeviceBuffer<unsigned long long>(warps_ * kWarpLanes);
    RP_CUDA_CHECK(cudaMemset(out_.get(), 0, out_.bytes()));
    fns_.init(data_.get(), n_);
    RP_CUDA_CHECK(cudaGetLastError());
    RP_CUDA_CHECK(cudaDeviceSynchronize());
  }

  Work work() const override {
    const StrideWork s = stride_work(static_cast<double>(warps_), reps_, stride_, word_bytes_);
    Work w;
    w.warp_instructions = s.requests;
    w.transactions = s.transactions;
    w.bytes_read = s.bytes;
    w.working_set_bytes = static_cast<double>(n_) * word_bytes_;
    return w;
  }

  void launch() override {
    fns_.launch(blocks_, data_.get(), n_ - 1, reps_, out_.get());
    RP_CUDA_CHECK(cudaGetLastError());
    count_launch();
  }

  // The threads' sums of the last launch add up to the sum of every word it read.
  Check verify_launches() override {
    std::vector<unsigned long long> sums(out_.size());
    RP_CUDA_CHECK(cudaMemcpy(sums.data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost));
    std::uint64_t total = 0;
    for (unsigned long long s : sums) total += s;
    if (word_bytes_ == 4) total &= 0xffffffffull;
    const std::uint64_t requests = static_cast<std::uint64_t>(warps_) * kStrideUnroll * last_launch_reps_;
    const std::uint64_t want = stride_expected_sum(requests, stride_, word_bytes_, n_ - 1);
    if (total == want) return {};
    return Check{false, "stride=" + std::to_string(stride_) + " word_bytes=" + std::to_string(word_bytes_) +
                            ": sum of the words loaded by " + std::to_string(requests) + " requests over " +
                            std::to_string(n_) + " words: expected " + std::to_string(want) + ", got " +
                            std::to_string(total)};
  }

 private:
  // Estimated seconds per group of requests, only to size launches: the sectors at a rough L2
  // (4 x DRAM while the set fits L2) or DRAM rate, or the requests at one per clock per SM,
  // whichever is slower.
  double seconds_per_group(const DeviceInfo& dev, std::uint64_t working_set) const {
    const StrideWork s = stride_work(static_cast<double>(warps_), 1, stride_, word_bytes_);
    const double dram = extra_number(dev, kExtraMemoryPeakGbs, 500.0);
    const auto l2 = static_cast<double>(cache_bytes(dev, "L2"));
    const double gbs = static_cast<double>(working_set) <= l2 ? 4 * dram : dram;
    const double mhz = dev.clock_measured_mhz > 0 ? dev.clock_measured_mhz : 1500.0;
    const double requests_per_s = std::max(dev.compute_units, 1) * mhz * 1e6;
    return std::max(s.bytes / (gbs * 1e9), s.requests / requests_per_s);
  }

  int stride_;
  int word_bytes_;
  StrideFns fns_;
  std::uint32_t n_;  // words in the array, a power of two
  int blocks_ = 0;
  std::size_t warps_ = 0;
  DeviceBuffer<unsigned char> data_;
  DeviceBuffer<unsigned long long> out_;
};

class CudaStrideProbe final : public Probe {
 public:
  CudaStrideProbe() {
    info_.name = "stride";
    info_.backend = "cuda";
    info_.description =
        "global walls: warp requests of ld.global.cg (L1 bypassed: walls measured at L2 with the "
        "default L2-resident working set, at DRAM beyond L2) of 4- or 8-byte words, lane stride "
        "0..32 elements; sectors per request counted from the 32 lane addresses, 8 requests in "
        "flight per warp";
    info_.axes = {
        choice_axis("stride", "elements between neighbouring lanes (0: all lanes one word)",
                    {"0", "1", "2", "4", "8", "16", "32"}),
        choice_axis("word_bytes", "bytes each lane loads", {"4", "8"}),
        // Rounded down to a power of two of words. 64 KiB is one group of requests at the
        // largest span (stride 32 of 8-byte words).
        numeric_axis("working_set_bytes", AxisType::Bytes,
                     "bytes the requests cycle through (rounded down to a power of two); the "
                     "default stays L2-resident on every reference GPU",
                     65536, 1e12, {std::to_string(kDefaultWorkingSet)}),
    };
    FeedSpec walls;
    walls.kind = FeedKind::Walls;
    walls.wall_set = "global";
    walls.metric = "gtxn_s";
    walls.series_axes = {"stride", "word_bytes"};
    walls.name_pattern = "stride-{stride}";
    info_.feeds = {walls};
  }

  const ProbeInfo& info() const override { return info_; }

  std::string unsupported_reason(const Params& p, const DeviceInfo&) const override {
    const int stride = parse_choice("stride", param_text(p, "stride"), &stride_valid);
    const int word_bytes = parse_choice("word_bytes", param_text(p, "word_bytes"), &stride_word_bytes_valid);
    const auto ws = static_cast<std::uint64_t>(param_int(p, "working_set_bytes"));
    if (stride_elements(ws, stride, word_bytes) == 0)
      return "stride: working_set_bytes=" + std::to_string(ws) + " is below one group of " +
             std::to_string(kStrideUnroll) + " requests at stride " + std::to_string(stride) + " (" +
             std::to_string(stride_min_elements(stride, word_bytes) * word_bytes) + " bytes)";
    return {};
  }

  std::uint64_t footprint_bytes(const Params& p) const override {
    // The array (at most the working set) plus one 8-byte sum per thread of a full wave.
    return static_cast<std::uint64_t>(param_int(p, "working_set_bytes")) + (std::uint64_t{8} << 20);
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& dev) const override {
    return std::make_unique<StridePoint>(
        parse_choice("stride", param_text(p, "stride"), &stride_valid),
        parse_choice("word_bytes", param_text(p, "word_bytes"), &stride_word_bytes_valid),
        static_cast<std::uint64_t>(param_int(p, "working_set_bytes")), dev);
  }

 private:
  ProbeInfo info_;
};

}  // namespace

RP_REGISTER_PROBE(CudaStrideProbe);

}  // namespace roofprobe::cuda
