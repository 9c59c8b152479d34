// points --ncu-metrics: the Nsight Compute `--metrics` list whose export `points --ncu-csv`
// turns into points, for one GPU architecture.
#pragma once

#include <optional>
#include <string>

namespace roofprobe {

// A compute capability as users write it: "sm_90", "sm_90a", "90", "9.0", "compute_89". Returns
// major + minor / 10 (9.0, 8.9, 12.0), or nullopt when the text is none of these.
std::optional<double> parse_compute_capability(const std::string& text);

// The `--metrics` argument for compute capability `cc` (nullopt: every architecture's names at
// once; ncu leaves out the names a chip lacks, without a word): kNcuMetrics (time, warp
// instructions, scalar FLOPs, L1/L2/DRAM bytes, shared wavefronts) plus the tensor counters that
// architecture has:
//   7.0, 7.2  sm__inst_executed_pipe_tensor.sum (Volta's one shape, HMMA.884: 512 FLOPs each)
//   7.5       sm__inst_executed_pipe_tensor.sum (instruction points only: several HMMA shapes)
//   8.x       sm__ops_path_tensor_src_{fp16_dst_fp16,fp16_dst_fp32,bf16_dst_fp32,tf32_dst_fp32,
//             int8,int4}[, fp64 on 8.0][, fp8 on 8.9]
//   9.0       sm__ops_path_tensor_src_{fp16,bf16_dst_fp32,tf32_dst_fp32,fp8,int8,fp64}
//   10.x,12.x the 8.x/9.0 names plus the grouped src_fp4_fp6_fp8_dst_{fp16,fp32}
// Tensor totals and their parts are never added together (ncu_tensor.hpp), so asking for a total
// and a part the chip may also have is harmless.
std::string ncu_metrics_for(std::optional<double> cc);

}  // namespace roofprobe
