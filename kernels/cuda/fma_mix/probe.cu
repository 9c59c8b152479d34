// Probe "fma_mix" on the CUDA backend: FMA-mix ceilings. Each thread runs kMixChains independent
// register-resident chains of blocks of 8 operations, a fraction `fma_fraction` of them FMAs and
// the rest alternating multiplies and adds (kernels/cuda/fma_mix/model.hpp), in FP64, FP32,
// half2 or bfloat162. All operations issue at the same rate, so the FLOP rate follows
// peak x (1 + a) / 2 (docs/ARCHITECTURE.md's FMA-mix ceiling): a = 1 is the FMA peak, a = 0 the
// no-FMA one. The data is loaded and stored once per launch; everything else is in registers,
// so every point is compute-bound.
#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/cuda/fma_mix/model.hpp"
#include "kernels/cuda/backend/gpu_arith_rates.hpp"
#include "kernels/cuda/backend/gpu_arch.hpp"
#include "kernels/contract/compute_feeds.hpp"
#include "kernels/contract/probe.hpp"
#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/fma_mix/kernel.cuh"
#include "kernels/cuda/backend/probe_decl.hpp"

namespace roofprobe::cuda {

RP_CUDA_CARVEOUT("fma_mix", Carveout::MaxL1);  // operands in registers, no shared memory
namespace {

constexpr double kTargetLaunchSeconds = 4e-3;
constexpr int kSamplesChecked = 64;  // words verify() recomputes on the host
const char* const kFractionTexts[] = {"0", "0.25", "0.5", "0.75", "1"};
const char* const kPrecisionTexts[] = {"fp64", "fp32", "fp16", "bf16"};

MixPrecision parse_precision(const std::string& text) {
  if (text == "fp64") return MixPrecision::Fp64;
  if (text == "fp32") return MixPrecision::Fp32;
  if (text == "fp16") return MixPrecision::Fp16;
  if (text == "bf16") return MixPrecision::Bf16;
  throw std::invalid_argument("fma_mix: precision '" + text + "' is not fp64, fp32, fp16 or bf16");
}

int parse_quarters(const std::string& text) {
  const int q = mix_quarters(text);
  if (q < 0) throw std::invalid_argument("fma_mix: fma_fraction '" + text + "' is not 0, 0.25, 0.5, 0.75 or 1");
  return q;
}

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return s;
}

// The ceiling's name as the fitter renders "{precision}.MIX{fma_fraction}": "FP64.MIX0.25".
std::string ceiling_name(MixPrecision p, int quarters) {
  return upper(kPrecisionTexts[static_cast<int>(p)]) + ".MIX" + kFractionTexts[quarters];
}

// "9.0" -> {9, 0}; {0, 0} when absent or malformed.
std::pair<int, int> compute_capability(const DeviceInfo& dev) {
  auto it = dev.extra.find("compute_capability");
  int major = 0, minor = 0;
  if (it != dev.extra.end() && parse_compute_capability(it->second, major, minor)) return {major, minor};
  return {0, 0};
}

// FMA results per clock per SM of a precision (0: unknown), from kernels/cuda/backend/gpu_arch.hpp (FP64/FP32) and
// kernels/cuda/backend/gpu_arith_rates.hpp (16-bit, counting both halves of a packed instruction; the flops probe's
// table, so both probes state the same peak).
int results_per_clock_per_sm(MixPrecision p, int major, int minor) {
  const GpuArchFigures arch = gpu_arch_figures(major, minor);
  const GpuArithRates rates = gpu_arith_rates(major, minor);
  switch (p) {
    case MixPrecision::Fp64:
      return arch.fp64_lanes_per_sm;
    case MixPrecision::Fp32:
      return arch.fp32_lanes_per_sm;
    case MixPrecision::Fp16:
      return rates.fp16;
    case MixPrecision::Bf16:
      return rates.bf16;
  }
  return 0;
}

// ---- host <-> device words ----------------------------------------------------------------------
// double/float hold one value; the packed types two 16-bit values (lane 0 in the low half).
template <class Ops>
struct Words;

template <>
struct Words<MixFp64> {
  static constexpr MixPrecision kPrecision = MixPrecision::Fp64;
  static double encode(double lo, double /*hi*/) { return lo; }
  static double lane(double w, int /*l*/) { return w; }
};
template <>
struct Words<MixFp32> {
  static constexpr MixPrecision kPrecision = MixPrecision::Fp32;
  static float encode(double lo, double /*hi*/) { return static_cast<float>(lo); }
  static double lane(float w, int /*l*/) { return w; }
};
template <>
struct Words<MixFp16x2> {
  static constexpr MixPrecision kPrecision = MixPrecision::Fp16;
  static std::uint32_t encode(double lo, double hi) {
    return mix_double_to_half(lo) | (static_cast<std::uint32_t>(mix_double_to_half(hi)) << 16);
  }
  static double lane(std::uint32_t w, int l) {
    return mix_half_to_double(static_cast<std::uint16_t>(l == 0 ? w : w >> 16));
  }
};
template <>
struct Words<MixBf16x2> {
  static constexpr MixPrecision kPrecision = MixPrecision::Bf16;
  static std::uint32_t encode(double lo, double hi) {
    return mix_double_to_bf16(lo) | (static_cast<std::uint32_t>(mix_double_to_bf16(hi)) << 16);
  }
  static double lane(std::uint32_t w, int l) {
    return mix_bf16_to_double(static_cast<std::uint16_t>(l == 0 ? w : w >> 16));
  }
};

template <class Ops>
using MixKernel = void (*)(typename Ops::Word*, int, typename Ops::Word, typename Ops::Word);

template <class Ops>
MixKernel<Ops> mix_kernel_for(int quarters) {
  switch (quarters) {
    case 0:
      return &fma_mix_kernel<Ops, 0>;
    case 1:
      return &fma_mix_kernel<Ops, 1>;
    case 2:
      return &fma_mix_kernel<Ops, 2>;
    case 3:
      return &fma_mix_kernel<Ops, 3>;
    case 4:
      return &fma_mix_kernel<Ops, 4>;
    default:
      break;
  }
  throw std::invalid_argument("fma_mix: no kernel for " + std::to_string(quarters) + " quarters");
}

template <class Ops>
class MixPoint final : public PreparedPoint {
  using Word = typename Ops::Word;
  using W = Words<Ops>;
  static constexpr int kLanes = mix_values_per_instruction(W::kPrecision);

