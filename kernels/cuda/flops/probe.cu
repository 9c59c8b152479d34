// Probe "flops" on the CUDA backend: ERT's FLOP kernel. Every element of a working set gets a
// data-dependent chain of K = flops_per_element FLOPs (kernels/common/flop_chain.hpp) per pass,
// `reps` passes per launch; each thread keeps kFlopsIlp elements in registers (independent
// chains). The form axis and the feed are the CPU probe's, so the fitter and the plots treat both
// alike; the precision axis adds the GPU's fp16 and bf16 (two 16-bit values per 32-bit element,
// f16x2/bf16x2 instructions, K FLOPs per 16-bit value) and int32 (multiply-add counted as 2 ops).
//
// One kernel template serves every K (dispatch_chain_length picks the instantiation at run
// time); nothing is rebuilt per FLOP count, unlike ERT. The kernels are instantiated in
// kernels_<type>.cu (kernel_table.hpp); this file holds the host side.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "kernels/common/flop_chain.hpp"
#include "kernels/cuda/flops/model.hpp"
#include "kernels/cuda/backend/gpu_arith_rates.hpp"
#include "kernels/contract/compute_feeds.hpp"
#include "kernels/contract/probe.hpp"
#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/flops/kernel.cuh"
#include "kernels/cuda/flops/kernel_table.hpp"
#include "kernels/cuda/backend/probe_decl.hpp"

