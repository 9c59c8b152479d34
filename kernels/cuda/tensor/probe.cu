// Probe "tensor" on the CUDA backend: dense tensor-core throughput per input.accumulate type,
// with warp-level mma.sync (inline PTX) or WMMA. Each warp keeps kTensorChains accumulators busy
// with MMAs on random register-resident operands (kernels/cuda/tensor/kernel.cuh); nothing touches memory in
// the loop, so the rate is the tensor pipe's. Feeds one compute ceiling per type,
// "TENSOR.FP16.FP32", ..., with the warp-level instruction count, from which the fitter derives
// instructions_gips and flops_per_instruction.
//
// Hopper: mma.sync reaches only part of the tensor cores' rate; the full rate needs the
// warpgroup-level wgmma (sm_90a): api=wgmma (kernels/cuda/tensor/wgmma_kernel.cuh) runs it for fp16.fp32,
// bf16.fp32, tf32.fp32 and fp8.fp32 (e4m3), one warpgroup per block, tiles staged once in shared memory. Its code
// exists only in a binary built for 90a (CMAKE_CUDA_ARCHITECTURES with 90a-real, as the bundle preset has it); a binary
// without it says so in unsupported_reason (a one-block launch reports whether the kernel it would run holds the
// instruction). The ceiling of a type is the fastest api; its `instruction` says which that was, and by_instruction
// keeps every api's own ceiling.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/contract/compute_feeds.hpp"
#include "kernels/contract/probe.hpp"
#include "kernels/cuda/tensor/model.hpp"
#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/backend/probe_decl.hpp"
#include "kernels/cuda/tensor/kernel.cuh"
#include "kernels/cuda/tensor/launch.hpp"
#include "kernels/cuda/tensor/operands.hpp"
#include "kernels/cuda/tensor/tcgen05_kernel.cuh"
#include "kernels/cuda/tensor/wgmma_kernel.cuh"

namespace roofprobe::cuda {

// mma.sync and WMMA keep their operands in registers; the wgmma and tcgen05 paths ("tensor.tile")
// stage their tiles in shared memory.
RP_CUDA_CARVEOUT("tensor", Carveout::MaxL1);
RP_CUDA_CARVEOUT("tensor.tile", Carveout::MaxShared);
namespace {

constexpr double kTargetLaunchSeconds = 4e-3;
// Where the device has no known peak for the type: an estimate only steers the launch length.
constexpr double kFallbackGflops = 50000;

using namespace tensor_probe;  // launch.hpp: kernels and reasons; operands.hpp: host operands

class TensorPoint final : public PreparedPoint {
 public:
  TensorPoint(TensorType t, TensorApi api, const DeviceInfo& dev)
      : type_(t), api_(api), shape_(tensor_shape(t, api)), kernel_(kernel_of(t, api)) {
    use_selected_device();
    const std::string lacks = binary_lacks_reason(t, api);
    if (!lacks.empty()) throw std::runtime_error(point_text(t, api) + ": " + lacks);
    set_carveout(kernel_, carveout_of(tile_api(api) ? "tensor.tile" : "tensor"), block_threads(api));
    // The grid fills the SMs the point runs on: the device's, or the energy phase's share.
    const int sms = sm_count(dev);
    int per_sm = 0;
    RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_, block_threads(api), 0));
    // tcgen05: each block allocates kTcgen05Columns of the SM's 512 tensor-memory columns; more
    // resident blocks would wait in tcgen05.alloc for another block's columns.
    if (api == TensorApi::Tcgen05) per_sm = std::min(per_sm, 512 / kTcgen05Columns);
    blocks_ = std::max(per_sm, 1) * sms;
    warps_ = static_cast<long long>(blocks_) * (block_threads(api) / issuer_threads(api));
    make_data();
    reps_ = reps_for(seconds_per_rep(dev), kTargetLaunchSeconds);
  }

