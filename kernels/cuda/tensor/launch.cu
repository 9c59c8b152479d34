#include "kernels/cuda/tensor/launch.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <utility>
#include <stdexcept>
#include <string>

#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/tensor/kernel.cuh"
#include "kernels/cuda/tensor/tcgen05_kernel.cuh"
#include "kernels/cuda/tensor/wgmma_kernel.cuh"

namespace roofprobe::cuda::tensor_probe {
namespace {

using MmaKernel = void (*)(const std::uint32_t*, const std::uint32_t*, const std::uint32_t*, const std::uint32_t*,
                           std::uint32_t*, int*, int);
using WmmaKernel = void (*)(const void*, const void*, const void*, const void*, void*, int*, int);

using WgmmaKernel = void (*)(const std::uint16_t*, const std::uint16_t*, const float*, float*, int*, int);

template <TensorType T>
struct KernelsOf {
  static constexpr MmaKernel mma = &tensor_mma_kernel<T>;
  // Hopper's f64 shapes: fp64 only (for the other types the kernel compiles to its marker).
  static constexpr MmaKernel mma_k4 = &tensor_mma_kernel<T, TensorApi::MmaM16n8k4>;
  static constexpr MmaKernel mma_k8 = &tensor_mma_kernel<T, TensorApi::MmaM16n8k8>;
  static constexpr MmaKernel mma_k16 = &tensor_mma_kernel<T, TensorApi::MmaM16n8k16>;
  static constexpr WmmaKernel wmma = &tensor_wmma_kernel<T>;
  static constexpr WgmmaKernel wgmma = &tensor_wgmma_kernel<T>;
  static constexpr WgmmaKernel wgmma_rs = &tensor_wgmma_rs_kernel<T>;
  static constexpr WgmmaKernel tcgen05 = &tensor_tcgen05_kernel<T>;  // the same buffers
};

}  // namespace

// The kernel of (type, api), as a const void* for cudaFuncGetAttributes / occupancy queries.
const void* kernel_of(TensorType t, TensorApi api) {
  auto pick = [api](auto kernels) -> const void* {
    using K = decltype(kernels);
    switch (api) {
      case TensorApi::Mma:
        return reinterpret_cast<const void*>(K::mma);
      case TensorApi::Wmma:
        return reinterpret_cast<const void*>(K::wmma);
      case TensorApi::Wgmma:
        return reinterpret_cast<const void*>(K::wgmma);
      case TensorApi::WgmmaRs:
        return reinterpret_cast<const void*>(K::wgmma_rs);
      case TensorApi::Tcgen05:
        return reinterpret_cast<const void*>(K::tcgen05);
      case TensorApi::MmaM16n8k4:
        return reinterpret_cast<const void*>(K::mma_k4);
      case TensorApi::MmaM16n8k8:
        return reinterpret_cast<const void*>(K::mma_k8);
      case TensorApi::MmaM16n8k16:
        return reinterpret_cast<const void*>(K::mma_k16);
    }
    return static_cast<const void*>(nullptr);
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
  switch (api) {
    case TensorApi::Mma:
      return "mma";
    case TensorApi::Wmma:
      return "wmma";
    case TensorApi::Wgmma:
      return "wgmma";
    case TensorApi::WgmmaRs:
      return "wgmma.rs";
    case TensorApi::Tcgen05:
      return "tcgen05";
    case TensorApi::MmaM16n8k4:
      return "mma.m16n8k4";
    case TensorApi::MmaM16n8k8:
      return "mma.m16n8k8";
    case TensorApi::MmaM16n8k16:
      return "mma.m16n8k16";
  }
  return "?";
}

std::string instruction_ptx(TensorType t, TensorApi api) {
  // d.a.b.c element types of the mma.sync spelling, per type.
  static const char* const mma_types[kTensorTypeCount] = {"f32.f16.f16.f32",   "f16.f16.f16.f16", "f32.bf16.bf16.f32",
                                                          "f32.tf32.tf32.f32", "s32.s8.s8.s32",   "f64.f64.f64.f64",
                                                          "f32.e4m3.e4m3.f32"};
  static const char* const inputs[kTensorTypeCount] = {"f16", "f16", "bf16", "tf32", "s8", "f64", "e4m3"};
  const TensorShape s = tensor_shape(t, api);
  const std::string shape = "m" + std::to_string(s.m) + "n" + std::to_string(s.n) + "k" + std::to_string(s.k);
  const int i = static_cast<int>(t);
  switch (api) {
    case TensorApi::Wmma:
      return "wmma.mma.sync.aligned.row.row." + shape + " (nvcuda::wmma, " + tensor_type_name(t) + ")";
    case TensorApi::Wgmma:
    case TensorApi::WgmmaRs:
      return "wgmma.mma_async.sync.aligned." + shape +
             (t == TensorType::Int8Int32  ? ".s32."
              : t == TensorType::Fp16Fp16 ? ".f16."
                                          : ".f32.") +
             inputs[i] + "." + inputs[i] +
             (api == TensorApi::WgmmaRs ? " (warpgroup, A from registers, sm_90a)" : " (warpgroup, sm_90a)");
    case TensorApi::Tcgen05:
      return std::string("tcgen05.mma.cta_group::1.kind::") +
             (t == TensorType::Tf32Fp32    ? "tf32 "
              : t == TensorType::Fp8Fp32   ? "f8f6f4 "
              : t == TensorType::Int8Int32 ? "i8 "
                                           : "f16 ") +
             std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " " + inputs[i] +
             " (tensor memory, sm_100a)";
    default:  // mma.sync, one shape per type (api=mma) or Hopper's f64 shapes
      return "mma.sync.aligned." + shape + ".row.col." + mma_types[i];
  }
}

// The paths that stage operands in shared memory (wgmma.rs: B only, A goes to registers) and
// whose accumulator is one tile per block (wgmma: a warpgroup's registers; tcgen05: tensor
// memory): same buffers, one block each.
bool tile_api(TensorApi api) { return tensor_wgmma_api(api) || api == TensorApi::Tcgen05; }

// Threads of one block, and of the unit that issues one instruction (a warp; a warpgroup; the
// CTA, for tcgen05, whose one issuing thread acts for all 128).
int block_threads(TensorApi api) {
  return tensor_wgmma_api(api) ? kWgmmaThreads : api == TensorApi::Tcgen05 ? kTcgen05Threads : kTensorBlock;
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
  for (int i = 0; i < kTensorApiCount; ++i) {
    if (a == api_name(static_cast<TensorApi>(i))) {
      *api = static_cast<TensorApi>(i);
      return;
    }
  }
  throw std::invalid_argument("tensor: api '" + a +
                              "' is not mma, wmma, wgmma, wgmma.rs, tcgen05, mma.m16n8k4, mma.m16n8k8 or mma.m16n8k16");
}

// Why the device (by compute capability) cannot run (t, api); empty when it can. Independent of
// the binary: binary_lacks_reason covers that.
std::string device_reason(TensorType t, TensorApi api, int cc, bool ignore_build) {
  const TensorShape s = tensor_shape(t, api);
  if (tensor_wgmma_api(api)) {
    if (s.min_cc == 0)
      return std::string(api == TensorApi::WgmmaRs
                             ? "wgmma with A from registers (api=wgmma.rs) has fp16.fp32 and bf16.fp32 only; "
                             : "the wgmma path has fp16.fp32, fp16.fp16, bf16.fp32, tf32.fp32, fp8.fp32 (e4m3) and "
                               "int8.int32 only; ") +
             tensor_type_name(t) + (tensor_wgmma_shape(t).m > 0 ? " runs with api=wgmma" : " runs with api=mma");
    if (cc == 0) return "unknown compute capability: the backend did not report it";
    if (cc != 90)
      return "wgmma is Hopper's (compute capability 9.0, sm_90a code); the device has " + cc_text(cc) +
             (cc == 100 ? " (api=tcgen05 is its full-rate path)" : "");
    return {};
  }
  if (api == TensorApi::Tcgen05) {
    if (s.min_cc == 0)
      return std::string(
                 "the tcgen05 path has fp16.fp32, bf16.fp32, tf32.fp32, fp8.fp32 (e4m3) and int8.int32 only; ") +
             tensor_type_name(t) + " runs with api=mma";
    if (cc == 0) return "unknown compute capability: the backend did not report it";
    if (cc != 100)
      return "tcgen05 is run here with sm_100a code, which only compute capability 10.0 (B200, GB200) runs; "
             "the device has " +
             cc_text(cc);
    return {};
  }
  if (tensor_mma_api(api) && api != TensorApi::Mma) {
    if (s.min_cc == 0)
      return std::string("api=") + api_name(api) + " is one of Hopper's f64 shapes: fp64.fp64 only; " +
             tensor_type_name(t) + " runs with api=mma";
    if (cc == 0) return "unknown compute capability: the backend did not report it";
    if (!tensor_mma_native(t, api, cc))
      return std::string("the f64 ") + api_name(api) +
             " is a tensor-core instruction of its own on compute capability 9.0 only (PTX ISA 7.8); "
             "the device has " +
             cc_text(cc) +
             (cc > 90 ? ", where ptxas splits it into DMMA.8x8x4, which api=mma measures"
                      : ", which lacks it (api=mma runs m8n8k4 from 8.0)");
    return {};
  }
  if (s.min_cc == 0) return "WMMA has no fp8 (e4m3) fragment type; fp8.fp32 runs with api=mma (sm_89 and newer)";
  if (t == TensorType::Fp8Fp32 && api == TensorApi::Mma && !RP_TENSOR_COMPILER_HAS_FP8_MMA && !ignore_build)
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

namespace {

// Whether the wgmma/tcgen05 kernel the device would run holds the instruction: only sm_90a/sm_100a
// code does, and cudaFuncGetAttributes cannot tell sm_90 from sm_90a, so a one-block launch with
// no iterations reports it (kTensorNotCompiled in `hits`). Asked once per process, type and api.
std::string tile_binary_lacks_reason(TensorType t, TensorApi api) {
  static std::map<std::pair<TensorType, TensorApi>, std::string> known;
  if (auto it = known.find({t, api}); it != known.end()) return it->second;
  const TensorShape s = tensor_shape(t, api);
  int first = 0;
  try {
    // 16-bit units: k elements of the type's width per row (32 bytes for wgmma, whatever the type).
    const std::size_t row_units = static_cast<std::size_t>(s.k) * tensor_input_bits(tensor_input(t)) / 16;
    DeviceBuffer<std::uint16_t> a(s.m * row_units * kTensorDataSets), b(s.n * row_units * kTensorDataSets);
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
  const std::string arch = tensor_wgmma_api(api) ? "90a" : "100a";
  return known[{t, api}] = first == kTensorNotCompiled
                               ? "this roofprobe binary has no sm_" + arch + " device code, which " + api_name(api) +
                                     " needs; rebuild with CMAKE_CUDA_ARCHITECTURES including " + arch + "-real" +
                                     (tensor_wgmma_api(api) ? " (the bundle preset has it)" : "")
                               : std::string();
}

}  // namespace

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

}  // namespace roofprobe::cuda::tensor_probe