namespace roofprobe::cuda {

RP_CUDA_CARVEOUT("flops", Carveout::MaxL1);  // operands in registers, no shared memory
namespace {

// The fp64/fp32 chain's constants (flop_chain.hpp): x converges towards b / (1 - a) = 4.
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
template <class Value, int K, FlopForm Form, class Ops>
Value host_chain_to_fixed_point(Value x, Value a, Value b, long long passes) {
  for (long long p = 0; p < passes; ++p) {
    const Value next = flop_chain<K, Form, Ops>(x, a, b);
    if (next == x) break;
    x = next;
  }
  return x;
}

std::string hex_text(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g (%a)", v, v);
  return text;
}

// ---- per-precision host side: constants, starting values, the host model ----------------------
// Model<T> for a device element type T: Value is what the host model computes with, `lanes` the
// 16-bit values per element (FLOPs are counted per value), chain<K, Form> the model of `passes`
// passes, and from_device/text turn a device word into something to compare and to print.
template <class T>
struct FloatModel {
  using Value = T;
  static constexpr int lanes = 1;
  static T a() { return static_cast<T>(kChainA); }
  static T b() { return static_cast<T>(kChainB); }
  static Value initial(std::size_t i) { return flops_initial_value<T>(i); }
  static Value from_device(T v) { return v; }
  template <int K, FlopForm Form>
  static Value chain(Value x, long long passes) {
    return host_chain_to_fixed_point<T, K, Form, HostOps<T>>(x, a(), b(), passes);
  }
  static std::string text(Value v) { return hex_text(static_cast<double>(v)); }
};

// Conversions of cuda_fp16.h / cuda_bf16.h that are host-callable in CUDA 11.8 and later: float
// to 16 bits with round-to-nearest-even, and 16 bits to float (exact). The model's intermediates
// are exact in double; to_format checks they are exact in float too (a product of two 11-bit
// significands has 22 bits), so the float-to-16-bit conversion rounds once, as the device does.
template <class Raw, class Half, Half (*FromFloat)(float), float (*ToFloat)(Half)>
struct HalfFormat {
  static double to_format(double v) {
    const float f = static_cast<float>(v);
    if (static_cast<double>(f) != v)
      throw std::logic_error("flops: 16-bit chain model intermediate is not exact in float");
    return static_cast<double>(ToFloat(FromFloat(f)));
  }
  static std::uint16_t encode(double v) {
    const Raw raw = FromFloat(static_cast<float>(v));
    return raw.x;
  }
  static double decode(std::uint16_t bits) {
    Raw raw;
    raw.x = bits;
    return static_cast<double>(ToFloat(Half(raw)));
  }
};

float half_to_float(__half h) { return __half2float(h); }
__half float_to_half(float f) { return __float2half_rn(f); }
float bf16_to_float(__nv_bfloat16 h) { return __bfloat162float(h); }
__nv_bfloat16 float_to_bf16(float f) { return __float2bfloat16_rn(f); }

using Fp16Format = HalfFormat<__half_raw, __half, &float_to_half, &half_to_float>;
using Bf16Format = HalfFormat<__nv_bfloat16_raw, __nv_bfloat16, &float_to_bf16, &bf16_to_float>;

template <class T, class Format, Half16 Kind>
struct HalfModel {
  using Value = HalfLanes;
  static constexpr int lanes = 2;
  static double a_value() { return Kind == Half16::Fp16 ? kChainFp16A : kChainBf16A; }
  static double b_value() { return Kind == Half16::Fp16 ? kChainFp16B : kChainBf16B; }
  static T word(double v) {
    const std::uint32_t h = Format::encode(v);
    if (Format::decode(static_cast<std::uint16_t>(h)) != v)
      throw std::logic_error("flops: a 16-bit chain constant is not representable");
    return T{h | (h << 16)};
  }
  static T a() { return word(a_value()); }
  static T b() { return word(b_value()); }
  static Value from_device(T w) {
    return {Format::decode(static_cast<std::uint16_t>(w.bits & 0xFFFFu)),
            Format::decode(static_cast<std::uint16_t>(w.bits >> 16))};
  }
  static Value initial(std::size_t i) { return from_device(T{half16_initial_word(i, Kind)}); }
  template <int K, FlopForm Form>
  static Value chain(Value x, long long passes) {
    const Value av{a_value(), a_value()}, bv{b_value(), b_value()};
    return host_chain_to_fixed_point<Value, K, Form, HalfLaneOps<Format>>(x, av, bv, passes);
  }
  static std::string text(Value v) { return "{" + hex_text(v.lo) + ", " + hex_text(v.hi) + "}"; }
};

struct Int32Model {
  using Value = std::uint32_t;
  static constexpr int lanes = 1;
  static std::uint32_t a() { return kChainInt32A; }
  static std::uint32_t b() { return kChainInt32B; }
  static Value initial(std::size_t i) { return int32_initial_value(i); }
  static Value from_device(std::uint32_t v) { return v; }
  // Integers do not round: the pass is an affine map and `passes` passes its power (exact for
  // any count; flop_chain.hpp).
  template <int K, FlopForm Form>
  static Value chain(Value x, long long passes) {
    return affine_power(int32_chain_map(K, a(), b()), static_cast<unsigned long long>(passes))(x);
  }
  static std::string text(Value v) {
    char t[32];
    std::snprintf(t, sizeof t, "0x%08x", v);
    return t;
  }
};

template <class T>
struct ModelOf;
template <>
struct ModelOf<double> : FloatModel<double> {};
template <>
struct ModelOf<float> : FloatModel<float> {};
template <>
struct ModelOf<F16x2> : HalfModel<F16x2, Fp16Format, Half16::Fp16> {};
template <>
struct ModelOf<Bf16x2> : HalfModel<Bf16x2, Bf16Format, Half16::Bf16> {};
template <>
struct ModelOf<std::uint32_t> : Int32Model {};

template <class T>
struct ChainFns {
  using Value = typename ModelOf<T>::Value;
  FlopsKernel<T> kernel = nullptr;
  Value (*host)(Value, long long) = nullptr;
};

// The device kernel and its host model for a run-time (k, form).
template <class T>
ChainFns<T> chain_fns(int k, FlopForm form) {
  using Model = ModelOf<T>;
  ChainFns<T> fns;
  fns.kernel = flops_kernel_for<T>(k, form);
  dispatch_chain_length(k, [&](auto kc) {
    constexpr int K = decltype(kc)::value;
    fns.host =
        form == FlopForm::Fma ? &Model::template chain<K, FlopForm::Fma> : &Model::template chain<K, FlopForm::NoFma>;
  });
  if (fns.kernel == nullptr || fns.host == nullptr)
    throw std::invalid_argument("flops: flops_per_element=" + std::to_string(k) + " is not a power of two in 1..1024");
  return fns;
}

// The precision axis: choice text, ceiling prefix.
struct PrecisionName {
  const char* text;
  const char* ceiling;
};
constexpr PrecisionName kPrecisions[] = {
    {"fp64", "FP64"}, {"fp32", "FP32"}, {"fp16", "FP16"}, {"bf16", "BF16"}, {"int32", "INT32"}};

std::string ceiling_name(const std::string& precision, FlopForm form) {
  for (const PrecisionName& p : kPrecisions) {
    if (precision == p.text) return std::string(p.ceiling) + (form == FlopForm::Fma ? ".FMA" : ".noFMA");
  }
  return precision;
}

// Indices verify() checks: first, last, and evenly spread ones in between; the odd step lands
// them on different threads, slots and tiles.
std::vector<std::size_t> sample_indices(std::size_t n) {
  std::vector<std::size_t> idx{0, n - 1};
  const std::size_t step = (n / kSamplesChecked) | 1;
  for (std::size_t i = step; i < n - 1 && idx.size() < kSamplesChecked + 2; i += step) idx.push_back(i);
  return idx;
}

// Whether the code loaded for this device holds the bf16 arithmetic (RP_FLOPS_BF16_ARITH): a
// binary without an sm_80+ image for the device would run traps instead.
__global__ void flops_bf16_compiled_kernel(int* compiled) { *compiled = FlopsElement<Bf16x2>::kArithCompiled ? 1 : 0; }

bool bf16_arith_compiled() {
  DeviceBuffer<int> flag(1);
  flops_bf16_compiled_kernel<<<1, 1>>>(flag.get());
  RP_CUDA_CHECK(cudaGetLastError());
  int compiled = 0;
  RP_CUDA_CHECK(cudaMemcpy(&compiled, flag.get(), sizeof compiled, cudaMemcpyDeviceToHost));
  return compiled == 1;
}

template <class T>
class FlopsPoint final : public PreparedPoint {
  using Model = ModelOf<T>;
  using Value = typename Model::Value;

