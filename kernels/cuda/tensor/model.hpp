// Host+device description of the tensor-core probe (kernels/cuda/tensor/probe.cu): the instruction shape
// of each input.accumulate type for mma.sync and for WMMA, the FLOPs one warp instruction does,
// the warp-level MMA count of a launch, which matrix element each lane holds in an mma.sync
// fragment (PTX ISA, "Matrix fragments for mma.m16n8k*" / "mma.m8n8k4"), the exact encodings of
// the small dyadic values the probe feeds the tensor cores, and the published dense tensor rates
// per SM and clock. The kernel reads its fragment sizes and its loop shape from here; the host
// packs fragments and predicts results with the same functions; tests/probes/tensor/model_test.cpp
// checks all of it against the PTX ISA figures and the whitepapers.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include "kernels/common/hd.hpp"

namespace roofprobe {

// input.accumulate, in the order of the probe's `type` axis.
enum class TensorType : int { Fp16Fp32, Fp16Fp16, Bf16Fp32, Tf32Fp32, Int8Int32, Fp64Fp64, Fp8Fp32 };
inline constexpr int kTensorTypeCount = 7;

// mma.sync (warp), WMMA (warp), wgmma.mma_async (warpgroup of 4 warps, Hopper sm_90a),
// tcgen05.mma (one thread for the CTA, accumulator in tensor memory; Blackwell sm_100a), and
// the f64 mma.sync shapes Hopper adds (m16n8k4, m16n8k8, m16n8k16; PTX ISA 7.8, sm_90), each an
// api of its own so that a run shows which of the four f64 shapes reaches the FP64 tensor rate,
// and wgmma with A from registers (its RS form: B alone from shared memory), whose rate differs.
enum class TensorApi : int { Mma, Wmma, Wgmma, Tcgen05, MmaM16n8k4, MmaM16n8k8, MmaM16n8k16, WgmmaRs };
inline constexpr int kTensorApiCount = 8;

// The warpgroup apis (wgmma with A from shared memory or from registers).
RP_HD constexpr bool tensor_wgmma_api(TensorApi api) { return api == TensorApi::Wgmma || api == TensorApi::WgmmaRs; }

// The apis that issue warp-level mma.sync (one shape per type for Mma, the f64 shapes for the rest).
RP_HD constexpr bool tensor_mma_api(TensorApi api) {
  return api == TensorApi::Mma || api == TensorApi::MmaM16n8k4 || api == TensorApi::MmaM16n8k8 ||
         api == TensorApi::MmaM16n8k16;
}

// Element formats of the A/B inputs and of the C/D accumulators.
enum class TensorInput : int { Fp16, Bf16, Tf32, Int8, Fp64, E4m3 };
enum class TensorAcc : int { Fp32, Fp16, Int32, Fp64 };

// One warp-level instruction: D(m x n) = A(m x k) * B(k x n) + C. min_cc: the lowest compute
// capability (major * 10 + minor) that has it; 0: the api has no instruction for the type.
struct TensorShape {
  int m = 0, n = 0, k = 0;
  int min_cc = 0;
};

// Loop shape of the kernel, per warp: kTensorChains independent accumulators (MMAs in flight
// from one warp), each loop iteration issues kTensorSteps MMAs on every chain, alternating +B and
// -B so each chain returns to its initial value C after every iteration (the values stay exact
// however long the launch); a last +B MMA per chain after the loop leaves C + A*B to verify.
inline constexpr int kTensorChains = 4;
inline constexpr int kTensorSteps = 4;     // even: +B, -B, +B, -B
inline constexpr int kTensorBlock = 256;   // threads per block (8 warps)
inline constexpr int kTensorDataSets = 8;  // distinct random A/B/C sets; warp w uses set w % 8

RP_HD constexpr TensorInput tensor_input(TensorType t) {
  return t == TensorType::Fp16Fp32 || t == TensorType::Fp16Fp16 ? TensorInput::Fp16
         : t == TensorType::Bf16Fp32                            ? TensorInput::Bf16
         : t == TensorType::Tf32Fp32                            ? TensorInput::Tf32
         : t == TensorType::Int8Int32                           ? TensorInput::Int8
         : t == TensorType::Fp64Fp64                            ? TensorInput::Fp64
                                                                : TensorInput::E4m3;
}

RP_HD constexpr TensorAcc tensor_acc(TensorType t) {
  return t == TensorType::Fp16Fp16    ? TensorAcc::Fp16
         : t == TensorType::Int8Int32 ? TensorAcc::Int32
         : t == TensorType::Fp64Fp64  ? TensorAcc::Fp64
                                      : TensorAcc::Fp32;
}

// Bits one element occupies in a register (tf32 sits in a full 32-bit register).
RP_HD constexpr int tensor_input_bits(TensorInput in) {
  return in == TensorInput::Fp16 || in == TensorInput::Bf16   ? 16
         : in == TensorInput::Int8 || in == TensorInput::E4m3 ? 8
         : in == TensorInput::Fp64                            ? 64
                                                              : 32;
}

RP_HD constexpr int tensor_acc_bits(TensorAcc acc) {
  return acc == TensorAcc::Fp16 ? 16 : acc == TensorAcc::Fp64 ? 64 : 32;
}

// mma.sync shapes (PTX ISA 9.7.14 "Warp-level matrix multiply-accumulate instructions"). fp16 has
// m16n8k8 on sm_75 and m8n8k4 on sm_70 as well, but the probe uses the sm_80 m16n8k16 only (the
// WMMA api covers Volta and Turing). fp8 (e4m3) needs sm_89 and PTX ISA 8.4 (CUDA 12.4).
RP_HD constexpr TensorShape tensor_mma_shape(TensorType t) {
  switch (t) {
    case TensorType::Fp16Fp32:
    case TensorType::Fp16Fp16:
    case TensorType::Bf16Fp32:
      return {16, 8, 16, 80};
    case TensorType::Tf32Fp32:
      return {16, 8, 8, 80};
    case TensorType::Int8Int32:
      return {16, 8, 32, 80};
    case TensorType::Fp64Fp64:
      return {8, 8, 4, 80};
    case TensorType::Fp8Fp32:
      return {16, 8, 32, 89};
  }
  return {};
}

// WMMA shapes (CUDA C++ Programming Guide, "Warp Matrix Functions": element types and sizes).
// int8 WMMA exists from sm_72; WMMA has no fp8.
RP_HD constexpr TensorShape tensor_wmma_shape(TensorType t) {
  switch (t) {
    case TensorType::Fp16Fp32:
    case TensorType::Fp16Fp16:
      return {16, 16, 16, 70};
    case TensorType::Bf16Fp32:
      return {16, 16, 16, 80};
    case TensorType::Tf32Fp32:
      return {16, 16, 8, 80};
    case TensorType::Int8Int32:
      return {16, 16, 16, 72};
    case TensorType::Fp64Fp64:
      return {8, 8, 4, 80};
    case TensorType::Fp8Fp32:
      return {0, 0, 0, 0};
  }
  return {};
}

// The shape of an mma.sync api for type t: Mma's one shape per type, or Hopper's f64 shapes (fp64
// only; compute capability 9.0 is the only one that runs them as such, see tensor_mma_native).
RP_HD constexpr TensorShape tensor_mma_shape(TensorType t, TensorApi api) {
  return api == TensorApi::Mma                               ? tensor_mma_shape(t)
         : t != TensorType::Fp64Fp64 || !tensor_mma_api(api) ? TensorShape{}
         : api == TensorApi::MmaM16n8k4                      ? TensorShape{16, 8, 4, 90}
         : api == TensorApi::MmaM16n8k8                      ? TensorShape{16, 8, 8, 90}
                                                             : TensorShape{16, 8, 16, 90};
}

// Whether the mma.sync of t is a tensor-core instruction on compute capability cc, rather than
// something ptxas emulates. fp8 (e4m3) mma.sync is native (QMMA.16832.F32.E4M3.E4M3) on sm_89
// and sm_120/121 only: on sm_90, 10.0, 10.3 and 11.0 ptxas (CUDA 13.0) expands it into
// F2FP.F16.E4M3.UNPACK conversions plus f16 HMMA.16816 with a zero accumulator, folds the
// repeated products of the probe's loop and adds the rest with FADDs (6 HMMAs for 20 MMAs in
// the SASS of the PTX check): such a "tensor" rate is neither fp8 nor the tensor cores. Those
// parts reach fp8 through api=wgmma (sm_90a) or api=tcgen05 (sm_100a, kind::f8f6f4).
RP_HD constexpr bool tensor_mma_native(TensorType t, int cc) {
  if (t != TensorType::Fp8Fp32) return true;
  return cc == 89 || cc >= 120;
}

// The same for an api: Hopper's f64 m16n8k{4,8,16} are one DMMA.16x8xK each on sm_90 only; for
// sm_100 and sm_120 ptxas (CUDA 13.0) splits each into DMMA.8x8x4 instructions (the SASS of
// tests/probes/tensor/ptx.cmake), which is api=mma's m8n8k4 under another name.
RP_HD constexpr bool tensor_mma_native(TensorType t, TensorApi api, int cc) {
  return api == TensorApi::Mma ? tensor_mma_native(t, cc) : cc == 90;
}

// wgmma shapes: the one instruction the Hopper path issues per type, m64n128 with f32, f16 or
// (int8) s32 accumulate and K filling the 32 bytes of a tile row
// (kernels/cuda/tensor/wgmma_layout.hpp): k16 for f16 and bf16, k8 for tf32, k32 for e4m3 and int8.
// Only compute capability 9.0 runs it (sm_90a code), which the probe checks, not min_cc.
RP_HD constexpr TensorShape tensor_wgmma_shape(TensorType t) {
  return t == TensorType::Fp16Fp32 || t == TensorType::Fp16Fp16 || t == TensorType::Bf16Fp32
             ? TensorShape{64, 128, 16, 90}
         : t == TensorType::Tf32Fp32                              ? TensorShape{64, 128, 8, 90}
         : t == TensorType::Fp8Fp32 || t == TensorType::Int8Int32 ? TensorShape{64, 128, 32, 90}
                                                                  : TensorShape{};
}

// wgmma with A from registers: f16 and bf16 with f32 accumulate (m64n128k16).
RP_HD constexpr TensorShape tensor_wgmma_rs_shape(TensorType t) {
  return t == TensorType::Fp16Fp32 || t == TensorType::Bf16Fp32 ? TensorShape{64, 128, 16, 90} : TensorShape{};
}

// tcgen05 shapes (kernels/cuda/tensor/tcgen05_layout.hpp): 128 x 64 x K, K filling 32 bytes of a
// tile row: kind::f16 k16 (f16, bf16), kind::tf32 k8, kind::f8f6f4 k32 (e4m3), kind::i8 k32, each
// with f32 (i8: s32) accumulate. Only compute capability 10.0 runs its sm_100a code.
RP_HD constexpr TensorShape tensor_tcgen05_shape(TensorType t) {
  return t == TensorType::Fp16Fp32 || t == TensorType::Bf16Fp32   ? TensorShape{128, 64, 16, 100}
         : t == TensorType::Tf32Fp32                              ? TensorShape{128, 64, 8, 100}
         : t == TensorType::Fp8Fp32 || t == TensorType::Int8Int32 ? TensorShape{128, 64, 32, 100}
                                                                  : TensorShape{};
}

RP_HD constexpr TensorShape tensor_shape(TensorType t, TensorApi api) {
  return tensor_mma_api(api)         ? tensor_mma_shape(t, api)
         : api == TensorApi::Wmma    ? tensor_wmma_shape(t)
         : api == TensorApi::Wgmma   ? tensor_wgmma_shape(t)
         : api == TensorApi::WgmmaRs ? tensor_wgmma_rs_shape(t)
                                     : tensor_tcgen05_shape(t);
}

// FLOPs of one warp-level instruction: m*n*k multiply-adds of 2 FLOPs (integer ops for int8,
// reported in the same column). For WMMA, one PTX wmma.mma instruction (which the assembler may
// split into several hardware MMAs).
RP_HD constexpr double tensor_flops_per_instruction(TensorShape s) { return 2.0 * s.m * s.n * s.k; }

// Per lane of a warp: elements of A, B and C/D held in registers, and the 32-bit words they fill.
RP_HD constexpr int tensor_a_elements(TensorShape s) { return s.m * s.k / 32; }
RP_HD constexpr int tensor_b_elements(TensorShape s) { return s.k * s.n / 32; }
RP_HD constexpr int tensor_c_elements(TensorShape s) { return s.m * s.n / 32; }
RP_HD constexpr int tensor_a_words(TensorType t, TensorApi api = TensorApi::Mma) {
  return tensor_a_elements(tensor_mma_shape(t, api)) * tensor_input_bits(tensor_input(t)) / 32;
}
RP_HD constexpr int tensor_b_words(TensorType t, TensorApi api = TensorApi::Mma) {
  return tensor_b_elements(tensor_mma_shape(t, api)) * tensor_input_bits(tensor_input(t)) / 32;
}
RP_HD constexpr int tensor_c_words(TensorType t, TensorApi api = TensorApi::Mma) {
  return tensor_c_elements(tensor_mma_shape(t, api)) * tensor_acc_bits(tensor_acc(t)) / 32;
}

// Warp-level MMA instructions one warp issues in a launch of `reps` loop iterations.
RP_HD constexpr long long tensor_mmas_per_warp(long long reps) {
  return reps * kTensorSteps * kTensorChains + kTensorChains;
}

// ---- mma.sync fragments: which matrix element a lane's register element holds -------------
// g = lane / 4 (groupID), t = lane % 4 (threadID_in_group), e the element index within the
// fragment (register r holds elements r * per_word .. r * per_word + per_word - 1, the lowest
// index in the lowest bits).
struct FragCoord {
  int row = 0, col = 0;
};

// Elements of 32 bits or more (tf32 m16n8k8; Hopper's f64 m16n8k4/k8/k16) follow one pattern:
// a_e at row g + 8 (e % 2), column t + 4 (e / 2); b_e at k t + 4 e, column g.
RP_HD constexpr FragCoord tensor_mma_a_coord_for(TensorType t, TensorApi api, int lane, int e) {
  const int g = lane / 4, q = lane % 4;
  const TensorShape s = tensor_mma_shape(t, api);
  if (s.m == 8) return {g, q};                                                              // m8n8k4 f64
  if (tensor_input_bits(tensor_input(t)) >= 32) return {g + 8 * (e % 2), q + 4 * (e / 2)};  // tf32, f64
  if (s.k == 16) return {g + 8 * ((e / 2) % 2), 2 * q + e % 2 + 8 * (e / 4)};               // m16n8k16 16-bit
  return {g + 8 * ((e / 4) % 2), 4 * q + e % 4 + 16 * (e / 8)};                             // m16n8k32 (8-bit)
}

// B is k x n (row = k index, col = n index).
RP_HD constexpr FragCoord tensor_mma_b_coord_for(TensorType t, TensorApi api, int lane, int e) {
  const int g = lane / 4, q = lane % 4;
  const TensorShape s = tensor_mma_shape(t, api);
  if (s.m == 8) return {q, g};
  if (tensor_input_bits(tensor_input(t)) >= 32) return {q + 4 * e, g};
  if (s.k == 16) return {2 * q + e % 2 + 8 * (e / 2), g};
  return {4 * q + e % 4 + 16 * (e / 4), g};
}

RP_HD constexpr FragCoord tensor_mma_c_coord_for(TensorType t, TensorApi api, int lane, int e) {
  const int g = lane / 4, q = lane % 4;
  const TensorShape s = tensor_mma_shape(t, api);
  if (s.m == 8) return {g, 2 * q + e};
  return {g + 8 * (e / 2), 2 * q + e % 2};
}

// The fragments of api=mma (one shape per type).
RP_HD constexpr FragCoord tensor_mma_a_coord(TensorType t, int lane, int e) {
  return tensor_mma_a_coord_for(t, TensorApi::Mma, lane, e);
}
RP_HD constexpr FragCoord tensor_mma_b_coord(TensorType t, int lane, int e) {
  return tensor_mma_b_coord_for(t, TensorApi::Mma, lane, e);
}
RP_HD constexpr FragCoord tensor_mma_c_coord(TensorType t, int lane, int e) {
  return tensor_mma_c_coord_for(t, TensorApi::Mma, lane, e);
}

// ---- host only: names, value encodings, published peaks ----------------------------------
inline const char* tensor_type_name(TensorType t) {
  static const char* const names[kTensorTypeCount] = {"fp16.fp32",  "fp16.fp16", "bf16.fp32", "tf32.fp32",
                                                      "int8.int32", "fp64.fp64", "fp8.fp32"};
  return names[static_cast<int>(t)];
}

// False when `name` is none of the axis' choices.
inline bool parse_tensor_type(const std::string& name, TensorType* out) {
  for (int i = 0; i < kTensorTypeCount; ++i) {
    if (name == tensor_type_name(static_cast<TensorType>(i))) {
      *out = static_cast<TensorType>(i);
      return true;
    }
  }
  return false;
}

// Bits of a normal binary floating-point number with `exp_bits` exponent and `man_bits` stored
// mantissa bits (IEEE layout, bias 2^(exp_bits-1) - 1), or 0 for 0. Only for the probe's small
// dyadic values, which every format holds exactly: returns false when `v` would round.
inline bool encode_float_bits(double v, int exp_bits, int man_bits, std::uint64_t* bits) {
  if (v == 0) {
    *bits = 0;
    return true;
  }
  const std::uint64_t sign = v < 0 ? 1 : 0;
  int e = 0;
  const double frac = std::frexp(std::fabs(v), &e);  // |v| = frac * 2^e, frac in [0.5, 1)
  const int exponent = e - 1 + ((1 << (exp_bits - 1)) - 1);
  const double scaled = (frac * 2 - 1) * std::ldexp(1.0, man_bits);
  if (exponent <= 0 || exponent >= (1 << exp_bits) - 1 || scaled != std::floor(scaled)) return false;
  *bits = (sign << (exp_bits + man_bits)) | (static_cast<std::uint64_t>(exponent) << man_bits) |
          static_cast<std::uint64_t>(scaled);
  return true;
}

inline double decode_float_bits(std::uint64_t bits, int exp_bits, int man_bits) {
  const bool negative = (bits >> (exp_bits + man_bits)) & 1;
  const int exponent = static_cast<int>((bits >> man_bits) & ((1u << exp_bits) - 1));
  const std::uint64_t mantissa = bits & ((std::uint64_t{1} << man_bits) - 1);
  const int bias = (1 << (exp_bits - 1)) - 1;
  double v = exponent == 0 ? std::ldexp(static_cast<double>(mantissa), 1 - bias - man_bits)
                           : std::ldexp(1.0 + std::ldexp(static_cast<double>(mantissa), -man_bits), exponent - bias);
  return negative ? -v : v;
}

// Register bits of one input element (tensor_input_bits wide); false when not exact.
inline bool encode_tensor_input(TensorInput in, double v, std::uint64_t* bits) {
  switch (in) {
    case TensorInput::Fp16:
      return encode_float_bits(v, 5, 10, bits);
    case TensorInput::Bf16:
      return encode_float_bits(v, 8, 7, bits);
    case TensorInput::Tf32:
      return encode_float_bits(v, 8, 23, bits);  // an fp32 register
    case TensorInput::Fp64:
      return encode_float_bits(v, 11, 52, bits);
    case TensorInput::E4m3:
      return encode_float_bits(v, 4, 3, bits);
    case TensorInput::Int8:
      if (v != std::floor(v) || v < -128 || v > 127) return false;
      *bits = static_cast<std::uint8_t>(static_cast<std::int8_t>(v));
      return true;
  }
  return false;
}

inline bool encode_tensor_acc(TensorAcc acc, double v, std::uint64_t* bits) {
  switch (acc) {
    case TensorAcc::Fp32:
      return encode_float_bits(v, 8, 23, bits);
    case TensorAcc::Fp16:
      return encode_float_bits(v, 5, 10, bits);
    case TensorAcc::Fp64:
      return encode_float_bits(v, 11, 52, bits);
    case TensorAcc::Int32:
      if (v != std::floor(v) || v < -2147483648.0 || v > 2147483647.0) return false;
      *bits = static_cast<std::uint32_t>(static_cast<std::int32_t>(v));
      return true;
  }
  return false;
}

inline double decode_tensor_acc(TensorAcc acc, std::uint64_t bits) {
  switch (acc) {
    case TensorAcc::Fp32:
      return decode_float_bits(bits & 0xffffffffu, 8, 23);
    case TensorAcc::Fp16:
      return decode_float_bits(bits & 0xffffu, 5, 10);
    case TensorAcc::Fp64:
      return decode_float_bits(bits, 11, 52);
    case TensorAcc::Int32:
      return static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));
  }
  return 0;
}