 public:
  MixPoint(int quarters, const DeviceInfo& dev) : quarters_(quarters), kernel_(mix_kernel_for<Ops>(quarters)) {
    use_selected_device();
    blocks_ = resident_blocks(kernel_, kMixBlock, carveout_of("fma_mix"));
    threads_ = static_cast<std::int64_t>(blocks_) * kMixBlock;
    words_ = static_cast<std::size_t>(threads_) * kMixChains;
    const MixConstants k = mix_constants(W::kPrecision);
    m_ = W::encode(k.m, k.m);
    c_ = W::encode(k.c, k.c);
    std::vector<Word> host(words_);
    for (std::size_t i = 0; i < words_; ++i) host[i] = W::encode(initial(i, 0), initial(i, 1));
    data_ = DeviceBuffer<Word>(words_);
    RP_CUDA_CHECK(cudaMemcpy(data_.get(), host.data(), words_ * sizeof(Word), cudaMemcpyHostToDevice));
    set_repetitions(reps_for(seconds_per_rep(dev), kTargetLaunchSeconds));
  }

  Work work() const override {
    Work w;
    w.flops = mix_flops_per_launch(W::kPrecision, quarters_, threads_, reps_);
    w.bytes_read = static_cast<double>(words_) * sizeof(Word);
    w.bytes_written = w.bytes_read;
    w.transactions = w.bytes() / 32;  // coalesced: data[j * threads + t]
    w.working_set_bytes = w.bytes_read;
    // warp_instructions left 0, as the flops probe does: the ceiling is counted in FLOPs
    // (mix_warp_instructions_per_launch gives the count where it is wanted).
    return w;
  }

