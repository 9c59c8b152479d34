// Probe "flops" on the CUDA backend: ERT's FLOP kernel. Every element of a working set gets a
// data-dependent chain of K = flops_per_element FLOPs (kernels/common/flop_chain.hpp) per pass,
// `reps` passes per launch; each thread keeps kFlopsIlp elements in registers (independent
// chains). The axes and feeds are the CPU probe's, so the fitter and the plots treat both alike.
//
// One kernel template serves every K (dispatch_chain_length picks the instantiation at run
// time); nothing is rebuilt per FLOP count, unlike ERT.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/flop_chain.hpp"
#include "kernels/common/flop_tiles.hpp"
#include "kernels/common/probe.hpp"
#include "kernels/cuda/cuda_support.hpp"
#include "kernels/cuda/flops_kernel.cuh"
#include "kernels/cuda/probe_decl.hpp"

namespace roofprobe::cuda {
namespace {

// The chain's constants (flop_chain.hpp): x converges towards b / (1 - a) = 4 and stays finite.
constexpr double kChainA = 1.0 - 1.0 / 4096;   // 1 - 2^-12
constexpr double kChainB = 1.0 / 1024;         // 2^-10
constexpr double kTargetLaunchSeconds = 4e-3;  // long enough to dwarf launch overhead
constexpr int kSamplesChecked = 64;            // elements verify() recomputes on the host

// Host arithmetic that predicts the device bit for bit. std::fma rounds once like __fma_rn; the
// volatile temporaries round the product and the sum separately even where the host compiler
// contracts x * a + b into an FMA (GCC's default on targets with FMA, e.g. Grace's aarch64).
template <class T>
struct HostOps {
  static T fma(T x, T a, T b) { return std::fma(x, a, b); }
  static T mul(T x, T a) {
    volatile T p = x * a;
    return p;
  }
  static T add(T x, T b) {
    volatile T s = x + b;
    return s;
  }
};

// Element x after `passes` chains of K, as the device computes it. Stops early at a fixed point
// (a chain that maps x to itself keeps it there forever), which every chain with a multiply
// reaches after a few hundred thousand FLOPs, so the host cost stays bounded.
template <class T, int K, FlopForm Form>
T host_chain(T x, long long passes) {
  const T a = static_cast<T>(kChainA), b = static_cast<T>(kChainB);
  for (long long p = 0; p < passes; ++p) {
    const T next = flop_chain<K, Form, HostOps<T>>(x, a, b);
    if (next == x) break;
    x = next;
  }
  return x;
}

template <class T>
using FlopsKernel = void (*)(T*, std::size_t, int, T, T);

template <class T>
struct ChainFns {
  FlopsKernel<T> kernel = nullptr;
  T (*host)(T, long long) = nullptr;
};

// The device kernel and its host model for a run-time (k, form).
template <class T>
ChainFns<T> chain_fns(int k, FlopForm form) {
  ChainFns<T> fns;
  const bool ok = dispatch_chain_length(k, [&](auto kc) {
    constexpr int K = decltype(kc)::value;
    if (form == FlopForm::Fma) {
      fns = {&flops_kernel<T, K, FlopForm::Fma>, &host_chain<T, K, FlopForm::Fma>};
    } else {
      fns = {&flops_kernel<T, K, FlopForm::NoFma>, &host_chain<T, K, FlopForm::NoFma>};
    }
  });
  if (!ok)
    throw std::invalid_argument("flops: flops_per_element=" + std::to_string(k) +
                                " is not a power of two in 1..1024");
  return fns;
}

std::string ceiling_name(bool fp64, FlopForm form) {
  return std::string(fp64 ? "FP64" : "FP32") + (form == FlopForm::Fma ? ".FMA" : ".noFMA");
}

// Indices verify() checks: first, last, and evenly spread ones in between; the odd step lands
// them on different threads, slots and tiles.
std::vector<std::size_t> sample_indices(std::size_t n) {
  std::vector<std::size_t> idx{0, n - 1};
  const std::size_t step = (n / kSamplesChecked) | 1;
  for (std::size_t i = step; i < n - 1 && idx.size() < kSamplesChecked + 2; i += step)
    idx.push_back(i);
  return idx;
}

template <class T>
class FlopsPoint final : public PreparedPoint {
 public:
  FlopsPoint(int k, FlopForm form, std::uint64_t working_set, const DeviceInfo& dev)
      : k_(k), form_(form), fns_(chain_fns<T>(k, form)) {
    use_selected_device();
    shape_ = flop_tiles(working_set, sizeof(T), kFlopsBlock, kFlopsIlp,
                        resident_blocks(fns_.kernel, kFlopsBlock));
    reps_ = reps_for(seconds_per_pass(dev), kTargetLaunchSeconds);
    data_ = DeviceBuffer<T>(shape_.elements);
    flops_init_kernel<T><<<1024, 256>>>(data_.get(), shape_.elements);
    RP_CUDA_CHECK(cudaGetLastError());
    RP_CUDA_CHECK(cudaDeviceSynchronize());
  }

  Work work() const override {
    const double passes = static_cast<double>(shape_.elements) * reps_;
    Work w;
    w.flops = chain_flops_per_element(k_) * passes;
    w.bytes_read = sizeof(T) * passes;
    w.bytes_written = sizeof(T) * passes;
    w.transactions = w.bytes() / 32;  // coalesced: every 32-byte sector is used whole
    w.working_set_bytes = static_cast<double>(shape_.elements) * sizeof(T);
    return w;  // warp_instructions left 0: the chain is counted in FLOPs, not instructions
  }