  // Instructions: warp-level for mma.sync and WMMA, warpgroup-level for wgmma (one wgmma is one
  // instruction of 4 warps; flops_per_instruction in the machine file is then 2 x 64 x 128 x K).
  Work work() const override {
    Work w;
    w.warp_instructions = static_cast<double>(warps_) * (tensor_wgmma_api(api_)       ? wgmma_per_warpgroup(reps_)
                                                         : api_ == TensorApi::Tcgen05 ? tcgen05_per_cta(reps_)
                                                                                      : tensor_mmas_per_warp(reps_));
    w.flops = w.warp_instructions * tensor_flops_per_instruction(shape_);
    return w;  // no memory traffic worth counting: operands live in registers (wgmma: staged once)
  }

  void launch() override {
    if (tile_api(api_)) {
      void* args[] = {&a16_ptr_, &b16_ptr_, &c32_ptr_, &out32_ptr_, &hits_ptr_, &reps_};
      RP_CUDA_CHECK(cudaLaunchKernel(kernel_, dim3(blocks_), dim3(block_threads(api_)), args, 0, nullptr));
      RP_CUDA_CHECK(cudaGetLastError());
      last_reps_ = reps_;
      return;
    }
    void* args[] = {&a_ptr_, &b_ptr_, &bn_ptr_, &c_ptr_, &out_ptr_, &hits_ptr_, &reps_};
    RP_CUDA_CHECK(cudaLaunchKernel(kernel_, dim3(blocks_), dim3(kTensorBlock), args, 0, nullptr));
    RP_CUDA_CHECK(cudaGetLastError());
    last_reps_ = reps_;
  }

  void set_repetitions(std::int64_t reps) override { reps_ = clamp_reps(reps); }
  std::int64_t repetitions() const override { return reps_; }

