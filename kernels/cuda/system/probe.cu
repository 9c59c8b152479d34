// Probe "system" on the CUDA backend: the host <-> device link (PCIe, or NVLink-C2C on Grace
// Hopper) as the last memory level. Four transfers over a pinned host buffer of `bytes`:
//   h2d / d2h                   cudaMemcpyAsync between the pinned buffer and a device buffer,
//                               `reps` copies per launch on the legacy default stream (the one
//                               the backend's timing events are recorded on);
//   mapped_read / mapped_write  a kernel streams the pinned buffer mapped into the device's
//                               address space (zero-copy), `reps` passes per launch.
// Work is counted on the host side (kernels/cuda/system/model.hpp): the bytes that cross the link.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"
#include "kernels/cuda/system/model.hpp"
#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/backend/probe_decl.hpp"
#include "kernels/cuda/backend/repeated_point.hpp"
#include "kernels/cuda/system/kernel.cuh"

namespace roofprobe::cuda {

RP_CUDA_CARVEOUT("system", Carveout::MaxL1);  // no shared memory
namespace {

constexpr double kTargetLaunchSeconds = 4e-3;
// A guess of the link's rate, only to size the first launches (PCIe 4.0 x16 moves ~25 GB/s);
// the engine measures and resizes.
constexpr double kGuessedLinkGbs = 25.0;
constexpr std::size_t kSamplesChecked = 4096;  // device elements the h2d check copies back

__global__ void system_fill_kernel(uint4* data, std::size_t n) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < n; e += stride) {
    data[e] = make_uint4(system_source_word(e, 0), system_source_word(e, 1), system_source_word(e, 2),
                         system_source_word(e, 3));
  }
}

const char* transfer_name(SystemTransfer t) {
  switch (t) {
    case SystemTransfer::H2D:
      return "h2d";
    case SystemTransfer::D2H:
      return "d2h";
    case SystemTransfer::MappedRead:
      return "mapped_read";
    case SystemTransfer::MappedWrite:
      return "mapped_write";
  }
  return "?";
}

