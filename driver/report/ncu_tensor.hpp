// points --ncu-csv: the tensor-core FLOPs of one launch, from whichever tensor counters ncu wrote.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace roofprobe {

// A launch's tensor work and how it was counted (for the note that says so).
struct TensorWork {
  double flops = 0;
  double instructions = 0;  // tensor-pipe warp instructions, where counted
  std::string how;          // "ops" | "hmma@8.0" ... | "pipe" | "" (nothing countable)
  std::string uncounted;    // a counter with no known FLOPs per instruction, e.g. "gmma@9.0"
};

// The tensor FLOPs of a launch, best source first:
//  1. sm__ops_path_tensor_[op_<kind>_]src_<type>[_dst_<type>][_sparsity_{on,off}].sum: Nsight
//     Compute's tensor-path operation counters, which NVIDIA gives for counting tensor FLOPs
//     because "the answer differs per variant and per architecture" for instructions. Exact for
//     every shape; each data path is counted once (a total over its accumulator types or its
//     sparsity halves is not added to its parts again).
//  2. sm__inst_executed_pipe_tensor_op_{hmma,imma,dmma}.sum x the FLOPs of the shape cuBLAS and
//     CUTLASS issue on the launch's compute capability ("CC" column): HMMA.884 512 on 7.0/7.2,
//     HMMA.1688 2048 on 7.5, HMMA.16816 4096 from 8.0; IMMA.8816 2048 on 7.2/7.5, IMMA.16832 8192
//     from 8.0; DMMA.884 512 on 8.x. Hopper's GMMA (wgmma, N from 8 to 256) and DMMA (four f64
//     shapes) have no one figure: left uncounted, and the note asks for the op counters.
//  3. sm__inst_executed_pipe_tensor.sum x flops_per_instruction.
// flops_per_instruction > 0 (the user's --tensor-flops-per-inst) also overrides the HMMA figure.
// `counters` are the launch's metrics by name ("CC" holds the compute capability, e.g. 8.0).
TensorWork tensor_work(const std::map<std::string, double>& counters, double flops_per_instruction);

// FLOPs of one warp instruction of `kind` (hmma, imma, dmma) on compute capability `cc`
// (major + minor / 10), or nullopt where no one shape is what the libraries issue.
std::optional<double> tensor_flops_per_instruction(const std::string& kind, double cc);

}  // namespace roofprobe