  Check verify() override {
    RP_CUDA_CHECK(cudaDeviceSynchronize());
    if (last_reps_ < 0) return {false, point_text(type_, api_) + ": verify() before any launch"};
    const int per_issuer = issuer_threads(api_);
    const char* issuer = tensor_wgmma_api(api_) ? "warpgroup " : api_ == TensorApi::Tcgen05 ? "block " : "warp ";
    std::vector<int> hits(static_cast<std::size_t>(warps_) * per_issuer);
    RP_CUDA_CHECK(cudaMemcpy(hits.data(), hits_.get(), hits.size() * sizeof(int), cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < hits.size(); ++i) {
      if (hits[i] == kTensorNotCompiled)
        return {false, point_text(type_, api_) +
                           ": the kernel did not run, or the device code it ran was compiled without "
                           "the instruction"};
      if (hits[i] != last_reps_) {
        return {false, point_text(type_, api_) + ": " + issuer + std::to_string(i / per_issuer) + " thread " +
                           std::to_string(i % per_issuer) + " found its accumulator back at C in " +
                           std::to_string(hits[i]) + " of " + std::to_string(last_reps_) + " iterations"};
      }
    }
    if (tile_api(api_)) return check_tile();
    std::vector<std::uint32_t> out(out_.size());
    RP_CUDA_CHECK(cudaMemcpy(out.data(), out_.get(), out_.bytes(), cudaMemcpyDeviceToHost));
    return tensor_mma_api(api_) ? check_mma(out) : check_wmma(out);
  }

 private:
  double seconds_per_rep(const DeviceInfo& dev) const {
    auto it = dev.theoretical_gflops.find(ceiling_name(type_));
    const double gflops = it != dev.theoretical_gflops.end() && it->second > 0 ? it->second : kFallbackGflops;
    const double per_rep = tensor_wgmma_api(api_)       ? kWgmmaSteps
                           : api_ == TensorApi::Tcgen05 ? kTcgen05Steps
                                                        : kTensorSteps * kTensorChains;
    const double flops = static_cast<double>(warps_) * per_rep * tensor_flops_per_instruction(shape_);
    return flops / (gflops * 1e9);
  }

  // Random A, B, C per data set, their predicted results, and the device buffers in the layout
  // the api's kernel reads.
  void make_data() {
    const TensorInput in = tensor_input(type_);
    const TensorAcc acc = tensor_acc(type_);
    Random rng{0x7e450c0de0000000ull + static_cast<std::uint64_t>(type_) * 2 + static_cast<std::uint64_t>(api_)};
    const int m = shape_.m, n = shape_.n, k = shape_.k;
    sets_.resize(kTensorDataSets);
    for (DataSet& s : sets_) {
      s.a.resize(static_cast<std::size_t>(m) * k);
      s.b.resize(static_cast<std::size_t>(k) * n);
      for (double& v : s.a) v = tensor_input_value(in, rng.next());
      for (double& v : s.b) v = tensor_input_value(in, rng.next());
      const int chains = tile_api(api_) ? 1 : kTensorChains;  // wgmma, tcgen05: one accumulator
      s.c.assign(chains, std::vector<double>(static_cast<std::size_t>(m) * n));
      s.want = s.c;
      for (int ch = 0; ch < chains; ++ch) {
        for (double& v : s.c[ch]) v = tensor_acc_value(acc, rng.next());
        for (int i = 0; i < m; ++i) {
          for (int j = 0; j < n; ++j) {
            double sum = s.c[ch][i * n + j];
            for (int l = 0; l < k; ++l) sum += s.a[i * k + l] * s.b[l * n + j];
            s.want[ch][i * n + j] = sum;
            encode_acc_or_throw(acc, sum);  // the prediction itself must be exact
          }
        }
      }
    }
    if (tensor_mma_api(api_)) {
      pack_mma();
    } else if (api_ == TensorApi::Wmma) {
      pack_wmma();
    } else {
      pack_tile();
    }
    hits_ = DeviceBuffer<int>(static_cast<std::size_t>(warps_) * issuer_threads(api_));
    RP_CUDA_CHECK(cudaMemset(hits_.get(), 0xff, hits_.bytes()));
    a_ptr_ = a_.get();
    b_ptr_ = b_.get();
    bn_ptr_ = bn_.get();
    c_ptr_ = c_.get();
    out_ptr_ = out_.get();
    hits_ptr_ = hits_.get();
  }

  static DeviceBuffer<std::uint32_t> upload(const std::vector<std::uint32_t>& host) {
    DeviceBuffer<std::uint32_t> d(host.size());
    RP_CUDA_CHECK(cudaMemcpy(d.get(), host.data(), host.size() * 4, cudaMemcpyHostToDevice));
    return d;
  }

  // Fragments per lane, element e of lane l at tensor_mma_*_coord_for(type, api, l, e).
  void pack_mma() {
    const TensorInput in = tensor_input(type_);
    const TensorAcc acc = tensor_acc(type_);
    const int ib = tensor_input_bits(in), cb = tensor_acc_bits(acc);
    const int aw = tensor_a_words(type_, api_), bw = tensor_b_words(type_, api_), cw = tensor_c_words(type_, api_);
    const int n = shape_.n, k = shape_.k;
    std::vector<std::uint32_t> a(kTensorDataSets * 32 * aw), b(kTensorDataSets * 32 * bw), bn(b.size()),
        c(static_cast<std::size_t>(kTensorDataSets) * kTensorChains * 32 * cw);
    for (int set = 0; set < kTensorDataSets; ++set) {
      const DataSet& s = sets_[set];
      for (int lane = 0; lane < 32; ++lane) {
        for (int e = 0; e < tensor_a_elements(shape_); ++e) {
          const FragCoord x = tensor_mma_a_coord_for(type_, api_, lane, e);
          put_bits(a, (set * 32 + lane) * aw, e, ib, encode_input_or_throw(in, s.a[x.row * k + x.col]));
        }
        for (int e = 0; e < tensor_b_elements(shape_); ++e) {
          const FragCoord x = tensor_mma_b_coord_for(type_, api_, lane, e);
          const double v = s.b[x.row * n + x.col];
          put_bits(b, (set * 32 + lane) * bw, e, ib, encode_input_or_throw(in, v));
          put_bits(bn, (set * 32 + lane) * bw, e, ib, encode_input_or_throw(in, -v));
        }
        for (int ch = 0; ch < kTensorChains; ++ch) {
          for (int e = 0; e < tensor_c_elements(shape_); ++e) {
            const FragCoord x = tensor_mma_c_coord_for(type_, api_, lane, e);
            put_bits(c, ((set * kTensorChains + ch) * 32 + lane) * cw, e, cb,
                     encode_acc_or_throw(acc, s.c[ch][x.row * n + x.col]));
          }
        }
      }
    }
    a_ = upload(a);
    b_ = upload(b);
    bn_ = upload(bn);
    c_ = upload(c);
    out_ = DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(warps_) * kTensorChains * 32 * cw);
  }