 public:
  FlopsPoint(const std::string& precision, int k, FlopForm form, std::uint64_t working_set, const DeviceInfo& dev)
      : name_(ceiling_name(precision, form)), k_(k), form_(form), fns_(chain_fns<T>(k, form)) {
    use_selected_device();
    if (std::is_same<T, Bf16x2>::value && !bf16_arith_compiled()) {
      throw std::runtime_error(
          "flops: precision=bf16 needs code built for sm_80 or newer for this device, and this "
          "binary's image for it has none (set CMAKE_CUDA_ARCHITECTURES to include it)");
    }
    shape_ = flop_tiles(working_set, sizeof(T), kFlopsBlock, kFlopsIlp,
                        resident_blocks(fns_.kernel, kFlopsBlock, carveout_of("flops"), 0, sm_count(dev)));
    reps_ = reps_for(seconds_per_pass(dev), kTargetLaunchSeconds);
    data_ = DeviceBuffer<T>(shape_.elements);
    flops_init_kernel<T><<<1024, 256>>>(data_.get(), shape_.elements);
    RP_CUDA_CHECK(cudaGetLastError());
    RP_CUDA_CHECK(cudaDeviceSynchronize());
  }

  // One element is one T: a double, a float, a uint32, or a 32-bit word of two 16-bit values
  // (Model::lanes = 2, each receiving the chain of K: chain_flops_per_word).
  Work work() const override {
    const double passes = static_cast<double>(shape_.elements) * reps_;
    Work w;
    w.flops = chain_flops_per_word(k_, Model::lanes) * passes;
    w.bytes_read = sizeof(T) * passes;
    w.bytes_written = sizeof(T) * passes;
    w.transactions = w.bytes() / 32;  // coalesced: every 32-byte sector is used whole
    w.working_set_bytes = static_cast<double>(shape_.elements) * sizeof(T);
    return w;  // warp_instructions left 0: the chain is counted in FLOPs, not instructions
  }