// The random values: inputs from {-1, -1/2, 1/2, 1} (int8: {-2, -1, 1, 2}); accumulators nonzero
// multiples of 1/4 in [-8, 8] (int32: nonzero integers in [-64, 64]). A product sums at most 32
// terms of magnitude <= 1 (int8: 4), so C + A*B stays below 2^6 in magnitude with 1/4 resolution:
// exact in fp16 (11 significant bits), and every partial sum is exact as well, whatever order
// the tensor core adds in. Nonzero C keeps -0 out of the comparisons.
inline double tensor_input_value(TensorInput in, std::uint64_t random) {
  // Arithmetic, not a table: no static storage shared between the host and nvcc translation
  // units of this header.
  const int k = static_cast<int>(random % 4);               // 0..3
  const double magnitude = (k == 0 || k == 3) ? 1.0 : 0.5;  // -1, -1/2, 1/2, 1
  const double value = k < 2 ? -magnitude : magnitude;
  return in == TensorInput::Int8 ? 2 * value : value;  // -2, -1, 1, 2
}

inline double tensor_acc_value(TensorAcc acc, std::uint64_t random) {
  if (acc == TensorAcc::Int32) {
    const int v = static_cast<int>(random % 128) - 64;  // -64..63
    return v >= 0 ? v + 1 : v;                          // skip 0: -64..-1, 1..64
  }
  const int quarters = static_cast<int>(random % 64) - 32;  // -32..31
  return (quarters >= 0 ? quarters + 1 : quarters) / 4.0;   // nonzero, [-8, 8]
}