  // Row-major matrices of elements (tensor_input_bits wide; tf32 as fp32 words).
  void pack_wmma() {
    const TensorInput in = tensor_input(type_);
    const TensorAcc acc = tensor_acc(type_);
    const int ib = tensor_input_bits(in), cb = tensor_acc_bits(acc);
    const int mk = shape_.m * shape_.k, kn = shape_.k * shape_.n, mn = shape_.m * shape_.n;
    std::vector<std::uint32_t> a(kTensorDataSets * mk * ib / 32), b(kTensorDataSets * kn * ib / 32), bn(b.size()),
        c(static_cast<std::size_t>(kTensorDataSets) * kTensorChains * mn * cb / 32);
    for (int set = 0; set < kTensorDataSets; ++set) {
      const DataSet& s = sets_[set];
      for (int i = 0; i < mk; ++i) put_bits(a, 0, set * mk + i, ib, encode_input_or_throw(in, s.a[i]));
      for (int i = 0; i < kn; ++i) {
        put_bits(b, 0, set * kn + i, ib, encode_input_or_throw(in, s.b[i]));
        put_bits(bn, 0, set * kn + i, ib, encode_input_or_throw(in, -s.b[i]));
      }
      for (int ch = 0; ch < kTensorChains; ++ch) {
        for (int i = 0; i < mn; ++i)
          put_bits(c, 0, (set * kTensorChains + ch) * mn + i, cb, encode_acc_or_throw(acc, s.c[ch][i]));
      }
    }
    a_ = upload(a);
    b_ = upload(b);
    bn_ = upload(bn);
    c_ = upload(c);
    out_ = DeviceBuffer<std::uint32_t>(static_cast<std::size_t>(warps_) * kTensorChains * mn * cb / 32);
  }

  // wgmma, tcgen05: A as m x k and B as n x k (K-major) elements packed little-endian into
  // 16-bit units (2 units per tf32, 2 e4m3 per unit), C as m x n f32, per set; the kernel stages A
  // and B into shared memory itself (wgmma_tile_offset, in units).
  void pack_tile() {
    const TensorInput in = tensor_input(type_);
    const int ib = tensor_input_bits(in);
    const int m = shape_.m, n = shape_.n, k = shape_.k;
    std::vector<std::uint32_t> a_words(static_cast<std::size_t>(kTensorDataSets) * m * k * ib / 32),
        b_words(static_cast<std::size_t>(kTensorDataSets) * n * k * ib / 32);
    std::vector<float> c(static_cast<std::size_t>(kTensorDataSets) * m * n);
    for (int set = 0; set < kTensorDataSets; ++set) {
      const DataSet& s = sets_[set];
      for (int i = 0; i < m * k; ++i) put_bits(a_words, 0, set * m * k + i, ib, encode_input_or_throw(in, s.a[i]));
      for (int col = 0; col < n; ++col)
        for (int l = 0; l < k; ++l)
          put_bits(b_words, 0, (set * n + col) * k + l, ib, encode_input_or_throw(in, s.b[l * n + col]));
      for (int i = 0; i < m * n; ++i) c[set * m * n + i] = static_cast<float>(s.c[0][i]);
    }
    const std::vector<std::uint16_t> a = tile_units(a_words), b = tile_units(b_words);
    a16_ = DeviceBuffer<std::uint16_t>(a.size());
    b16_ = DeviceBuffer<std::uint16_t>(b.size());
    c32_ = DeviceBuffer<float>(c.size());
    RP_CUDA_CHECK(cudaMemcpy(a16_.get(), a.data(), a16_.bytes(), cudaMemcpyHostToDevice));
    RP_CUDA_CHECK(cudaMemcpy(b16_.get(), b.data(), b16_.bytes(), cudaMemcpyHostToDevice));
    RP_CUDA_CHECK(cudaMemcpy(c32_.get(), c.data(), c32_.bytes(), cudaMemcpyHostToDevice));
    out32_ = DeviceBuffer<float>(static_cast<std::size_t>(blocks_) * m * n);
    a16_ptr_ = a16_.get();
    b16_ptr_ = b16_.get();
    c32_ptr_ = c32_.get();
    out32_ptr_ = out32_.get();
  }