  void launch() override {
    kernel_<<<blocks_, kMixBlock>>>(data_.get(), reps_, m_, c_);
    RP_CUDA_CHECK(cudaGetLastError());
    blocks_done_ += static_cast<std::int64_t>(reps_) * kMixBlocksPerIteration;
  }

  void set_repetitions(std::int64_t reps) override { reps_ = clamp_reps(reps); }
  std::int64_t repetitions() const override { return reps_; }

  Check verify() override {
    RP_CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<std::size_t> idx{0, words_ - 1};
    const std::size_t step = (words_ / kSamplesChecked) | 1;
    for (std::size_t i = step; i < words_ - 1 && idx.size() < kSamplesChecked + 2; i += step) idx.push_back(i);
    for (std::size_t i : idx) {
      Word got{};
      RP_CUDA_CHECK(cudaMemcpy(&got, data_.get() + i, sizeof(Word), cudaMemcpyDeviceToHost));
      for (int l = 0; l < kLanes; ++l) {
        const double want = mix_host_chain(W::kPrecision, quarters_, initial(i, l), blocks_done_);
        const double value = W::lane(got, l);
        if (!(value == want)) {
          char text[256];
          std::snprintf(text, sizeof text,
                        "%s: word %zu lane %d after %lld blocks: expected %.17g (%a), got %.17g "
                        "(%a)",
                        ceiling_name(W::kPrecision, quarters_).c_str(), i, l, static_cast<long long>(blocks_done_),
                        want, want, value, value);
          return Check{false, text};
        }
      }
    }
    return {};
  }

 private:
  // Start value of lane l of word i, already representable in the precision.
  static double initial(std::size_t i, int l) {
    return mix_initial_value(static_cast<std::uint64_t>(i) * 2 + static_cast<std::uint64_t>(l));
  }

  // From this probe's own theoretical peak when known, else a conservative 1 TFLOP/s.
  double seconds_per_rep(const DeviceInfo& dev) const {
    const auto it = dev.theoretical_gflops.find(ceiling_name(W::kPrecision, quarters_));
    const double gflops = it != dev.theoretical_gflops.end() && it->second > 0 ? it->second : 1000.0;
    return mix_flops_per_launch(W::kPrecision, quarters_, threads_, 1) / (gflops * 1e9);
  }

  int quarters_;
  MixKernel<Ops> kernel_;
  int blocks_ = 0;
  std::int64_t threads_ = 0;
  std::size_t words_ = 0;
  Word m_{}, c_{};
  int reps_ = 1;
  std::int64_t blocks_done_ = 0;  // blocks every value received over all launches so far
  DeviceBuffer<Word> data_;
};

std::string fmt(double v, int digits) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}

class CudaFmaMixProbe final : public Probe {
 public:
  CudaFmaMixProbe() {
    info_.name = "fma_mix";
    info_.backend = "cuda";
    info_.description =
        "FMA-mix ceilings: register-resident chains of 8-operation blocks, a fraction "
        "fma_fraction of FMAs and the rest alternating multiplies and adds, in FP64, FP32, half2 "
        "and bfloat162";
    info_.axes = {
        choice_axis("precision", "fp64, fp32, fp16 (half2), bf16 (bfloat162, sm_80+)",
                    {"fp64", "fp32", "fp16", "bf16"}),
        choice_axis("fma_fraction", "fraction of the operations that are FMAs; the rest are multiplies and adds",
                    {"0", "0.25", "0.5", "0.75", "1"}),
    };
    info_.feeds = {compute_ceiling_feed({"precision", "fma_fraction"}, "{precision}.MIX{fma_fraction}")};
  }

