// CPU FLOP probe (ERT style): every element of a small per-thread array, resident in L1,
// receives a data-dependent chain of K FLOPs per pass (kernels/common/flop_chain.hpp), FMA form
// or FADD/FMUL form, FP64 or FP32, on the widest SIMD vectors with 12-16 chains in flight per thread
// so the FMA latency is hidden. Arithmetic intensity is K / (2 x word bytes) FLOP/byte.
#include <omp.h>

#include <cstring>
#include <sstream>

#include "kernels/common/flop_chain.hpp"
#include "kernels/contract/compute_feeds.hpp"
#include "kernels/contract/probe.hpp"
#include "kernels/cpu/cpu_common.hpp"

namespace roofprobe::cpu {
namespace {

// Independent vectors per thread. FMA latency (4) x pipes (2) = 8 is the least that keeps Zen 3,
// Zen 4 or Golden Cove busy, with no slack: on Sapphire Rapids (two threads, 512-bit) 8 chains
// ran FP64 FMA at 189-192 GFLOP/s, 12 or 16 at 218-225. The chains, a and b
// must stay in registers: 16 + 2 of AVX-512's 32; 12 + 2 of AVX2's 16 (with 16 chains GCC kept
// two of them on the stack, a store-forwarding round trip per FMA).
#if defined(__AVX512F__) || defined(__aarch64__)
constexpr int kChains = 16;
#else
constexpr int kChains = 12;
#endif
// Vectors after the last whole block of kChains run in groups of kRemainderChains, then one by
// one: every element gets the vector chain (a scalar one is latency-bound, a fraction of the rate).
constexpr int kRemainderChains = 4;
// a and b are run-time values (see flop_chain.hpp): x converges to b / (1 - a), stays finite.
constexpr double kA = 1.0 - 1.0 / 4096.0;
constexpr double kB = 1.0 / 1024.0;

// Initial values fall into four classes; every element of a class ends with the same value, so
// the host predicts all elements from four scalar chains.
constexpr int kClasses = 4;
template <class T>
T initial_value(std::size_t i) {
  return static_cast<T>(1.0 + 0.25 * static_cast<double>(i % kClasses));
}

// N vectors of chains from data[i]: loaded, K FLOPs each, stored back.
template <int K, FlopForm Form, int N, class T, class V>
inline void chain_vectors(T* data, std::size_t i, V a, V b) {
  constexpr int lanes = kLanes<T>;
  V x[N];
  for (int j = 0; j < N; ++j) std::memcpy(&x[j], data + i + j * lanes, sizeof(V));
  flop_chain_interleaved<K, Form, VecOps>(x, a, b);
  for (int j = 0; j < N; ++j) std::memcpy(data + i + j * lanes, &x[j], sizeof(V));
}

template <class T, int K, FlopForm Form>
void chain_pass(T* data, Range r, std::int64_t reps) {
  using V = Vec<T>;
  constexpr std::size_t lanes = kLanes<T>;
  const V a = broadcast<T>(static_cast<T>(kA));
  const V b = broadcast<T>(static_cast<T>(kB));
  const std::size_t blocks_end = r.begin + r.size() / (kChains * lanes) * (kChains * lanes);
  const std::size_t groups_end =
      blocks_end + (r.end - blocks_end) / (kRemainderChains * lanes) * (kRemainderChains * lanes);
  const std::size_t vectors_end = groups_end + (r.end - groups_end) / lanes * lanes;
  for (std::int64_t rep = 0; rep < reps; ++rep) {
    for (std::size_t i = r.begin; i < blocks_end; i += kChains * lanes) chain_vectors<K, Form, kChains>(data, i, a, b);
    for (std::size_t i = blocks_end; i < groups_end; i += kRemainderChains * lanes)
      chain_vectors<K, Form, kRemainderChains>(data, i, a, b);
    for (std::size_t i = groups_end; i < vectors_end; i += lanes) chain_vectors<K, Form, 1>(data, i, a, b);
    for (std::size_t i = vectors_end; i < r.end; ++i)  // less than one vector: the same chain, scalar
      data[i] = flop_chain<K, Form, ScalarOps>(data[i], static_cast<T>(kA), static_cast<T>(kB));
  }
}

template <class T, int K, FlopForm Form>
T predict(std::size_t cls, std::int64_t total_reps) {
  T x = initial_value<T>(cls);
  for (std::int64_t rep = 0; rep < total_reps; ++rep)
    x = flop_chain<K, Form, ScalarOps>(x, static_cast<T>(kA), static_cast<T>(kB));
  return x;
}

template <class T>
class FlopsPoint final : public PreparedPoint {
 public:
  FlopsPoint(int k, FlopForm form, std::size_t bytes_per_thread, int threads) : k_(k), form_(form), threads_(threads) {
    n_ = bytes_per_thread / sizeof(T) * threads;
    data_ = allocate_untouched<T>(n_);
    first_touch(data_.get(), n_, threads_, [](std::size_t i) { return initial_value<T>(i); });
  }