  Check check_tile() const {
    const int mn = shape_.m * shape_.n;
    std::vector<float> out(out32_.size());
    RP_CUDA_CHECK(cudaMemcpy(out.data(), out32_.get(), out32_.bytes(), cudaMemcpyDeviceToHost));
    for (long long block = 0; block < blocks_; ++block) {
      const DataSet& s = sets_[block % kTensorDataSets];
      for (int i = 0; i < mn; ++i)
        if (!(static_cast<double>(out[block * mn + i]) == s.want[0][i]))
          return mismatch(block, 0, i / shape_.n, i % shape_.n, s.want[0][i], out[block * mn + i]);
    }
    return {};
  }

  Check mismatch(long long warp, int ch, int row, int col, double want, double got) const {
    char text[320];
    std::snprintf(text, sizeof text, "%s: %s %lld chain %d element (%d,%d): expected C + A*B = %.17g, got %.17g",
                  point_text(type_, api_).c_str(), tile_api(api_) ? "block" : "warp", warp, ch, row, col, want, got);
    return {false, text};
  }

  Check check_mma(const std::vector<std::uint32_t>& out) const {
    const TensorAcc acc = tensor_acc(type_);
    const int cb = tensor_acc_bits(acc), cw = tensor_c_words(type_, api_), n = shape_.n;
    for (long long warp = 0; warp < warps_; ++warp) {
      const DataSet& s = sets_[warp % kTensorDataSets];
      for (int ch = 0; ch < kTensorChains; ++ch) {
        for (int lane = 0; lane < 32; ++lane) {
          const std::size_t base = ((warp * kTensorChains + ch) * 32 + lane) * cw;
          for (int e = 0; e < tensor_c_elements(shape_); ++e) {
            const FragCoord x = tensor_mma_c_coord_for(type_, api_, lane, e);
            const double got = decode_tensor_acc(acc, get_bits(out, base, e, cb));
            const double want = s.want[ch][x.row * n + x.col];
            if (!(got == want)) return mismatch(warp, ch, x.row, x.col, want, got);
          }
        }
      }
    }
    return {};
  }

  Check check_wmma(const std::vector<std::uint32_t>& out) const {
    const TensorAcc acc = tensor_acc(type_);
    const int cb = tensor_acc_bits(acc), mn = shape_.m * shape_.n;
    for (long long warp = 0; warp < warps_; ++warp) {
      const DataSet& s = sets_[warp % kTensorDataSets];
      for (int ch = 0; ch < kTensorChains; ++ch) {
        for (int i = 0; i < mn; ++i) {
          const int index = static_cast<int>((warp * kTensorChains + ch) * mn + i);
          const double got = decode_tensor_acc(acc, get_bits(out, 0, index, cb));
          if (!(got == s.want[ch][i])) return mismatch(warp, ch, i / shape_.n, i % shape_.n, s.want[ch][i], got);
        }
      }
    }
    return {};
  }