  void launch() override {
    fns_.kernel<<<shape_.blocks, kFlopsBlock>>>(data_.get(), shape_.tiles, reps_, a_, b_);
    RP_CUDA_CHECK(cudaGetLastError());
    passes_done_ += reps_;
  }

  void set_repetitions(std::int64_t reps) override { reps_ = clamp_reps(reps); }
  std::int64_t repetitions() const override { return reps_; }

  Check verify() override {
    RP_CUDA_CHECK(cudaDeviceSynchronize());
    const long long passes = passes_done_;
    for (std::size_t i : sample_indices(shape_.elements)) {
      T raw{};
      RP_CUDA_CHECK(cudaMemcpy(&raw, data_.get() + i, sizeof(T), cudaMemcpyDeviceToHost));
      const Value got = Model::from_device(raw);
      const Value want = fns_.host(Model::initial(i), passes);
      if (!(got == want)) return mismatch(i, want, got, passes);
    }
    return {};
  }

 private:
  // Estimated seconds per pass from the theoretical peaks: the slower of the FLOPs at the
  // series' peak and the bytes at DRAM bandwidth (fallbacks when the device info lacks them).
  double seconds_per_pass(const DeviceInfo& dev) const {
    auto it = dev.theoretical_gflops.find(name_);
    const double gflops = it != dev.theoretical_gflops.end() && it->second > 0 ? it->second : 1000.0;
    const double gbs = extra_number(dev, kExtraMemoryPeakGbs, 500.0);
    const double n = static_cast<double>(shape_.elements);
    return std::max(chain_flops_per_word(k_, Model::lanes) * n / (gflops * 1e9), 2 * sizeof(T) * n / (gbs * 1e9));
  }

  Check mismatch(std::size_t i, const Value& want, const Value& got, long long passes) const {
    return Check{false, "element " + std::to_string(i) + " after " + std::to_string(passes) + " passes of " + name_ +
                            " K=" + std::to_string(k_) + ": expected " + Model::text(want) + ", got " +
                            Model::text(got)};
  }

  std::string name_;
  int k_;
  FlopForm form_;
  ChainFns<T> fns_;
  T a_ = Model::a();
  T b_ = Model::b();
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

std::vector<std::string> precision_texts() {
  std::vector<std::string> v;
  for (const PrecisionName& p : kPrecisions) v.push_back(p.text);
  return v;
}

class CudaFlopsProbe final : public Probe {
 public:
  CudaFlopsProbe() {
    info_.name = "flops";
    info_.backend = "cuda";
    info_.description =
        "ERT FLOP kernel: per element a dependent chain of flops_per_element FLOPs (FMA or "
        "separate multiply/add), 8 elements per thread, read-modify-write of the working set; "
        "fp16/bf16 as f16x2/bf16x2 words (FLOPs per 16-bit value), int32 multiply-add = 2 ops";
    info_.axes = {
        // Defaults: all five; devices without bf16 arithmetic (cc < 8.0) skip bf16 with the
        // reason from unsupported_reason().
        choice_axis("precision", "fp64, fp32, fp16 (f16x2), bf16 (bf16x2, cc >= 8.0) or int32 arithmetic",
                    precision_texts()),
        choice_axis("form", "fma: fused multiply-add; nofma: separate multiply and add", {"fma", "nofma"}),
        // A Choice, as on the CPU: only the chain lengths that have a compiled kernel.
        choice_axis("flops_per_element",
                    "FLOPs per element and pass (ERT's FLOP; per 16-bit value for fp16/bf16, "
                    "integer operations for int32): the arithmetic intensity",
                    chain_length_texts()),
        // 0 (default): the larger of 64 MiB and 4x the device's L2 (flops_working_set_bytes), so
        // the low-intensity points stream from device memory; 64 MiB is several waves of
        // resident blocks on every GPU (an H100 wave holds 17 MB of FP64) and launches of
        // milliseconds even at K=1024 on parts with slow FP64. sweep.csv records the bytes used.
        numeric_axis("working_set_bytes", AxisType::Bytes,
                     "bytes of the array the chains update; 0: the larger of 64 MiB and 4x the device's L2", 0, 1e12,
                     {"0"}),
    };
    info_.feeds = {precision_form_feed()};
    info_.fleet = fp64_fma_aggregate();
  }