  void launch() override {
    fns_.kernel<<<shape_.blocks, kFlopsBlock>>>(data_.get(), shape_.tiles, reps_,
                                                static_cast<T>(kChainA), static_cast<T>(kChainB));
    RP_CUDA_CHECK(cudaGetLastError());
    passes_done_ += reps_;
  }

  void set_repetitions(std::int64_t reps) override { reps_ = clamp_reps(reps); }
  std::int64_t repetitions() const override { return reps_; }

  Check verify() override {
    RP_CUDA_CHECK(cudaDeviceSynchronize());
    const long long passes = passes_done_;
    for (std::size_t i : sample_indices(shape_.elements)) {
      T got{};
      RP_CUDA_CHECK(cudaMemcpy(&got, data_.get() + i, sizeof(T), cudaMemcpyDeviceToHost));
      const T want = fns_.host(flops_initial_value<T>(i), passes);
      if (!(got == want)) return mismatch(i, want, got, passes);
    }
    return {};
  }

 private:
  // Estimated seconds per pass from the theoretical peaks: the slower of the FLOPs at the
  // series' peak and the bytes at DRAM bandwidth (fallbacks when the device info lacks them).
  double seconds_per_pass(const DeviceInfo& dev) const {
    const std::string name = ceiling_name(sizeof(T) == 8, form_);
    auto it = dev.theoretical_gflops.find(name);
    const double gflops =
        it != dev.theoretical_gflops.end() && it->second > 0 ? it->second : 1000.0;
    const double gbs = extra_number(dev, kExtraMemoryPeakGbs, 500.0);
    const double n = static_cast<double>(shape_.elements);
    return std::max(k_ * n / (gflops * 1e9), 2 * sizeof(T) * n / (gbs * 1e9));
  }

  Check mismatch(std::size_t i, T want, T got, long long passes) const {
    char text[256];
    std::snprintf(text, sizeof text,
                  "element %zu after %lld passes of %s K=%d: expected %.17g (%a), got %.17g (%a)",
                  i, passes, ceiling_name(sizeof(T) == 8, form_).c_str(), k_,
                  static_cast<double>(want), static_cast<double>(want), static_cast<double>(got),
                  static_cast<double>(got));
    return Check{false, text};
  }

  int k_;
  FlopForm form_;
  ChainFns<T> fns_;
  FlopTiles shape_;
  int reps_ = 1;
  long long passes_done_ = 0;  // over all launches so far, what verify() predicts
  DeviceBuffer<T> data_;
};

std::vector<std::string> chain_length_texts() {
  std::vector<std::string> v;
  for (int k : kChainLengths) v.push_back(std::to_string(k));
  return v;
}

class CudaFlopsProbe final : public Probe {
 public:
  CudaFlopsProbe() {
    info_.name = "flops";
    info_.backend = "cuda";
    info_.description =
        "ERT FLOP kernel: per element a dependent chain of flops_per_element FLOPs (FMA or "
        "separate multiply/add), 8 elements per thread, read-modify-write of the working set";
    info_.axes = {
        choice_axis("precision", "floating-point type", {"fp64", "fp32"}),
        choice_axis("form", "fma: fused multiply-add; nofma: separate multiply and add",
                    {"fma", "nofma"}),
        // A Choice, as on the CPU: only the chain lengths that have a compiled kernel.
        choice_axis("flops_per_element",
                    "FLOPs per element and pass (ERT's FLOP): the arithmetic intensity",
                    chain_length_texts()),
        // 64 MiB: several waves of resident blocks on every GPU (an H100 wave holds 17 MB of
        // FP64), launches of milliseconds even at K=1024 on parts with slow FP64, and room on
        // small cards.
        numeric_axis("working_set_bytes", AxisType::Bytes, "bytes of the array the chains update",
                     64 * 1024, 1e12, {"67108864"}),
    };
    FeedSpec feed;
    feed.kind = FeedKind::ComputeCeiling;
    feed.metric = "gflops";
    feed.series_axes = {"precision", "form"};
    feed.name_pattern = "{precision}.{form}";
    info_.feeds = {feed};
  }

  const ProbeInfo& info() const override { return info_; }

  std::uint64_t footprint_bytes(const Params& p) const override {
    return static_cast<std::uint64_t>(param_int(p, "working_set_bytes"));
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& dev) const override {
    const int k = static_cast<int>(param_int(p, "flops_per_element"));
    const FlopForm form = param_text(p, "form") == "fma" ? FlopForm::Fma : FlopForm::NoFma;
    const auto ws = static_cast<std::uint64_t>(param_int(p, "working_set_bytes"));
    const std::string& precision = param_text(p, "precision");
    if (precision == "fp64") return std::make_unique<FlopsPoint<double>>(k, form, ws, dev);
    if (precision == "fp32") return std::make_unique<FlopsPoint<float>>(k, form, ws, dev);
    throw std::invalid_argument("flops: precision '" + precision + "' is not fp64 or fp32");
  }

 private:
  ProbeInfo info_;
};

}  // namespace

RP_REGISTER_PROBE(CudaFlopsProbe);

}  // namespace roofprobe::cuda
