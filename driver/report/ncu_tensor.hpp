// points --ncu-csv: the tensor-core FLOPs of one launch, from whichever tensor counters ncu wrote.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace roofprobe {

// A launch's tensor work: its FLOPs and how they were counted (for the note that says so), or
// why the work it did has no FLOP figure (its kernel then gets no FLOP point: a point from its
// scalar FLOPs alone would sit orders of magnitude too low). Both empty: no tensor work.
struct TensorWork {
  double flops = 0;
  // How its FLOPs were counted, one note line per way ("tensor instructions dmma@8.0 counted as
  // 512 FLOPs each (the one shape there, DMMA.884)"); empty without tensor work.
  std::vector<std::string> counted;
  // "gmma@9.0", "hmma@8.0", "pipe@9.0", "hmma (no CC column)", or "counted by both A and B" (two
  // tensor-path totals that overlap without one holding the other: their sum would count twice).
  std::string uncounted;
};

// The tensor FLOPs of a launch, best source first:
//  1. sm__ops_path_tensor_[op_<kind>_]src_<type>[_<type>...][_dst_<type>][_sparsity_{on,off}].sum:
//     Nsight Compute's tensor-path operation counters, which NVIDIA gives for counting tensor
//     FLOPs because "the answer differs per variant and per architecture" for instructions. Each
//     op counts once: a counter that another holds (a part: one instruction kind, accumulator,
//     source type of a group, or sparsity half) is left out, and the totals left are added. Each
//     op is one FLOP: on an H200 every total of a cuBLAS GEMM (tf32, fp16, bf16, fp8, int8, fp64)
//     equals 2*M*N*K.
//  2. sm__inst_executed_pipe_tensor_op_{hmma,imma,dmma,gmma}.sum x the FLOPs of the one shape the
//     launch's compute capability ("CC" column) has for that kind (ncu_tensor_shape); a kind with
//     several shapes there is left uncounted.
//  3. sm__inst_executed_pipe_tensor.sum x 512 where that is V100's HMMA.884 (CC 7.0/7.2, or no CC
//     column: NERSC's recipe, which this counter comes from); uncounted elsewhere.
// flops_per_instruction > 0 (the user's --tensor-flops-per-inst) is used for HMMA and the pipe
// counter instead. `counters` are the launch's metrics by name ("CC" holds e.g. 8.0).
TensorWork tensor_work(const std::map<std::string, double>& counters, double flops_per_instruction);

// The one SASS shape tensor instructions of `kind` (hmma, imma, dmma, gmma) have on compute
// capability `cc` (major + minor / 10), with its FLOPs per warp instruction: Volta's HMMA.884
// (512) and A100's DMMA.884 (512). Every other architecture has several shapes per kind (HMMA.1688
// and .16816, f16 and tf32; IMMA.8816 and .16832; Hopper's four DMMA; GMMA of any N): nullopt.
struct TensorShapeFigure {
  const char* shape;
  double flops;
};
std::optional<TensorShapeFigure> ncu_tensor_shape(const std::string& kind, double cc);

}  // namespace roofprobe