// Dense tensor-core FLOPs (int8: integer ops) per clock per SM at the full rate of the
// architecture, and where the figure comes from; 0 when unpublished or unsupported. Derived as
// published dense TFLOP/s / (SMs x the clock the figure is quoted at).
struct TensorPeak {
  double flops_per_clk_per_sm = 0;
  const char* source = "";         // the full-rate figure
  bool geforce_half_rate = false;  // halved from it: a GeForce part accumulating floats in FP32
};

// GeForce parts of Turing, Ampere (GA10x), Ada and Blackwell (GB20x) run the tensor instructions that accumulate in
// FP32 from FP16/BF16/TF32/FP8 inputs at half the rate of the professional parts built on the same
// die (RTX 4090: 165.2 TFLOP/s FP16 with FP32 accumulate, 330.3 with FP16 accumulate; RTX 3090:
// 71 vs 142; RTX 2080 Ti: 56.9 vs 113.8; the Turing, GA102 and Ada whitepapers' GeForce
// appendices). FP16-accumulate and INT8 run at the full rate; TITAN and the RTX A/Ada workstation
// and data-centre parts (T4, A40, L40S) run everything at the full rate.
enum class TensorPart { FullRate, GeForce };

// The part class from the device name cudaGetDeviceProperties reports ("NVIDIA GeForce RTX 4090").
inline TensorPart tensor_part_of(const char* device_name) {
  return device_name != nullptr && std::strstr(device_name, "GeForce") != nullptr ? TensorPart::GeForce
                                                                                  : TensorPart::FullRate;
}

