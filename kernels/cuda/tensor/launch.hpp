// Which kernel runs a (type, api) point of the tensor probe, and why a device or a binary cannot
// run one: the host side of the probe that does not depend on a prepared point
// (kernels/cuda/tensor/launch.cu).
#pragma once

#include <string>

#include "kernels/contract/probe.hpp"
#include "kernels/cuda/tensor/model.hpp"

namespace roofprobe::cuda::tensor_probe {

// The kernel of (type, api), as a const void* for cudaFuncGetAttributes / occupancy queries.
const void* kernel_of(TensorType t, TensorApi api);

// The instruction a (type, api) point issues, as PTX spells it: "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
// "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 (warpgroup, sm_90a)", ...
std::string instruction_ptx(TensorType t, TensorApi api);

// "mma", "wmma", "wgmma", "tcgen05", "mma.m16n8k4", "mma.m16n8k8", "mma.m16n8k16", "wgmma.rs": the api
// axis' values.
const char* api_name(TensorApi api);

// The paths that stage operands in shared memory (wgmma.rs: B only, A goes to registers) and
// whose accumulator is one tile per block (wgmma: a warpgroup's registers; tcgen05: tensor
// memory): same buffers, one block each.
bool tile_api(TensorApi api);

// Threads of one block, and of the unit that issues one instruction (a warp; a warpgroup; the
// CTA, for tcgen05, whose one issuing thread acts for all 128).
int block_threads(TensorApi api);

int issuer_threads(TensorApi api);

std::string upper(std::string s);

// "TENSOR.FP16.FP32": the compute ceiling a type feeds.
std::string ceiling_name(TensorType t);

// 90 -> "9.0".
std::string cc_text(int cc);

// "9.0" -> 90, "12.0" -> 120; 0 when absent or malformed.
int device_cc(const DeviceInfo& dev);

// "tensor: type=fp16.fp32 api=mma", for messages.
std::string point_text(TensorType t, TensorApi api);

// The type and api axes of a point; std::invalid_argument names a value that is neither.
void parse_point(const Params& p, TensorType* t, TensorApi* api);

// Why the device (by compute capability) cannot run (t, api); empty when it can. Independent of
// the binary: binary_lacks_reason covers that.
// `ignore_build`: leaves out what only this build lacks (a CUDA without the e4m3 mma.sync), so
// the answer is whether the combination exists on the device at all.
std::string device_reason(TensorType t, TensorApi api, int cc, bool ignore_build = false);

// Empty when the binary holds device code with the instruction for the device; otherwise why
// not. Unknown (no device, error): empty, and prepare() checks again. For wgmma and tcgen05 a
// one-block launch asks the kernel the device would run (cudaFuncGetAttributes cannot tell sm_90
// from sm_90a).
std::string binary_lacks_reason(TensorType t, TensorApi api);

}  // namespace roofprobe::cuda::tensor_probe