  TensorType type_;
  TensorApi api_;
  TensorShape shape_;
  const void* kernel_;
  int blocks_ = 0;
  long long warps_ = 0;
  int reps_ = 1;
  int last_reps_ = -1;  // reps of the latest launch: each launch starts again from C
  std::vector<DataSet> sets_;
  DeviceBuffer<std::uint32_t> a_, b_, bn_, c_, out_;
  DeviceBuffer<int> hits_;
  DeviceBuffer<std::uint16_t> a16_, b16_;  // wgmma, tcgen05
  DeviceBuffer<float> c32_, out32_;
  // Kernel arguments (cudaLaunchKernel takes their addresses).
  const std::uint32_t* a_ptr_ = nullptr;
  const std::uint32_t* b_ptr_ = nullptr;
  const std::uint32_t* bn_ptr_ = nullptr;
  const std::uint32_t* c_ptr_ = nullptr;
  std::uint32_t* out_ptr_ = nullptr;
  int* hits_ptr_ = nullptr;
  const std::uint16_t* a16_ptr_ = nullptr;
  const std::uint16_t* b16_ptr_ = nullptr;
  const float* c32_ptr_ = nullptr;
  float* out32_ptr_ = nullptr;
};

std::vector<std::string> all_type_names() {
  std::vector<std::string> v;
  for (int i = 0; i < kTensorTypeCount; ++i) v.push_back(tensor_type_name(static_cast<TensorType>(i)));
  return v;
}

std::vector<std::string> all_api_names() {
  std::vector<std::string> v;
  for (int i = 0; i < kTensorApiCount; ++i) v.push_back(api_name(static_cast<TensorApi>(i)));
  return v;
}

class CudaTensorProbe final : public Probe {
 public:
  CudaTensorProbe() {
    info_.name = "tensor";
    info_.backend = "cuda";
    info_.description =
        "dense tensor-core throughput: per warp 4 independent accumulators, register-resident "
        "random operands, mma.sync (inline PTX) or WMMA of each input.accumulate type; on Hopper "
        "also wgmma per warpgroup (operands staged once in shared memory, or A in registers: "
        "wgmma.rs), on B200 tcgen05 per CTA into tensor memory";
    info_.axes = {
        choice_axis("type", "input.accumulate element types (fp8 = e4m3)", all_type_names()),
        // All by default: mma.sync is the faster path on sm_80+, WMMA the only one this probe
        // has for Volta and Turing, wgmma and tcgen05 the full-rate paths of Hopper and B200,
        // and Hopper's f64 shapes show which of them reaches its FP64 tensor rate. The ceiling of
        // a type is the fastest; points a device cannot run are skipped with the reason.
        choice_axis("api",
                    "mma: mma.sync via inline PTX (sm_80+); wmma: nvcuda::wmma (sm_70+); wgmma: "
                    "wgmma.mma_async m64n128 per warpgroup (Hopper, sm_90a); wgmma.rs: the same with A from "
                    "registers (fp16.fp32, bf16.fp32); tcgen05: tcgen05.mma "
                    "128x64xK per CTA into tensor memory (B200/GB200, sm_100a); wgmma for fp16.fp32, "
                    "fp16.fp16, bf16.fp32, tf32.fp32, fp8.fp32 and int8.int32, tcgen05 for fp16.fp32, bf16.fp32, "
                    "tf32.fp32, fp8.fp32 and int8.int32; "
                    "mma.m16n8k4, "
                    "mma.m16n8k8, "
                    "mma.m16n8k16: Hopper's f64 "
                    "mma.sync shapes (fp64.fp64, compute capability 9.0)",
                    all_api_names()),
    };
    FeedSpec feed = compute_ceiling_feed({"type"}, "TENSOR.{type}");
    // One ceiling per type, the fastest instruction's (what plots and exports use); every
    // instruction's own ceiling is kept beside it under by_instruction.
    feed.instruction_axis = "api";
    // The instruction of every (type, api) point the probe has, as PTX writes it.
    for (int i = 0; i < kTensorTypeCount; ++i)
      for (int a = 0; a < kTensorApiCount; ++a) {
        const auto t = static_cast<TensorType>(i);
        const auto api = static_cast<TensorApi>(a);
        if (tensor_shape(t, api).m > 0)
          feed.instruction_text[params_to_string({{"api", api_name(api)}, {"type", tensor_type_name(t)}})] =
              instruction_ptx(t, api);
      }
    info_.feeds = {feed};
  }

