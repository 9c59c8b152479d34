// Tensor FLOPs of an Nsight Compute launch: the op counters are exact and counted once per data
// path, per-kind instruction counts use the shape of the launch's compute capability, and what
// has no one figure (Hopper's GMMA) is left uncounted and said, never guessed.
#include <gtest/gtest.h>

#include "driver/report/ncu_tensor.hpp"
#include "driver/report/points.hpp"

namespace roofprobe {
namespace {

using Counters = std::map<std::string, double>;

TEST(NcuTensor, FlopsPerInstructionFollowTheShapeOfEachComputeCapability) {
  // 2 x M x N x K of the SASS shape the libraries issue there.
  EXPECT_EQ(tensor_flops_per_instruction("hmma", 7.0), 2.0 * 8 * 8 * 4);    // HMMA.884
  EXPECT_EQ(tensor_flops_per_instruction("hmma", 7.5), 2.0 * 16 * 8 * 8);   // HMMA.1688
  EXPECT_EQ(tensor_flops_per_instruction("hmma", 8.0), 2.0 * 16 * 8 * 16);  // HMMA.16816
  EXPECT_EQ(tensor_flops_per_instruction("hmma", 8.9), 4096.0);
  EXPECT_EQ(tensor_flops_per_instruction("imma", 7.5), 2.0 * 8 * 8 * 16);   // IMMA.8816
  EXPECT_EQ(tensor_flops_per_instruction("imma", 8.6), 2.0 * 16 * 8 * 32);  // IMMA.16832
  EXPECT_EQ(tensor_flops_per_instruction("dmma", 8.0), 2.0 * 8 * 8 * 4);    // DMMA.884
  EXPECT_FALSE(tensor_flops_per_instruction("imma", 7.0));                  // Volta has no IMMA
  EXPECT_FALSE(tensor_flops_per_instruction("dmma", 9.0));                  // four f64 shapes on Hopper
  EXPECT_FALSE(tensor_flops_per_instruction("gmma", 9.0));                  // wgmma: N from 8 to 256
}

TEST(NcuTensor, OpCountersAreExactAndEachDataPathCountsOnce) {
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
  EXPECT_EQ(w.how, "ops");
  EXPECT_DOUBLE_EQ(w.flops, 1000 + 30 + 20 + 7);
  EXPECT_TRUE(w.uncounted.empty());

  // Without the total: its accumulator parts; instruction-kind qualified counters are disjoint.
  c = {{"sm__ops_path_tensor_src_fp16_dst_fp32.sum", 600},
       {"sm__ops_path_tensor_src_fp16_dst_fp16.sum", 400},
       {"sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32.sum", 50},
       {"sm__ops_path_tensor_op_gmma_src_bf16_dst_fp32.sum", 70}};
  EXPECT_DOUBLE_EQ(tensor_work(c, 0).flops, 600 + 400 + 50 + 70);
}

TEST(NcuTensor, InstructionKindsUseTheirComputeCapabilityAndGmmaIsNotGuessed) {
  Counters c = {{"CC", 8.0},
                {"sm__inst_executed_pipe_tensor_op_hmma.sum", 10},
                {"sm__inst_executed_pipe_tensor_op_dmma.sum", 2},
                {"sm__inst_executed_pipe_tensor.sum", 12}};  // the same instructions again
  TensorWork w = tensor_work(c, 0);
  EXPECT_DOUBLE_EQ(w.flops, 10 * 4096.0 + 2 * 512.0);
  EXPECT_DOUBLE_EQ(w.instructions, 12);
  EXPECT_EQ(w.how, "hmma@8.0,dmma@8.0");

  c = {{"CC", 9.0}, {"sm__inst_executed_pipe_tensor_op_gmma.sum", 5}, {"sm__inst_executed_pipe_tensor_op_hmma.sum", 1}};
  w = tensor_work(c, 0);
  EXPECT_DOUBLE_EQ(w.flops, 4096.0);
  EXPECT_EQ(w.uncounted, "gmma@9.0");

  // The one pipe counter on Hopper mixes every instruction kind: no figure unless the user gives one.
  c = {{"CC", 9.0}, {"sm__inst_executed_pipe_tensor.sum", 5}};
  w = tensor_work(c, 0);
  EXPECT_TRUE(w.how.empty());
  EXPECT_EQ(w.uncounted, "pipe@9.0");
  w = tensor_work(c, 2048);
  EXPECT_DOUBLE_EQ(w.flops, 5 * 2048.0);
  // Without a CC column: V100's HMMA.884, the figure of NERSC's recipe.
  EXPECT_DOUBLE_EQ(tensor_work({{"sm__inst_executed_pipe_tensor.sum", 5}}, 0).flops, 5 * 512.0);
}

TEST(NcuTensor, AConversionSaysHowTensorFlopsWereCountedAndWhichKernelHadNone) {
  const std::string csv =
      "\"ID\",\"Kernel Name\",\"CC\",\"gpu__time_duration.sum\",\"sm__inst_executed_pipe_tensor_op_gmma.sum\","
      "\"sm__inst_executed_pipe_tensor_op_hmma.sum\",\"dram__bytes.sum\"\n"
      "\"\",\"\",\"\",\"usecond\",\"inst\",\"inst\",\"byte\"\n"
      "\"0\",\"sm90_xmma_gemm_f16f16_f32\",\"9.0\",\"100\",\"1000\",\"0\",\"1000000\"\n"
      "\"1\",\"ampere_h16816gemm\",\"9.0\",\"100\",\"0\",\"1000\",\"1000000\"\n";
  const NcuConversion r = convert_ncu_csv(csv, "t.csv");
  bool hmma = false, gmma_named = false;
  for (const std::string& n : r.notes) {
    hmma |= n.find("hmma@9.0") != std::string::npos;
    gmma_named |= n.find("'sm90_xmma_gemm_f16f16_f32'") != std::string::npos && n.find("gmma@9.0") != std::string::npos;
  }
  EXPECT_TRUE(hmma);
  EXPECT_TRUE(gmma_named);
  ASSERT_EQ(r.points.size(), 1u);  // the GMMA kernel has no FLOP point rather than a guessed one
  EXPECT_EQ(r.points[0].kernel, "ampere_h16816gemm");
  EXPECT_NEAR(r.points[0].performance, 1000 * 4096.0 / 100e-6 / 1e9, 1e-9);
}

}  // namespace
}  // namespace roofprobe