inline TensorPeak tensor_peak_full_rate(TensorType t, int cc);

inline TensorPeak tensor_peak_per_sm(TensorType t, int cc, TensorPart part = TensorPart::FullRate) {
  TensorPeak peak = tensor_peak_full_rate(t, cc);
  const bool fp32_accumulate_of_floats =
      t == TensorType::Fp16Fp32 || t == TensorType::Bf16Fp32 || t == TensorType::Tf32Fp32 || t == TensorType::Fp8Fp32;
  const bool halving_architecture = cc == 75 || cc == 86 || cc == 89 || cc == 120;
  if (part == TensorPart::GeForce && fp32_accumulate_of_floats && halving_architecture &&
      peak.flops_per_clk_per_sm > 0) {
    peak.flops_per_clk_per_sm /= 2;
    peak.geforce_half_rate = true;
  }
  return peak;
}

// Compute capabilities from 7.0 to 12.1 that run tensor instructions but have no dense per-SM
// figure we could derive (a published dense TFLOP/s with the SM count and the clock it is quoted
// at): an explicit row each, 0 with the reason, for every type. Others: nothing.
inline TensorPeak tensor_peak_unpublished(int cc) {
  switch (cc) {
    case 72:
      return {0,
              "unknown: no dense tensor figure per SM for compute capability 7.2 (Xavier): none "
              "published with the SM count and clock it is quoted at"};
    case 87:
      return {0,
              "unknown: no dense tensor figure per SM for compute capability 8.7 (Orin): the Jetson "
              "AGX Orin technical brief quotes sparse INT8 TOPS only"};
    case 100:
      return {0,
              "unknown: no dense tensor figure per SM for compute capability 10.0 (B200, GB200): "
              "the datasheet peaks come without the SM clock they are quoted at (tcgen05 rate)"};
    case 103:
      return {0,
              "unknown: no dense tensor figure per SM for compute capability 10.3 (B300, GB300): "
              "the datasheet peaks come without the SM clock they are quoted at (tcgen05 rate)"};
    case 110:
      return {0,
              "unknown: no dense tensor figure per SM for compute capability 11.0 (Jetson Thor): "
              "none published with the SM count and clock it is quoted at"};
    case 121:
      return {0,
              "unknown: no dense tensor figure per SM for compute capability 12.1 (GB10): none "
              "published with the SM count and clock it is quoted at"};
    default:
      return {};
  }
}

