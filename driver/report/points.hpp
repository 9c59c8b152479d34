// Application kernel points for the roofline views (`roofprobe plot --points FILE.csv`) and their
// conversion from an Nsight Compute CSV export (`roofprobe points --ncu-csv FILE`).
//
// Points file: CSV with a header naming the columns (any order, case-insensitive):
//   kernel,level,intensity,performance[,kind]
//   kernel       the kernel's name (quote it when it holds commas)
//   level        a memory level of the machine file (L1, shared, L2, HBM, DRAM, ...)
//   intensity    kind flop: FLOP per byte moved at that level;
//                kind instruction: warp instructions per transaction at that level
//                (32-byte sectors; 128-byte wavefronts for shared)
//   performance  kind flop: GFLOP/s; kind instruction: warp GIPS (both 1e9)
//   kind         flop | instruction (optional column; default flop)
#pragma once

#include <string>
#include <vector>

namespace roofprobe {

struct KernelPoint {
  std::string kernel;
  std::string level;
  double intensity = 0;
  double performance = 0;
  std::string kind = "flop";  // flop | instruction
};

// Parses a points file's text; `source` names it in errors ("file:line: ..."). Throws InputError.
// The header's other columns (a profiler's time, a note) are not read; when `unused_columns` is
// given, their names are put there, so a caller can say that they are not drawn.
std::vector<KernelPoint> parse_points_csv(const std::string& text, const std::string& source,
                                          std::vector<std::string>* unused_columns = nullptr);
// Reads a points file; throws InputError (unreadable, malformed, no points).
std::vector<KernelPoint> read_points_csv(const std::string& path, std::vector<std::string>* unused_columns = nullptr);
// The points file text (header kernel,level,intensity,performance,kind).
std::string points_to_csv(const std::vector<KernelPoint>& points);

// The Nsight Compute metrics `points --ncu-csv` reads, as one `--metrics` argument: time, warp
// instructions, FP64/FP32/FP16 add/mul/fma thread instructions, the tensor pipe, and the L1, L2
// and DRAM bytes and shared-memory wavefronts (NERSC's byte recipe), for any architecture.
// `points --ncu-metrics` adds the tensor totals of one architecture (ncu_metrics.hpp); docs/NCU.md
// shows the Hopper list.
inline constexpr const char* kNcuMetrics =
    "gpu__time_duration.sum,smsp__inst_executed.sum,"
    "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum,smsp__sass_thread_inst_executed_op_dmul_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_hadd_pred_on.sum,smsp__sass_thread_inst_executed_op_hmul_pred_on.sum,"
    "smsp__sass_thread_inst_executed_op_hfma_pred_on.sum,sm__inst_executed_pipe_tensor.sum,"
    "l1tex__t_bytes.sum,lts__t_bytes.sum,dram__bytes.sum,"
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum";

// The base name of a kernel as Nsight Compute prints it, without return type, namespaces,
// template arguments or argument list:
// "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4, ...>(long, ...)"
// -> "distribution_elementwise_grid_stride_kernel". A name it cannot take apart is kept whole.
std::string kernel_base_name(const std::string& full);

struct NcuOptions {
  std::string dram_level = "HBM";  // the level name the dram__ metrics get
  // FLOPs of one tensor-pipe (and HMMA) warp instruction; 0: by the launch's compute capability
  // (ncu_tensor.hpp), V100's 512 where the export has no CC column.
  double tensor_flops_per_instruction = 0;
  // Keep ncu's whole kernel names; otherwise base names (kernel_base_name), numbered "#1", "#2"
  // where kernels share one (instances of one template).
  bool full_names = false;
};

struct NcuConversion {
  std::vector<KernelPoint> points;
  std::vector<std::string> notes;  // what was assumed or left out, one line each
};

// Converts an Nsight Compute CSV export into kernel points. Reads both layouts ncu writes:
// `--page raw` (one row per launch, a metric per column, a units row under the header) and
// `--page details` of --metrics (one row per metric: "Metric Name", "Metric Unit", "Metric
// Value"); a details page of sections only, which holds no counter, is refused. Only the columns
// below are read and unit-checked; program output and ==PROF== lines before the header and every
// other column are ignored. Launches of the same kernel are summed. Values may carry thousands
// separators and scaled units (usecond, Ksector, byte/s, hz, ...); a counter missing as a count
// is taken from its .per_second or .per_cycle_elapsed rate. Throws InputError (one line naming
// the row or column) on a torn row, a non-finite or negative counter, a column read twice, a
// unit that does not fit its column, numbers of another locale, or when nothing converts.
//
//   FLOPs        sum over d, f, h of add + mul + 2 x fma (smsp__ or sm__
//                sass_thread_inst_executed_op_<p><op>_pred_on.sum), plus the tensor FLOPs
//                (tensor_work in ncu_tensor.hpp: op counters, per-kind or pipe instructions)
//   instructions smsp__inst_executed.sum (warp instructions)
//   L1           l1tex__t_sectors_pipe_lsu_mem_global_op_{ld,st}.sum sectors (32 B), else l1tex__t_bytes.sum
//   shared       l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum wavefronts (128 B)
//   L2           lts__t_sectors_op_{read,write,atom,red}.sum sectors (32 B), else lts__t_bytes.sum
//   dram_level   dram__sectors_{read,write}.sum sectors (32 B), else dram__bytes[_{read,write}].sum
//   time         gpu__time_duration.sum, else sm__cycles_elapsed.avg / sm__cycles_elapsed.avg.per_second
NcuConversion convert_ncu_csv(const std::string& text, const std::string& source, const NcuOptions& options = {});

}  // namespace roofprobe