  const ProbeInfo& info() const override { return info_; }

  std::string unsupported_reason(const Params& p, const DeviceInfo& dev) const override {
    if (param_text(p, "precision") != "bf16") return {};
    auto it = dev.extra.find("compute_capability");
    int major = 0, minor = 0;
    if (it == dev.extra.end() || !parse_compute_capability(it->second, major, minor))
      return "flops: precision=bf16 needs compute capability 8.0 or newer, and the device's is "
             "unknown";
    if (major < 8)
      return "flops: precision=bf16 needs compute capability 8.0 or newer (bf16x2 arithmetic); "
             "the device has " +
             it->second;
    return {};
  }

  // The device is not known here: for the default (0), the array of the largest L2 the tables
  // name (beyond_l2_bytes), an upper bound of what prepare() allocates on every GPU they name.
  std::uint64_t footprint_bytes(const Params& p) const override {
    return flops_working_set_bytes(static_cast<std::uint64_t>(param_int(p, "working_set_bytes")), 0);
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& dev) const override {
    const int k = static_cast<int>(param_int(p, "flops_per_element"));
    const FlopForm form = param_text(p, "form") == "fma" ? FlopForm::Fma : FlopForm::NoFma;
    const std::uint64_t ws =
        flops_working_set_bytes(static_cast<std::uint64_t>(param_int(p, "working_set_bytes")), cache_bytes(dev, "L2"));
    const std::string& precision = param_text(p, "precision");
    if (precision == "fp64") return std::make_unique<FlopsPoint<double>>(precision, k, form, ws, dev);
    if (precision == "fp32") return std::make_unique<FlopsPoint<float>>(precision, k, form, ws, dev);
    if (precision == "fp16") return std::make_unique<FlopsPoint<F16x2>>(precision, k, form, ws, dev);
    if (precision == "bf16") return std::make_unique<FlopsPoint<Bf16x2>>(precision, k, form, ws, dev);
    if (precision == "int32") return std::make_unique<FlopsPoint<std::uint32_t>>(precision, k, form, ws, dev);
    throw std::invalid_argument("flops: precision '" + precision + "' is not fp64, fp32, fp16, bf16 or int32");
  }

  // FP16/BF16/INT32 peaks (FP64/FP32 come from the backend): results per clock per SM of the
  // CUDA C++ Programming Guide's arithmetic-instruction throughput table (kernels/cuda/backend/gpu_arith_rates.hpp)
  // x SMs x (2 for FMA) x the measured SM clock. A ceiling without a rate is said, not left
  // blank: theoretical_unknown.<ceiling> with the table's reason (as the tensor probe records it;
  // the fitter lists it under missing: beside the measured ceiling).
  void add_theoretical_peaks(DeviceInfo& dev) const override {
    auto it = dev.extra.find("compute_capability");
    int major = 0, minor = 0;
    if (it == dev.extra.end() || !parse_compute_capability(it->second, major, minor)) return;
    const bool measured = dev.clock_measured_mhz > 0;
    const double mhz = measured ? dev.clock_measured_mhz : dev.clock_max_mhz;
    if (mhz <= 0 || dev.compute_units <= 0) return;
    for (const auto& [name, peak] :
         gpu_arith_peaks(major, minor, dev.compute_units, mhz, measured ? "measured" : "nominal")) {
      dev.theoretical_gflops[name] = peak.gflops;
      dev.theoretical_basis[name] = peak.basis;
    }
    for (const auto& [name, why] : gpu_arith_unknown(major, minor)) say_peak_unknown(dev, name, why);
  }

 private:
  ProbeInfo info_;
};

}  // namespace

RP_REGISTER_PROBE(CudaFlopsProbe);

}  // namespace roofprobe::cuda
