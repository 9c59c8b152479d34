// Tensor FLOPs of an Nsight Compute launch: the op counters count each data path once,
// instruction counts are used only where the architecture has one shape for them, and a kernel
// whose tensor work has no figure gets no FLOP point (never a guess, never its scalar FLOPs alone).
#include <gtest/gtest.h>

#include "driver/report/ncu_tensor.hpp"
#include "driver/report/points.hpp"

namespace roofprobe {
namespace {

using Counters = std::map<std::string, double>;

bool noted(const NcuConversion& r, const std::string& a, const std::string& b = "") {
  for (const std::string& n : r.notes)
    if (n.find(a) != std::string::npos && n.find(b) != std::string::npos) return true;
  return false;
}

TEST(NcuTensor, OnlyArchitecturesWithOneShapePerKindHaveAFigure) {
  // 2 x M x N x K of the one SASS shape: Volta's HMMA.884 and A100's DMMA.884.
  EXPECT_EQ(ncu_tensor_shape("hmma", 7.0)->flops, 2.0 * 8 * 8 * 4);
  EXPECT_EQ(ncu_tensor_shape("hmma", 7.2)->flops, 512);
  EXPECT_EQ(ncu_tensor_shape("dmma", 8.0)->flops, 2.0 * 8 * 8 * 4);
  EXPECT_STREQ(ncu_tensor_shape("dmma", 8.0)->shape, "DMMA.884");
  // Several shapes: Turing/Ampere/Ada HMMA (.1688 and .16816, f16 and tf32), IMMA (.8816/.16832),
  // Hopper's four DMMA shapes, GMMA of any N.
  for (double cc : {7.5, 8.0, 8.6, 8.9, 9.0, 12.0}) EXPECT_FALSE(ncu_tensor_shape("hmma", cc)) << cc;
  EXPECT_FALSE(ncu_tensor_shape("imma", 8.0));
  EXPECT_FALSE(ncu_tensor_shape("dmma", 9.0));
  EXPECT_FALSE(ncu_tensor_shape("gmma", 9.0));
}

TEST(NcuTensor, OpCountersCountEachDataPathOnce) {
  // A total over accumulators, its parts, and its sparsity halves: the total alone.
  Counters c = {{"CC", 8.0},
                {"sm__ops_path_tensor_src_fp16.sum", 1000},
                {"sm__ops_path_tensor_src_fp16_dst_fp32.sum", 600},
                {"sm__ops_path_tensor_src_fp16_dst_fp16.sum", 400},
                {"sm__ops_path_tensor_src_fp16_dst_fp32_sparsity_off.sum", 600},
                {"sm__ops_path_tensor_src_tf32_dst_fp32_sparsity_off.sum", 30},
                {"sm__ops_path_tensor_src_tf32_dst_fp32_sparsity_on.sum", 20},
                {"sm__ops_path_tensor_src_fp64.sum", 7},
                {"sm__inst_executed_pipe_tensor_op_hmma.sum", 99}};  // an estimate the ops replace
  TensorWork w = tensor_work(c, 0);
  ASSERT_EQ(w.counted.size(), 1u);
  EXPECT_NE(w.counted[0].find("tensor-path op counters"), std::string::npos) << w.counted[0];
  EXPECT_DOUBLE_EQ(w.flops, 1000 + 30 + 20 + 7);
  EXPECT_TRUE(w.uncounted.empty());

  // Without the total: per accumulator, the unqualified counter, else its kinds (disjoint).
  c = {{"sm__ops_path_tensor_src_fp16_dst_fp32.sum", 600},
       {"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32.sum", 600},  // inside the unqualified one
       {"sm__ops_path_tensor_op_hmma_src_fp16_dst_fp16.sum", 400},  // a path only qualified counters cover
       {"sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum", 50},
       {"sm__ops_path_tensor_op_gmma_src_bf16_dst_fp32.sum", 70}};
  EXPECT_DOUBLE_EQ(tensor_work(c, 0).flops, 600 + 400 + 50 + 70);
  // Kind-qualified totals only.
  c = {{"sm__ops_path_tensor_op_hmma_src_fp16.sum", 5}, {"sm__ops_path_tensor_op_gmma_src_fp16.sum", 6}};
  EXPECT_DOUBLE_EQ(tensor_work(c, 0).flops, 11);
  // Op counters that are all 0: no tensor work, and nothing to say about it.
  w = tensor_work({{"sm__ops_path_tensor_src_fp16_dst_fp32.sum", 0}}, 0);
  EXPECT_TRUE(w.counted.empty());
  EXPECT_TRUE(w.uncounted.empty());
}

TEST(NcuTensor, InstructionCountsNeedOneShapeOrTheUsersFigure) {
  Counters c = {{"CC", 8.0}, {"sm__inst_executed_pipe_tensor_op_dmma.sum", 2}};
  TensorWork w = tensor_work(c, 0);
  EXPECT_DOUBLE_EQ(w.flops, 2 * 512.0);
  EXPECT_EQ(w.counted, std::vector<std::string>{
                           "tensor instructions dmma@8.0 counted as 512 FLOPs each (the one shape there, DMMA.884)"});
  // An A100's HMMA may be .1688 or .16816, f16 or tf32: no figure of ours, the user's if given.
  c = {{"CC", 8.0}, {"sm__inst_executed_pipe_tensor_op_hmma.sum", 10}};
  EXPECT_EQ(tensor_work(c, 0).uncounted, "hmma@8.0");
  w = tensor_work(c, 1024);
  EXPECT_DOUBLE_EQ(w.flops, 10 * 1024.0);
  EXPECT_EQ(w.counted,
            std::vector<std::string>{"tensor instructions hmma counted as 1024 FLOPs each (--tensor-flops-per-inst)"});
  // Hopper's GMMA: never guessed.
  c = {{"CC", 9.0}, {"sm__inst_executed_pipe_tensor_op_gmma.sum", 5}, {"sm__inst_executed_pipe_tensor.sum", 5}};
  EXPECT_EQ(tensor_work(c, 0).uncounted, "gmma@9.0");
  // A per-kind counter without a CC column: no architecture, no shape.
  EXPECT_EQ(tensor_work({{"sm__inst_executed_pipe_tensor_op_hmma.sum", 3}}, 0).uncounted, "hmma (no CC column)");
  // Zero instructions are no tensor work.
  EXPECT_TRUE(tensor_work({{"CC", 9.0}, {"sm__inst_executed_pipe_tensor_op_gmma.sum", 0}}, 0).uncounted.empty());
}

TEST(NcuTensor, ThePipeCounterIs512OnlyWhereThatIsVoltasOneShape) {
  EXPECT_DOUBLE_EQ(tensor_work({{"CC", 7.0}, {"sm__inst_executed_pipe_tensor.sum", 5}}, 0).flops, 5 * 512.0);
  // No CC column: NERSC's V100 recipe, said as such.
  const TensorWork nersc = tensor_work({{"sm__inst_executed_pipe_tensor.sum", 5}}, 0);
  EXPECT_DOUBLE_EQ(nersc.flops, 5 * 512.0);
  ASSERT_EQ(nersc.counted.size(), 1u);
  EXPECT_NE(nersc.counted[0].find("no CC column"), std::string::npos);
  for (double cc : {8.0, 9.0}) {
    const TensorWork w = tensor_work({{"CC", cc}, {"sm__inst_executed_pipe_tensor.sum", 5}}, 0);
    EXPECT_TRUE(w.counted.empty()) << cc;
    EXPECT_EQ(w.uncounted.rfind("pipe@", 0), 0u) << cc;
  }
  EXPECT_DOUBLE_EQ(tensor_work({{"CC", 9.0}, {"sm__inst_executed_pipe_tensor.sum", 5}}, 2048).flops, 5 * 2048.0);
  // A pipe counter of 0 (every export of the default metric list has one): nothing to note.
  const TensorWork none = tensor_work({{"CC", 9.0}, {"sm__inst_executed_pipe_tensor.sum", 0}}, 0);
  EXPECT_TRUE(none.counted.empty());
  EXPECT_TRUE(none.uncounted.empty());
}

TEST(NcuTensor, AKernelWithUncountedTensorWorkGetsNoFlopPoint) {
  // The GMMA GEMM's epilogue FFMAs would give it a FLOP point orders of magnitude too low.
  const std::string csv =
      "\"ID\",\"Kernel Name\",\"CC\",\"gpu__time_duration.sum\",\"sm__inst_executed_pipe_tensor_op_gmma.sum\","
      "\"sm__inst_executed_pipe_tensor_op_dmma.sum\",\"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum\","
      "\"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum\",\"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum\","
      "\"smsp__inst_executed.sum\",\"dram__bytes.sum\"\n"
      "\"\",\"\",\"\",\"usecond\",\"inst\",\"inst\",\"inst\",\"inst\",\"inst\",\"inst\",\"byte\"\n"
      "\"0\",\"sm90_xmma_gemm_f16f16_f32\",\"9.0\",\"100\",\"1000\",\"0\",\"0\",\"5000\",\"0\",\"20000\","
      "\"1000000\"\n"
      "\"1\",\"ampere_fp64_dgemm\",\"8.0\",\"100\",\"0\",\"1000\",\"0\",\"0\",\"0\",\"20000\",\"1000000\"\n";
  const NcuConversion r = convert_ncu_csv(csv, "t.csv");
  EXPECT_TRUE(noted(r, "'sm90_xmma_gemm_f16f16_f32'", "gmma@9.0"));
  EXPECT_TRUE(noted(r, "dmma@8.0 counted as 512 FLOPs each", "DMMA.884"));
  bool gemm_flop = false, gemm_instruction = false, dgemm_flop = false;
  for (const KernelPoint& p : r.points) {
    gemm_flop |= p.kernel == "sm90_xmma_gemm_f16f16_f32" && p.kind == "flop";
    gemm_instruction |= p.kernel == "sm90_xmma_gemm_f16f16_f32" && p.kind == "instruction";
    if (p.kernel == "ampere_fp64_dgemm" && p.kind == "flop") {
      dgemm_flop = true;
      EXPECT_NEAR(p.performance, 1000 * 512.0 / 100e-6 / 1e9, 1e-9);
    }
  }
  EXPECT_FALSE(gemm_flop);
  EXPECT_TRUE(gemm_instruction);  // its instruction point stands: instructions are counted exactly
  EXPECT_TRUE(dgemm_flop);
  // An export with a tensor pipe counter of 0 everywhere says nothing about tensor FLOPs.
  const std::string quiet =
      "\"ID\",\"Kernel Name\",\"CC\",\"gpu__time_duration.sum\",\"sm__inst_executed_pipe_tensor.sum\","
      "\"smsp__sass_thread_inst_executed_op_dadd_pred_on.sum\",\"smsp__sass_thread_inst_executed_op_dfma_pred_on.sum\","
      "\"smsp__sass_thread_inst_executed_op_dmul_pred_on.sum\",\"dram__bytes.sum\"\n"
      "\"\",\"\",\"\",\"usecond\",\"inst\",\"inst\",\"inst\",\"inst\",\"byte\"\n"
      "\"0\",\"daxpy\",\"9.0\",\"10\",\"0\",\"0\",\"1000\",\"0\",\"24000\"\n";
  EXPECT_FALSE(noted(convert_ncu_csv(quiet, "q.csv"), "tensor"));
}

}  // namespace
}  // namespace roofprobe