  const ProbeInfo& info() const override { return info_; }

  std::string unsupported_reason(const Params& p, const DeviceInfo& dev) const override {
    TensorType t{};
    TensorApi api{};
    parse_point(p, &t, &api);
    const std::string why = device_reason(t, api, device_cc(dev));
    if (!why.empty()) return why;
    return binary_lacks_reason(t, api);
  }

  // Operands and results of at most 256 SMs x 2048 resident threads: 4 chains x 1 KiB (a WMMA
  // 16x16 fp32 accumulator) per warp, plus the hit counts; the data sets are a few KiB.
  std::uint64_t footprint_bytes(const Params&) const override {
    const std::uint64_t warps = 256ull * 2048 / 32;
    return warps * (kTensorChains * 1024 + 32 * sizeof(int)) + (1u << 20);
  }

  // A type the api has no shape for, or an api of another architecture, does not exist here; an
  // unknown device (compute capability 0) is planned and its reason said under missing:.
  bool exists_on(const Params& p, const DeviceInfo& dev) const override {
    TensorType t{};
    TensorApi api{};
    parse_point(p, &t, &api);
    const int cc = device_cc(dev);
    const std::string why = device_reason(t, api, cc, /*ignore_build=*/true);
    return why.empty() || (cc == 0 && why.rfind("unknown compute capability", 0) == 0);
  }

  std::unique_ptr<PreparedPoint> prepare(const Params& p, const DeviceInfo& dev) const override {
    TensorType t{};
    TensorApi api{};
    parse_point(p, &t, &api);
    const std::string why = device_reason(t, api, device_cc(dev));
    if (!why.empty()) throw std::invalid_argument(point_text(t, api) + ": " + why);
    return std::make_unique<TensorPoint>(t, api, dev);
  }

  void add_theoretical_peaks(DeviceInfo& dev) const override {
    const int cc = device_cc(dev);
    const double mhz = dev.clock_measured_mhz > 0 ? dev.clock_measured_mhz : dev.clock_max_mhz;
    const char* clock_kind = dev.clock_measured_mhz > 0 ? "measured" : "nominal";
    if (cc == 0 || mhz <= 0 || dev.compute_units <= 0) return;
    for (int i = 0; i < kTensorTypeCount; ++i) {
      const auto t = static_cast<TensorType>(i);
      const TensorPeak peak = tensor_peak_per_sm(t, cc, tensor_part_of(dev.name.c_str()));
      const std::string name = ceiling_name(t);
      if (peak.flops_per_clk_per_sm <= 0) {
        // Said, not left blank, where the device runs the type (the fitter lists it under
        // missing: beside the measured ceiling); a type it cannot run says so in the plan.
        if (!device_reason(t, TensorApi::Mma, cc).empty()) continue;
        // The table row's own reason where it gives one ("unknown: ..."), else the generic one.
        const std::string own = peak.source;
        say_peak_unknown(dev, name,
                         own.rfind("unknown: ", 0) == 0
                             ? own
                             : "the dense tensor table (kernels/cuda/tensor/model.hpp) has no figure for this type "
                               "on compute capability " +
                                   cc_text(cc));
        continue;
      }
      dev.theoretical_gflops[name] = dev.compute_units * peak.flops_per_clk_per_sm * mhz * 1e-3;
      char clock[64];
      std::snprintf(clock, sizeof clock, "%.1f MHz (%s SM clock)", mhz, clock_kind);
      dev.theoretical_basis[name] =
          std::to_string(dev.compute_units) + " SMs x " + std::to_string(static_cast<int>(peak.flops_per_clk_per_sm)) +
          " dense FLOP/clk/SM (cc " + cc_text(cc) + "; " +
          (peak.geforce_half_rate ? "GeForce: half the rate of " : "") + peak.source + ") x " + clock;
    }
  }

 private:
  ProbeInfo info_;
};

}  // namespace

RP_REGISTER_PROBE(CudaTensorProbe);

}  // namespace roofprobe::cuda
