// Probe "tensor" on the CUDA backend: dense tensor-core throughput per input.accumulate type,
// with warp-level mma.sync (inline PTX) or WMMA. Each warp keeps kTensorChains accumulators busy
// with MMAs on random register-resident operands (tensor_kernel.cuh); nothing touches memory in
// the loop, so the rate is the tensor pipe's. Feeds one compute ceiling per type,
// "TENSOR.FP16.FP32", ..., with the warp-level instruction count, from which the fitter derives
// instructions_gips and flops_per_instruction.
//
// Hopper: mma.sync reaches only part of the tensor cores' rate; the full rate needs the
// warpgroup-level wgmma (sm_90a): api=wgmma (tensor_wgmma.cuh) runs it for fp16.fp32 and
// bf16.fp32, one warpgroup per block, tiles staged once in shared memory. Its code exists only
// in a binary built for 90a (CMAKE_CUDA_ARCHITECTURES with 90a-real, as the bundle preset has
// it); a binary without it says so in unsupported_reason (a one-block launch reports whether the
// kernel it would run holds the instruction). The ceiling of a type is the fastest api; its
// params say which api that was.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"
#include "kernels/common/tensor_shapes.hpp"
#include "kernels/cuda/cuda_support.hpp"
#include "kernels/cuda/probe_decl.hpp"
#include "kernels/cuda/tensor_kernel.cuh"
#include "kernels/cuda/tensor_tcgen05.cuh"
#include "kernels/cuda/tensor_wgmma.cuh"