  Work work() const override {
    Work w;
    double elements = static_cast<double>(n_) * reps_;
    w.flops = chain_flops_per_element(k_) * elements;
    w.bytes_read = elements * sizeof(T);
    w.bytes_written = elements * sizeof(T);
    w.working_set_bytes = static_cast<double>(n_ * sizeof(T));
    return w;
  }

  void launch() override {
    dispatch([&](auto k_const, auto form_const) {
      constexpr int K = decltype(k_const)::value;
      constexpr FlopForm F = decltype(form_const)::value;
      T* data = data_.get();
      const std::size_t n = n_;
      const std::int64_t reps = reps_;
      parallel_seconds_ = timed_parallel(threads_, [&](int t, int threads) {
        chain_pass<T, K, F>(data, chunk_of(n, threads, t, kLineElements<T>), reps);
      });
    });
    total_reps_ += reps_;
  }

  double parallel_seconds() const override { return parallel_seconds_; }

  Check verify() override {
    T expected[kClasses];
    dispatch([&](auto k_const, auto form_const) {
      for (int c = 0; c < kClasses; ++c)
        expected[c] = predict<T, decltype(k_const)::value, decltype(form_const)::value>(c, total_reps_);
    });
    for (std::size_t i = 0; i < n_; ++i) {
      if (std::memcmp(&data_[i], &expected[i % kClasses], sizeof(T)) != 0) {
        std::ostringstream msg;
        msg.precision(17);
        msg << "element " << i << " after " << total_reps_ << " passes: expected " << expected[i % kClasses] << ", got "
            << data_[i];
        return Check{false, msg.str()};
      }
    }
    return Check{};
  }

  void set_repetitions(std::int64_t reps) override { reps_ = reps; }
  std::int64_t repetitions() const override { return reps_; }
  // The FMA/noFMA ceilings' theoretical peaks use the clock these launches ran at: that of cores
  // running vector FMAs (or multiplies and adds) of the widest width the build targets.
  LaunchClock launch_clock() const override { return LaunchClock::vector_fp; }

 private:
  template <class F>
  void dispatch(F&& f) {
    bool known = dispatch_chain_length(k_, [&](auto k_const) {
      if (form_ == FlopForm::Fma)
        f(k_const, std::integral_constant<FlopForm, FlopForm::Fma>{});
      else
        f(k_const, std::integral_constant<FlopForm, FlopForm::NoFma>{});
    });
    if (!known) throw std::invalid_argument("flops_per_element " + std::to_string(k_) + " is not supported");
  }

  int k_;
  FlopForm form_;
  int threads_;
  std::size_t n_ = 0;
  Buffer<T> data_;
  std::int64_t reps_ = 1;
  std::int64_t total_reps_ = 0;
  double parallel_seconds_ = 0;
};

class CpuFlopsProbe final : public Probe {
 public:
  CpuFlopsProbe() {
    info_.name = "flops";
    info_.backend = "cpu";
    info_.description =
        "ERT-style arithmetic-intensity sweep: per element a dependent chain of K FLOPs (FMA or "
        "FADD/FMUL), SIMD with 12 (16 with AVX-512) chains per thread, L1-resident array";
    Axis precision{"precision", AxisType::Choice, "floating-point type", {"fp64", "fp32"}};
    precision.defaults = {"fp64", "fp32"};
    Axis form{"form", AxisType::Choice, "fma: fused multiply-add; nofma: FMUL + FADD only", {"fma", "nofma"}};
    form.defaults = {"fma", "nofma"};
    Axis flops{"flops_per_element", AxisType::Choice, "FLOPs per element per pass (ERT's FLOP)"};
    for (int k : kChainLengths) flops.choices.push_back(std::to_string(k));
    flops.defaults = flops.choices;
    Axis bytes{"bytes_per_thread", AxisType::Bytes, "array bytes per thread (keep it in L1)"};
    bytes.min = 1024;
    bytes.max = 1ull << 30;
    bytes.defaults = {"16384"};
    info_.axes = {precision, form, flops, bytes};
    info_.feeds = {precision_form_feed()};
    info_.fleet = fp64_fma_aggregate();
  }

  const ProbeInfo& info() const override { return info_; }

  std::uint64_t footprint_bytes(const Params& p) const override {
    return static_cast<std::uint64_t>(param_int(p, "bytes_per_thread"));
  }

  // Each OpenMP thread streams its own chunk, so a device of fewer threads runs the point on
  // fewer cores.
  bool runs_on_fewer_workers() const override { return true; }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& device) const override {
    int k = static_cast<int>(param_int(p, "flops_per_element"));
    FlopForm form = param_text(p, "form") == "fma" ? FlopForm::Fma : FlopForm::NoFma;
    auto bytes = static_cast<std::size_t>(param_int(p, "bytes_per_thread"));
    int threads = device.threads > 0 ? device.threads : 1;
    if (param_text(p, "precision") == "fp64") return std::make_unique<FlopsPoint<double>>(k, form, bytes, threads);
    return std::make_unique<FlopsPoint<float>>(k, form, bytes, threads);
  }

 private:
  ProbeInfo info_;
};

RP_REGISTER_PROBE(CpuFlopsProbe);

}  // namespace
}  // namespace roofprobe::cpu