// The rate of the full-rate parts of each architecture.
inline TensorPeak tensor_peak_full_rate(TensorType t, int cc) {
  const bool fp16 = t == TensorType::Fp16Fp32 || t == TensorType::Fp16Fp16;
  switch (cc) {
    case 70:  // V100 SXM2: 125 TFLOP/s = 80 SMs x 8 tensor cores x 64 FMA x 2 x 1530 MHz
      if (fp16) return {1024, "Volta V100 whitepaper: 125 TFLOP/s FP16 tensor at 1530 MHz x 80 SMs"};
      return {};
    case 75:  // T4: 65 TFLOP/s FP16, 130 TOPS INT8 at 1590 MHz x 40 SMs
      if (fp16)
        return {1024,
                "Turing whitepaper / T4 datasheet: 65 TFLOP/s FP16 at 1590 MHz x 40 SMs "
                "(GeForce: FP32 accumulate at half rate)"};
      if (t == TensorType::Int8Int32)
        return {2048, "Turing whitepaper / T4 datasheet: 130 TOPS INT8 at 1590 MHz x 40 SMs"};
      return {};
    case 80:  // A100 SXM: 108 SMs at 1410 MHz
      if (fp16 || t == TensorType::Bf16Fp32)
        return {2048, "Ampere A100 whitepaper: 312 TFLOP/s FP16/BF16 dense at 1410 MHz x 108 SMs"};
      if (t == TensorType::Tf32Fp32)
        return {1024, "Ampere A100 whitepaper: 156 TFLOP/s TF32 dense at 1410 MHz x 108 SMs"};
      if (t == TensorType::Int8Int32)
        return {4096, "Ampere A100 whitepaper: 624 TOPS INT8 dense at 1410 MHz x 108 SMs"};
      if (t == TensorType::Fp64Fp64)
        return {128, "Ampere A100 whitepaper: 19.5 TFLOP/s FP64 tensor (DMMA) at 1410 MHz x 108 SMs"};
      return {};
    case 86:  // GA102 (A40 / RTX A6000 full rate; GeForce: FP32 accumulate at half rate)
      if (fp16 || t == TensorType::Bf16Fp32)
        return {1024,
                "Ampere GA102 whitepaper: A40 149.7 TFLOP/s FP16 dense at 1740 MHz x 84 SMs "
                "(GeForce: FP32 accumulate at half rate)"};
      if (t == TensorType::Tf32Fp32)
        return {512, "Ampere GA102 whitepaper: A40 74.8 TFLOP/s TF32 dense at 1740 MHz x 84 SMs"};
      if (t == TensorType::Int8Int32)
        return {2048, "Ampere GA102 whitepaper: A40 299.3 TOPS INT8 dense at 1740 MHz x 84 SMs"};
      return {};
    case 89:  // AD102: the full rate of the professional parts (GeForce halves FP32 accumulate)
      if (fp16 || t == TensorType::Bf16Fp32)
        return {1024,
                "Ada whitepaper: RTX 4090 330.3 TFLOP/s FP16 (FP16 accumulate) dense at "
                "2520 MHz x 128 SMs (L40S: also with FP32 accumulate; GeForce: half)"};
      if (t == TensorType::Tf32Fp32)
        return {512,
                "Ada whitepaper / L40S datasheet: 183 TFLOP/s TF32 dense at 2520 MHz x 142 "
                "SMs (RTX 4090: half)"};
      if (t == TensorType::Int8Int32 || t == TensorType::Fp8Fp32)
        return {2048,
                "Ada whitepaper: RTX 4090 660.6 TOPS INT8 / TFLOP/s FP8 dense at 2520 MHz x "
                "128 SMs (GeForce: FP8 with FP32 accumulate at half rate)"};
      return {};
    case 90:  // H100 SXM5: 132 SMs; the tensor figures are quoted at 1830 MHz
      if (fp16 || t == TensorType::Bf16Fp32)
        return {4096,
                "Hopper whitepaper: H100 SXM5 989.4 TFLOP/s FP16/BF16 dense at 1830 MHz x "
                "132 SMs; wgmma rate, mma.sync reaches only part of it"};
      if (t == TensorType::Tf32Fp32)
        return {2048,
                "Hopper whitepaper: H100 SXM5 494.7 TFLOP/s TF32 dense at 1830 MHz x 132 "
                "SMs; wgmma rate, mma.sync reaches only part of it"};
      if (t == TensorType::Int8Int32 || t == TensorType::Fp8Fp32)
        return {8192,
                "Hopper whitepaper: H100 SXM5 1978.9 TOPS INT8 / TFLOP/s FP8 dense at 1830 "
                "MHz x 132 SMs; wgmma rate, mma.sync reaches only part of it"};
      if (t == TensorType::Fp64Fp64)
        return {256, "Hopper whitepaper: H100 SXM5 66.9 TFLOP/s FP64 tensor at 1980 MHz x 132 SMs"};
      return {};
    case 120:  // GB202 (RTX 50xx): GeForce halves FP32 accumulate, as on Ada
      if (fp16 || t == TensorType::Bf16Fp32)
        return {1024,
                "RTX Blackwell whitepaper: RTX 5090 419 TFLOP/s FP16 (FP16 accumulate) dense at "
                "2407 MHz x 170 SMs (GeForce: FP32 accumulate at half, 209.5)"};
      if (t == TensorType::Tf32Fp32)
        return {512,
                "RTX Blackwell whitepaper: RTX 5090 104.8 TFLOP/s TF32 dense at 2407 MHz x 170 SMs, "
                "GeForce's half rate"};
      return {0,
              "unknown: no RTX 5090 INT8 or FP8 dense tensor figure checked against the RTX Blackwell "
              "whitepaper (its headline is FP4 with sparsity)"};
    case 72:  // Xavier, Orin, B200/B300, Thor, GB10: no figure, an "unknown: ..." reason instead
    case 87:
    case 100:
    case 103:
    case 110:
    case 121:
      return tensor_peak_unpublished(cc);
    default:
      return {};
  }
}

}  // namespace roofprobe