namespace roofprobe::cuda {
namespace {

constexpr double kTargetLaunchSeconds = 4e-3;
// Where the device has no known peak for the type: an estimate only steers the launch length.
constexpr double kFallbackGflops = 50000;

using MmaKernel = void (*)(const std::uint32_t*, const std::uint32_t*, const std::uint32_t*, const std::uint32_t*,
                           std::uint32_t*, int*, int);
using WmmaKernel = void (*)(const void*, const void*, const void*, const void*, void*, int*, int);

using WgmmaKernel = void (*)(const std::uint16_t*, const std::uint16_t*, const float*, float*, int*, int);

template <TensorType T>
struct KernelsOf {
  static constexpr MmaKernel mma = &tensor_mma_kernel<T>;
  static constexpr WmmaKernel wmma = &tensor_wmma_kernel<T>;
  static constexpr WgmmaKernel wgmma = &tensor_wgmma_kernel<T>;
  static constexpr WgmmaKernel tcgen05 = &tensor_tcgen05_kernel<T>;  // the same buffers
};

// The kernel of (type, api), as a const void* for cudaFuncGetAttributes / occupancy queries.
const void* kernel_of(TensorType t, TensorApi api) {
  auto pick = [api](auto kernels) -> const void* {
    using K = decltype(kernels);
    return api == TensorApi::Mma     ? reinterpret_cast<const void*>(K::mma)
           : api == TensorApi::Wmma  ? reinterpret_cast<const void*>(K::wmma)
           : api == TensorApi::Wgmma ? reinterpret_cast<const void*>(K::wgmma)
                                     : reinterpret_cast<const void*>(K::tcgen05);
  };
  switch (t) {
    case TensorType::Fp16Fp32:
      return pick(KernelsOf<TensorType::Fp16Fp32>{});
    case TensorType::Fp16Fp16:
      return pick(KernelsOf<TensorType::Fp16Fp16>{});
    case TensorType::Bf16Fp32:
      return pick(KernelsOf<TensorType::Bf16Fp32>{});
    case TensorType::Tf32Fp32:
      return pick(KernelsOf<TensorType::Tf32Fp32>{});
    case TensorType::Int8Int32:
      return pick(KernelsOf<TensorType::Int8Int32>{});
    case TensorType::Fp64Fp64:
      return pick(KernelsOf<TensorType::Fp64Fp64>{});
    case TensorType::Fp8Fp32:
      return pick(KernelsOf<TensorType::Fp8Fp32>{});
  }
  return nullptr;
}

const char* api_name(TensorApi api) {
  return api == TensorApi::Mma     ? "mma"
         : api == TensorApi::Wmma  ? "wmma"
         : api == TensorApi::Wgmma ? "wgmma"
                                   : "tcgen05";
}

// The paths whose operands are staged in shared memory and whose accumulator is one tile per
// block (wgmma: a warpgroup's registers; tcgen05: tensor memory): same buffers, one block each.
bool tile_api(TensorApi api) { return api == TensorApi::Wgmma || api == TensorApi::Tcgen05; }

// Threads of one block, and of the unit that issues one instruction (a warp; a warpgroup; the
// CTA, for tcgen05, whose one issuing thread acts for all 128).
int block_threads(TensorApi api) {
  return api == TensorApi::Wgmma ? kWgmmaThreads : api == TensorApi::Tcgen05 ? kTcgen05Threads : kTensorBlock;
}
int issuer_threads(TensorApi api) { return tile_api(api) ? block_threads(api) : 32; }

std::string upper(std::string s) {
  for (char& ch : s) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
  return s;
}

std::string ceiling_name(TensorType t) { return "TENSOR." + upper(tensor_type_name(t)); }

std::string cc_text(int cc) { return std::to_string(cc / 10) + "." + std::to_string(cc % 10); }

// "9.0" -> 90, "12.0" -> 120; 0 when absent or malformed.
int device_cc(const DeviceInfo& dev) {
  auto it = dev.extra.find("compute_capability");
  if (it == dev.extra.end()) return 0;
  int major = 0, minor = 0;
  if (std::sscanf(it->second.c_str(), "%d.%d", &major, &minor) != 2) return 0;
  return major * 10 + minor;
}

std::string point_text(TensorType t, TensorApi api) {
  return std::string("tensor: type=") + tensor_type_name(t) + " api=" + api_name(api);
}

void parse_point(const Params& p, TensorType* t, TensorApi* api) {
  const std::string& type = param_text(p, "type");
  if (!parse_tensor_type(type, t))
    throw std::invalid_argument("tensor: type '" + type + "' is not a known input.accumulate type");
  const std::string& a = param_text(p, "api");
  if (a == "mma") {
    *api = TensorApi::Mma;
  } else if (a == "wmma") {
    *api = TensorApi::Wmma;
  } else if (a == "wgmma") {
    *api = TensorApi::Wgmma;
  } else if (a == "tcgen05") {
    *api = TensorApi::Tcgen05;
  } else {
    throw std::invalid_argument("tensor: api '" + a + "' is not mma, wmma, wgmma or tcgen05");
  }
}

// Why the device (by compute capability) cannot run (t, api); empty when it can. Independent of
// the binary: binary_lacks_reason covers that.
std::string device_reason(TensorType t, TensorApi api, int cc) {
  const TensorShape s = tensor_shape(t, api);
  if (api == TensorApi::Wgmma) {
    if (s.min_cc == 0)
      return std::string("the wgmma path has fp16.fp32 and bf16.fp32 only; ") + tensor_type_name(t) +
             " runs with api=mma";
    if (cc == 0) return "unknown compute capability: the backend did not report it";
    if (cc != 90)
      return "wgmma is Hopper's (compute capability 9.0, sm_90a code); the device has " + cc_text(cc) +
             (cc == 100 ? " (api=tcgen05 is its full-rate path)" : "");
    return {};
  }
  if (api == TensorApi::Tcgen05) {
    if (s.min_cc == 0)
      return std::string("the tcgen05 path has fp16.fp32 and bf16.fp32 only; ") + tensor_type_name(t) +
             " runs with api=mma";
    if (cc == 0) return "unknown compute capability: the backend did not report it";
    if (cc != 100)
      return "tcgen05 is run here with sm_100a code, which only compute capability 10.0 (B200, GB200) runs; "
             "the device has " +
             cc_text(cc);
    return {};
  }
  if (s.min_cc == 0) return "WMMA has no fp8 (e4m3) fragment type; fp8.fp32 runs with api=mma (sm_89 and newer)";
  if (t == TensorType::Fp8Fp32 && api == TensorApi::Mma && !RP_TENSOR_COMPILER_HAS_FP8_MMA)
    return "this roofprobe was built with a CUDA older than 12.4, whose PTX ISA lacks the e4m3 "
           "mma.sync; rebuild with CUDA 12.4 or newer";
  if (cc == 0) return "unknown compute capability: the backend did not report it";
  if (cc < s.min_cc) {
    std::string why = std::string(tensor_type_name(t)) + " with api=" + api_name(api) + " needs compute capability " +
                      cc_text(s.min_cc) + " (m" + std::to_string(s.m) + "n" + std::to_string(s.n) + "k" +
                      std::to_string(s.k) + "); the device has " + cc_text(cc);
    if (api == TensorApi::Mma && tensor_wmma_shape(t).min_cc > 0 && cc >= tensor_wmma_shape(t).min_cc)
      why += " (api=wmma runs this type here)";
    return why;
  }
  if (api == TensorApi::Mma && !tensor_mma_native(t, cc))
    return std::string(tensor_type_name(t)) + " mma.sync is emulated on compute capability " + cc_text(cc) +
           " (ptxas turns it into f16 HMMA plus conversions: no fp8 tensor rate); " +
           "it runs natively on 8.9 and 12.x, this GPU's fp8 path is wgmma/tcgen05";
  return {};
}

// Empty when the binary holds device code with the instruction for the device; otherwise why
// not. Unknown (no device, error): empty, and prepare() checks again.
// Whether the wgmma/tcgen05 kernel the device would run holds the instruction: only sm_90a/sm_100a
// code does, and cudaFuncGetAttributes cannot tell sm_90 from sm_90a, so a one-block launch with
// no iterations reports it (kTensorNotCompiled in `hits`). Asked once per process, type and api.
std::string tile_binary_lacks_reason(TensorType t, TensorApi api) {
  static std::map<std::pair<TensorType, TensorApi>, std::string> known;
  if (auto it = known.find({t, api}); it != known.end()) return it->second;
  const TensorShape s = tensor_shape(t, api);
  int first = 0;
  try {
    DeviceBuffer<std::uint16_t> a(static_cast<std::size_t>(s.m) * s.k * kTensorDataSets),
        b(static_cast<std::size_t>(s.n) * s.k * kTensorDataSets);
    DeviceBuffer<float> c(static_cast<std::size_t>(s.m) * s.n * kTensorDataSets),
        out(static_cast<std::size_t>(s.m) * s.n);
    DeviceBuffer<int> hits(block_threads(api));
    RP_CUDA_CHECK(cudaMemset(a.get(), 0, a.bytes()));
    RP_CUDA_CHECK(cudaMemset(b.get(), 0, b.bytes()));
    RP_CUDA_CHECK(cudaMemset(c.get(), 0, c.bytes()));
    const std::uint16_t* a_ptr = a.get();
    const std::uint16_t* b_ptr = b.get();
    const float* c_ptr = c.get();
    float* out_ptr = out.get();
    int* hits_ptr = hits.get();
    int reps = 0;
    void* args[] = {&a_ptr, &b_ptr, &c_ptr, &out_ptr, &hits_ptr, &reps};
    RP_CUDA_CHECK(cudaLaunchKernel(kernel_of(t, api), dim3(1), dim3(block_threads(api)), args, 0, nullptr));
    RP_CUDA_CHECK(cudaDeviceSynchronize());
    RP_CUDA_CHECK(cudaMemcpy(&first, hits.get(), sizeof first, cudaMemcpyDeviceToHost));
  } catch (const std::runtime_error&) {
    cudaGetLastError();
    return {};  // no device to ask (prepare() asks again, and fails with the CUDA error)
  }
  const std::string arch = api == TensorApi::Wgmma ? "90a" : "100a";
  return known[{t, api}] = first == kTensorNotCompiled
                               ? "this roofprobe binary has no sm_" + arch + " device code, which " + api_name(api) +
                                     " needs; rebuild with CMAKE_CUDA_ARCHITECTURES including " + arch + "-real" +
                                     (api == TensorApi::Wgmma ? " (the bundle preset has it)" : "")
                               : std::string();
}

std::string binary_lacks_reason(TensorType t, TensorApi api) {
  if (tile_api(api)) return tile_binary_lacks_reason(t, api);
  cudaFuncAttributes attr{};
  const cudaError_t err = cudaFuncGetAttributes(&attr, kernel_of(t, api));
  if (err != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  // ptxVersion: the virtual architecture (compute_XY) the code the device runs was compiled
  // from, which is the __CUDA_ARCH__ the kernel's #if guards saw.
  const int need = tensor_shape(t, api).min_cc;
  if (attr.ptxVersion < need) {
    return "this roofprobe binary runs device code compiled for compute_" + std::to_string(attr.ptxVersion) +
           ", which lacks the " + tensor_type_name(t) + " " + api_name(api) + " instruction (needs compute_" +
           std::to_string(need) + "); rebuild with CMAKE_CUDA_ARCHITECTURES including this device";
  }
  return {};
}

// splitmix64: reproducible random operands per (type, api).
struct Random {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
};

// The values of one data set, as numbers (row-major), and what the host predicts per chain.
struct DataSet {
  std::vector<double> a;                  // m x k
  std::vector<double> b;                  // k x n
  std::vector<std::vector<double>> c;     // per chain, m x n
  std::vector<std::vector<double>> want;  // per chain, C + A*B
};

std::uint64_t encode_input_or_throw(TensorInput in, double v) {
  std::uint64_t bits = 0;
  if (!encode_tensor_input(in, v, &bits))
    throw std::logic_error("tensor: input value " + std::to_string(v) + " is not exact");
  return bits;
}

std::uint64_t encode_acc_or_throw(TensorAcc acc, double v) {
  std::uint64_t bits = 0;
  if (!encode_tensor_acc(acc, v, &bits))
    throw std::logic_error("tensor: accumulator value " + std::to_string(v) + " is not exact");
  return bits;
}

// Writes `bits` (width `bits_per` <= 64) at element `index` of a little-endian word array.
void put_bits(std::vector<std::uint32_t>& words, std::size_t base_word, int index, int bits_per, std::uint64_t bits) {
  if (bits_per == 64) {
    words[base_word + 2 * index] = static_cast<std::uint32_t>(bits);
    words[base_word + 2 * index + 1] = static_cast<std::uint32_t>(bits >> 32);
    return;
  }
  const int per_word = 32 / bits_per;
  const int shift = (index % per_word) * bits_per;
  const std::uint32_t mask = bits_per == 32 ? 0xffffffffu : ((1u << bits_per) - 1) << shift;
  std::uint32_t& w = words[base_word + index / per_word];
  w = (w & ~mask) | ((static_cast<std::uint32_t>(bits) << shift) & mask);
}

std::uint64_t get_bits(const std::vector<std::uint32_t>& words, std::size_t base_word, int index, int bits_per) {
  if (bits_per == 64)
    return words[base_word + 2 * index] | (static_cast<std::uint64_t>(words[base_word + 2 * index + 1]) << 32);
  const int per_word = 32 / bits_per;
  const int shift = (index % per_word) * bits_per;
  const std::uint64_t w = words[base_word + index / per_word] >> shift;
  return bits_per == 32 ? w : w & ((1u << bits_per) - 1);
}

class TensorPoint final : public PreparedPoint {
 public:
  TensorPoint(TensorType t, TensorApi api, const DeviceInfo& dev)
      : type_(t), api_(api), shape_(tensor_shape(t, api)), kernel_(kernel_of(t, api)) {
    use_selected_device();
    const std::string lacks = binary_lacks_reason(t, api);
    if (!lacks.empty()) throw std::runtime_error(point_text(t, api) + ": " + lacks);
    int sms = 0, per_sm = 0, device = 0;
    RP_CUDA_CHECK(cudaGetDevice(&device));
    RP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
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
  // instruction of 4 warps; flops_per_instruction in the machine file is then 2 x 64 x 128 x 16).
  Work work() const override {
    Work w;
    w.warp_instructions = static_cast<double>(warps_) * (api_ == TensorApi::Wgmma     ? wgmma_per_warpgroup(reps_)
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
    const char* issuer = api_ == TensorApi::Wgmma ? "warpgroup " : api_ == TensorApi::Tcgen05 ? "block " : "warp ";
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
    return api_ == TensorApi::Mma ? check_mma(out) : check_wmma(out);
  }

 private:
  double seconds_per_rep(const DeviceInfo& dev) const {
    auto it = dev.theoretical_gflops.find(ceiling_name(type_));
    const double gflops = it != dev.theoretical_gflops.end() && it->second > 0 ? it->second : kFallbackGflops;
    const double per_rep = api_ == TensorApi::Wgmma     ? kWgmmaSteps
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
    if (api_ == TensorApi::Mma) {
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

  // Fragments per lane, element e of lane l at tensor_mma_*_coord(type, l, e).
  void pack_mma() {
    const TensorInput in = tensor_input(type_);
    const TensorAcc acc = tensor_acc(type_);
    const int ib = tensor_input_bits(in), cb = tensor_acc_bits(acc);
    const int aw = tensor_a_words(type_), bw = tensor_b_words(type_), cw = tensor_c_words(type_);
    const int n = shape_.n, k = shape_.k;
    std::vector<std::uint32_t> a(kTensorDataSets * 32 * aw), b(kTensorDataSets * 32 * bw), bn(b.size()),
        c(static_cast<std::size_t>(kTensorDataSets) * kTensorChains * 32 * cw);
    for (int set = 0; set < kTensorDataSets; ++set) {
      const DataSet& s = sets_[set];
      for (int lane = 0; lane < 32; ++lane) {
        for (int e = 0; e < tensor_a_elements(shape_); ++e) {
          const FragCoord x = tensor_mma_a_coord(type_, lane, e);
          put_bits(a, (set * 32 + lane) * aw, e, ib, encode_input_or_throw(in, s.a[x.row * k + x.col]));
        }
        for (int e = 0; e < tensor_b_elements(shape_); ++e) {
          const FragCoord x = tensor_mma_b_coord(type_, lane, e);
          const double v = s.b[x.row * n + x.col];
          put_bits(b, (set * 32 + lane) * bw, e, ib, encode_input_or_throw(in, v));
          put_bits(bn, (set * 32 + lane) * bw, e, ib, encode_input_or_throw(in, -v));
        }
        for (int ch = 0; ch < kTensorChains; ++ch) {
          for (int e = 0; e < tensor_c_elements(shape_); ++e) {
            const FragCoord x = tensor_mma_c_coord(type_, lane, e);
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

  // wgmma, tcgen05: A as m x k and B as n x k (K-major) 16-bit elements, C as m x n f32, per set;
  // the kernel stages A and B into shared memory itself (wgmma_tile_offset).
  void pack_tile() {
    const TensorInput in = tensor_input(type_);
    const int m = shape_.m, n = shape_.n, k = shape_.k;
    std::vector<std::uint16_t> a(static_cast<std::size_t>(kTensorDataSets) * m * k),
        b(static_cast<std::size_t>(kTensorDataSets) * n * k);
    std::vector<float> c(static_cast<std::size_t>(kTensorDataSets) * m * n);
    for (int set = 0; set < kTensorDataSets; ++set) {
      const DataSet& s = sets_[set];
      for (int i = 0; i < m * k; ++i)
        a[set * m * k + i] = static_cast<std::uint16_t>(encode_input_or_throw(in, s.a[i]));
      for (int col = 0; col < n; ++col)
        for (int l = 0; l < k; ++l)
          b[(set * n + col) * k + l] = static_cast<std::uint16_t>(encode_input_or_throw(in, s.b[l * n + col]));
      for (int i = 0; i < m * n; ++i) c[set * m * n + i] = static_cast<float>(s.c[0][i]);
    }
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
    const int cb = tensor_acc_bits(acc), cw = tensor_c_words(type_), n = shape_.n;
    for (long long warp = 0; warp < warps_; ++warp) {
      const DataSet& s = sets_[warp % kTensorDataSets];
      for (int ch = 0; ch < kTensorChains; ++ch) {
        for (int lane = 0; lane < 32; ++lane) {
          const std::size_t base = ((warp * kTensorChains + ch) * 32 + lane) * cw;
          for (int e = 0; e < tensor_c_elements(shape_); ++e) {
            const FragCoord x = tensor_mma_c_coord(type_, lane, e);
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

class CudaTensorProbe final : public Probe {
 public:
  CudaTensorProbe() {
    info_.name = "tensor";
    info_.backend = "cuda";
    info_.description =
        "dense tensor-core throughput: per warp 4 independent accumulators, register-resident "
        "random operands, mma.sync (inline PTX) or WMMA of each input.accumulate type; on Hopper "
        "also wgmma per warpgroup, operands staged once in shared memory";
    info_.axes = {
        choice_axis("type", "input.accumulate element types (fp8 = e4m3)", all_type_names()),
        // Both by default: mma.sync is the faster path on sm_80+, WMMA the only one this probe
        // has for Volta and Turing. The ceiling of a type is the faster of the two.
        choice_axis("api",
                    "mma: mma.sync via inline PTX (sm_80+); wmma: nvcuda::wmma (sm_70+); wgmma: "
                    "wgmma.mma_async m64n128k16 per warpgroup (Hopper, sm_90a); tcgen05: tcgen05.mma "
                    "128x64x16 per CTA into tensor memory (B200/GB200, sm_100a); wgmma and tcgen05 for "
                    "fp16.fp32 and bf16.fp32",
                    {"mma", "wmma", "wgmma", "tcgen05"}),
    };
    FeedSpec feed;
    feed.kind = FeedKind::ComputeCeiling;
    feed.metric = "gflops";
    feed.series_axes = {"type"};
    feed.name_pattern = "TENSOR.{type}";
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
      if (peak.flops_per_clk_per_sm <= 0) continue;
      const std::string name = ceiling_name(t);
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