// Pinned host memory, mapped into the device's address space when asked; freed on scope exit.
class PinnedBuffer {
 public:
  PinnedBuffer() = default;
  PinnedBuffer(std::size_t bytes, bool mapped, const char* what) : bytes_(bytes) {
    const cudaError_t err = cudaHostAlloc(&ptr_, bytes, mapped ? cudaHostAllocMapped : cudaHostAllocDefault);
    if (err != cudaSuccess && err != cudaErrorMemoryAllocation) {
      ptr_ = nullptr;
      RP_CUDA_CHECK(err);  // a sticky or other error is reported as such, not as memory
    }
    if (err != cudaSuccess) {
      cudaGetLastError();  // a failed allocation is not sticky: clear it for the next point
      ptr_ = nullptr;
      throw DeviceOutOfMemory(std::string("system: cannot pin ") + std::to_string(bytes) +
                              " bytes of host memory for " + what + " (cudaHostAlloc: " + cudaGetErrorString(err) +
                              "); lower the `bytes` axis or raise the locked-memory limit");
    }
  }
  ~PinnedBuffer() {
    if (ptr_ != nullptr) cudaFreeHost(ptr_);
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_ != nullptr) cudaFreeHost(ptr_);
      ptr_ = o.ptr_;
      bytes_ = o.bytes_;
      o.ptr_ = nullptr;
    }
    return *this;
  }
  uint4* host() const { return static_cast<uint4*>(ptr_); }
  // The same memory as the device addresses it (mapped buffers only).
  uint4* device() const {
    void* d = nullptr;
    RP_CUDA_CHECK(cudaHostGetDevicePointer(&d, ptr_, 0));
    return static_cast<uint4*>(d);
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class SystemPoint final : public RepeatedPoint {
 public:
  SystemPoint(SystemTransfer transfer, std::uint64_t bytes) : transfer_(transfer), n_(system_elements(bytes)) {
    if (n_ == 0)
      throw std::invalid_argument("system: bytes=" + std::to_string(bytes) + " is smaller than one 16-byte element");
    use_selected_device();
    const std::size_t buffer_bytes = n_ * kSystemElementBytes;
    host_ = PinnedBuffer(buffer_bytes, system_is_mapped(transfer), transfer_name(transfer));
    if (system_is_mapped(transfer)) {
      mapped_ = host_.device();
      kernel_ = transfer == SystemTransfer::MappedRead ? &system_mapped_kernel<SystemTransfer::MappedRead>
                                                       : &system_mapped_kernel<SystemTransfer::MappedWrite>;
      blocks_ = resident_blocks(kernel_, kSystemBlock, carveout_of("system"));
    } else {
      device_ = DeviceBuffer<uint4>(n_);
      blocks_ = resident_blocks(&system_mapped_kernel<SystemTransfer::MappedRead>, kSystemBlock, carveout_of("system"));
    }
    sums_ = DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(blocks_));
    fill();
    set_repetitions(reps_for(static_cast<double>(buffer_bytes) / (kGuessedLinkGbs * 1e9), kTargetLaunchSeconds));
  }

  Work work() const override {
    const SystemBytes b = system_bytes_per_launch(transfer_, n_, reps_);
    Work w;
    w.bytes_read = b.read;
    w.bytes_written = b.written;
    w.transactions = system_sectors_per_launch(n_, reps_);
    w.working_set_bytes = static_cast<double>(n_ * kSystemElementBytes);
    return w;
  }

  void launch() override {
    const std::size_t bytes = n_ * kSystemElementBytes;
    switch (transfer_) {
      case SystemTransfer::H2D:
        for (int r = 0; r < reps_; ++r)
          RP_CUDA_CHECK(cudaMemcpyAsync(device_.get(), host_.host(), bytes, cudaMemcpyHostToDevice, 0));
        break;
      case SystemTransfer::D2H:
        for (int r = 0; r < reps_; ++r)
          RP_CUDA_CHECK(cudaMemcpyAsync(host_.host(), device_.get(), bytes, cudaMemcpyDeviceToHost, 0));
        break;
      case SystemTransfer::MappedRead:
      case SystemTransfer::MappedWrite:
        kernel_<<<blocks_, kSystemBlock>>>(mapped_, n_, reps_, static_cast<std::uint32_t>(passes_done_), sums_.get());
        RP_CUDA_CHECK(cudaGetLastError());
        break;
    }
    count_launch();
  }

  Check verify_launches() override {
    switch (transfer_) {
      case SystemTransfer::H2D:
        return verify_device_copy();
      case SystemTransfer::D2H:
        return verify_host(0, "d2h copy");
      case SystemTransfer::MappedRead:
        return verify_read_sums(last_launch_reps_, "mapped_read");
      case SystemTransfer::MappedWrite:
        return verify_host(static_cast<std::uint64_t>(passes_done_ - 1), "mapped_write");
    }
    return {};
  }

 private:
  // Source data where the transfer reads it; the destination cleared, so a transfer that never
  // happened cannot pass the checks.
  void fill() {
    const std::size_t bytes = n_ * kSystemElementBytes;
    uint4* host = host_.host();
    switch (transfer_) {
      case SystemTransfer::H2D:
      case SystemTransfer::MappedRead:
        for (std::size_t e = 0; e < n_; ++e)
          host[e] = make_uint4(system_source_word(e, 0), system_source_word(e, 1), system_source_word(e, 2),
                               system_source_word(e, 3));
        if (transfer_ == SystemTransfer::H2D) RP_CUDA_CHECK(cudaMemset(device_.get(), 0, device_.bytes()));
        break;
      case SystemTransfer::D2H:
        std::memset(static_cast<void*>(host), 0, bytes);
        system_fill_kernel<<<1024, 256>>>(device_.get(), n_);
        RP_CUDA_CHECK(cudaGetLastError());
        break;
      case SystemTransfer::MappedWrite:
        std::memset(static_cast<void*>(host), 0, bytes);
        break;
    }
    RP_CUDA_CHECK(cudaMemset(sums_.get(), 0, sums_.bytes()));
    RP_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // The block sums of the last read pass(es) add up to passes x (sum of all words), mod 2^32.
  Check verify_read_sums(int passes, const char* what) const {
    std::vector<std::uint32_t> sums(sums_.size());
    RP_CUDA_CHECK(cudaMemcpy(sums.data(), sums_.get(), sums_.bytes(), cudaMemcpyDeviceToHost));
    std::uint32_t total = 0;
    for (std::uint32_t s : sums) total += s;
    const std::uint32_t want = static_cast<std::uint32_t>(passes) * system_source_sum(n_);
    if (total == want) return {};
    return Check{false, std::string(what) + " checksum over " + std::to_string(n_) + " elements x " +
                            std::to_string(passes) + " passes: expected " + std::to_string(want) + ", got " +
                            std::to_string(total)};
  }

  // h2d: the device buffer holds the host's words. Every word is summed on the device (one read
  // pass of the checksum kernel over device memory) and spread elements are compared exactly.
  Check verify_device_copy() {
    system_mapped_kernel<SystemTransfer::MappedRead><<<blocks_, kSystemBlock>>>(device_.get(), n_, 1, 0, sums_.get());
    RP_CUDA_CHECK(cudaGetLastError());
    RP_CUDA_CHECK(cudaDeviceSynchronize());
    const Check sums = verify_read_sums(1, "h2d copy (device-side");
    if (!sums.ok) return Check{false, sums.detail + ")"};
    const std::size_t step = std::max<std::size_t>(1, n_ / kSamplesChecked) | 1;
    std::vector<std::size_t> idx{0, n_ - 1};
    for (std::size_t e = step; e < n_ - 1; e += step) idx.push_back(e);
    for (std::size_t e : idx) {
      uint4 got{};
      RP_CUDA_CHECK(cudaMemcpy(&got, device_.get() + e, kSystemElementBytes, cudaMemcpyDeviceToHost));
      const std::uint32_t words[4] = {got.x, got.y, got.z, got.w};
      for (int w = 0; w < 4; ++w)
        if (words[w] != system_source_word(e, w))
          return word_mismatch("h2d copy: device", e, w, system_source_word(e, w), words[w]);
    }
    return {};
  }

  // d2h and mapped_write: every word of the pinned buffer is what the last pass wrote (d2h: the
  // source words, pass 0; mapped_write: the source words + the last pass's number).
  Check verify_host(std::uint64_t last_pass, const char* what) const {
    const uint4* host = host_.host();
    for (std::size_t e = 0; e < n_; ++e) {
      const std::uint32_t words[4] = {host[e].x, host[e].y, host[e].z, host[e].w};
      for (int w = 0; w < 4; ++w) {
        const std::uint32_t want = system_written_word(e, w, last_pass);
        if (words[w] != want) return word_mismatch(what, e, w, want, words[w]);
      }
    }
    return {};
  }

  static Check word_mismatch(const char* what, std::size_t e, int w, std::uint32_t want, std::uint32_t got) {
    char text[200];
    std::snprintf(text, sizeof text, "%s element %zu word %d: expected %u, got %u", what, e, w, want, got);
    return Check{false, text};
  }

  using MappedKernel = void (*)(uint4*, std::size_t, int, std::uint32_t, std::uint32_t*);

  SystemTransfer transfer_;
  std::size_t n_;
  PinnedBuffer host_;
  uint4* mapped_ = nullptr;  // host_ as the device addresses it (mapped transfers)
  DeviceBuffer<uint4> device_;
  MappedKernel kernel_ = nullptr;
  int blocks_ = 0;
  DeviceBuffer<std::uint32_t> sums_;
};

class CudaSystemProbe final : public Probe {
 public:
  CudaSystemProbe() {
    info_.name = "system";
    info_.backend = "cuda";
    info_.description =
        "host <-> device link: pinned cudaMemcpyAsync (h2d, d2h) and kernels streaming mapped "
        "zero-copy host memory (mapped_read, mapped_write); bytes counted on the host side";
    info_.axes = {
        choice_axis("transfer",
                    "h2d / d2h: pinned copies; mapped_read / mapped_write: a kernel loads or "
                    "stores mapped host memory",
                    {"h2d", "d2h", "mapped_read", "mapped_write"}),
        // 256 MiB: large enough that per-copy overheads (~10 us) vanish at the 50-450 GB/s of
        // PCIe 5 / NVLink-C2C, small enough to pin on any host.
        numeric_axis("bytes", AxisType::Bytes, "bytes of the pinned host buffer moved per copy", 4096, 1e12,
                     {"268435456"}),
    };
    FeedSpec feed;
    feed.kind = FeedKind::NamedLevel;
    feed.metric = "gbs";
    feed.level_name = "system";
    feed.series_axes = {"transfer"};
    feed.primary_series = "transfer=h2d";
    info_.feeds = {feed};
  }

  const ProbeInfo& info() const override { return info_; }

  std::string unsupported_reason(const Params& p, const DeviceInfo&) const override {
    if (!system_is_mapped(parse_system_transfer(param_text(p, "transfer")))) return {};
    int can_map = 0;
    if (cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, selected_device()) != cudaSuccess) {
      cudaGetLastError();
      return {};  // unknown here; prepare() reports the real error
    }
    return can_map ? std::string() : "device cannot map host memory (cudaDevAttrCanMapHostMemory=0)";
  }

  std::uint64_t footprint_bytes(const Params& p) const override {
    // Device memory only (the pinned buffer is host memory), plus the block sums.
    return system_device_bytes(parse_system_transfer(param_text(p, "transfer")),
                               static_cast<std::uint64_t>(param_int(p, "bytes"))) +
           (1u << 20);
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo&) const override {
    return std::make_unique<SystemPoint>(parse_system_transfer(param_text(p, "transfer")),
                                         static_cast<std::uint64_t>(param_int(p, "bytes")));
  }

 private:
  ProbeInfo info_;
};

}  // namespace

RP_REGISTER_PROBE(CudaSystemProbe);

}  // namespace roofprobe::cuda