  const ProbeInfo& info() const override { return info_; }

  std::string unsupported_reason(const Params& p, const DeviceInfo& dev) const override {
    const MixPrecision precision = parse_precision(param_text(p, "precision"));
    const auto [major, minor] = compute_capability(dev);
    const int cc = major * 10 + minor;
    if (precision == MixPrecision::Bf16 && cc > 0 && cc < 80)
      return "fma_mix: bf16 arithmetic (fma.rn.bf16x2) needs compute capability 8.0 or newer; "
             "this device is " +
             std::to_string(major) + "." + std::to_string(minor);
    if (precision == MixPrecision::Fp16 && cc > 0 && cc < 53)
      return "fma_mix: half2 arithmetic needs compute capability 5.3 or newer; this device is " +
             std::to_string(major) + "." + std::to_string(minor);
    return {};
  }

  std::uint64_t footprint_bytes(const Params&) const override {
    // kMixChains 8-byte words per resident thread: 17 MiB on an H100 (2048 threads x 132 SMs).
    return std::uint64_t{64} << 20;
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& dev) const override {
    const int q = parse_quarters(param_text(p, "fma_fraction"));
    switch (parse_precision(param_text(p, "precision"))) {
      case MixPrecision::Fp64:
        return std::make_unique<MixPoint<MixFp64>>(q, dev);
      case MixPrecision::Fp32:
        return std::make_unique<MixPoint<MixFp32>>(q, dev);
      case MixPrecision::Fp16:
        return std::make_unique<MixPoint<MixFp16x2>>(q, dev);
      case MixPrecision::Bf16:
        return std::make_unique<MixPoint<MixBf16x2>>(q, dev);
    }
    throw std::logic_error("fma_mix: unknown precision");
  }

  // FP64/FP32/FP16/BF16 .MIX<a>: fma_peak x (1 + a) / 2, fma_peak = SMs x FMA results per clock
  // per SM x 2 FLOPs x clock. Nothing for a precision whose per-SM rate is not known.
  void add_theoretical_peaks(DeviceInfo& dev) const override {
    const auto [major, minor] = compute_capability(dev);
    const bool measured = dev.clock_measured_mhz > 0;
    const double mhz = measured ? dev.clock_measured_mhz : dev.clock_max_mhz;
    if (major == 0 || mhz <= 0 || dev.compute_units <= 0) return;
    const std::string cc = std::to_string(major) + "." + std::to_string(minor);
    for (MixPrecision p : {MixPrecision::Fp64, MixPrecision::Fp32, MixPrecision::Fp16, MixPrecision::Bf16}) {
      const int per_sm = results_per_clock_per_sm(p, major, minor);
      if (per_sm <= 0) continue;
      const double fma_peak = gpu_peak_gflops(dev.compute_units, per_sm, mhz, /*fma=*/true);
      for (int q = 0; q <= kMixMaxQuarters; ++q) {
        const std::string name = ceiling_name(p, q);
        dev.theoretical_gflops[name] = fma_peak * mix_peak_fraction(q);
        dev.theoretical_basis[name] = std::to_string(dev.compute_units) + " SMs x " + std::to_string(per_sm) + " " +
                                      upper(kPrecisionTexts[static_cast<int>(p)]) + " results/clk/SM (cc " + cc +
                                      ") x 2 FLOP/FMA x " + fmt(mhz, 1) + " MHz (" +
                                      (measured ? "measured" : "nominal") + " SM clock) x (1 + " + kFractionTexts[q] +
                                      ") / 2 (FMA fraction " + kFractionTexts[q] + ")";
      }
    }
  }

 private:
  ProbeInfo info_;
};

}  // namespace

RP_REGISTER_PROBE(CudaFmaMixProbe);

}  // namespace roofprobe::cuda
