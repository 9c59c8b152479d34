// The L1 / shared-memory split of every CUDA probe (kernels/cuda/backend/carveout.hpp): each
// probe states it in its own folder (RP_CUDA_CARVEOUT), once, and the percentages the driver is
// asked for keep the blocks per SM each kernel reaches. Plain C++: no CUDA header.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"
#include "kernels/cuda/backend/carveout.hpp"

namespace roofprobe {
namespace {

// Every CUDA probe states its split: a new probe without a row would run at the driver's choice.
TEST(Carveout, EveryCudaProbeStatesItsSplit) {
  const std::vector<const Probe*> probes = Registry::instance().probes("cuda");
  if (probes.empty()) GTEST_SKIP() << "the CUDA backend is not built";
  for (const Probe* p : probes) EXPECT_NO_THROW(cuda::carveout_of(p->info().name)) << p->info().name;
  EXPECT_THROW(cuda::carveout_of("a_probe_without_a_row"), std::logic_error);
}

// The split lives in the probe's own folder (RP_CUDA_CARVEOUT); a second statement is refused.
TEST(Carveout, AProbeStatesItsSplitOnce) {
  if (Registry::instance().probes("cuda").empty()) GTEST_SKIP() << "the CUDA backend is not built";
  EXPECT_THROW(cuda::CarveoutRegistrar("shared", cuda::Carveout::MaxL1), std::logic_error);
  const std::string text = cuda::carveout_table_text();
  ASSERT_NE(text.find("bandwidth: max L1"), std::string::npos) << text;
  ASSERT_NE(text.find("shared: max shared"), std::string::npos) << text;
  EXPECT_LT(text.find("bandwidth: max L1"), text.find("shared: max shared")) << text;  // sorted by name
}

TEST(Carveout, SharedMemoryProbesGetTheLargestSharedMemoryAndTheRestTheLargestL1) {
  if (Registry::instance().probes("cuda").empty()) GTEST_SKIP() << "the CUDA backend is not built";
  EXPECT_EQ(cuda::carveout_of("shared"), cuda::Carveout::MaxShared);
  EXPECT_EQ(cuda::carveout_of("tensor.tile"), cuda::Carveout::MaxShared);  // wgmma, tcgen05 stage tiles there
  EXPECT_EQ(cuda::carveout_of("bandwidth"), cuda::Carveout::MaxL1);        // its L1 level
  EXPECT_EQ(cuda::carveout_of("tensor"), cuda::Carveout::MaxL1);
}

// The percentages asked of the driver: plain arithmetic, tested in every build.
TEST(Carveout, PercentagesKeepTheBlocksPerSm) {
  // cudaSharedmemCarveoutMaxShared; MaxL1 for a kernel without shared memory: cudaSharedmemCarveoutMaxL1.
  EXPECT_EQ(cuda::carveout_percent(cuda::Carveout::MaxShared, 8, 1024, 1024, 167936), 100);
  EXPECT_EQ(cuda::carveout_percent(cuda::Carveout::MaxL1, 8, 0, 1024, 167936), 0);
  // An A100 bandwidth block (128 B of warp sums + the 1 KiB reserve = 1152 B, 8 per SM) keeps its
  // 8 blocks: 9216 B of the 164 KiB, 5.5% -> 6% (the driver rounds up to a 16 KiB configuration).
  EXPECT_EQ(cuda::carveout_percent(cuda::Carveout::MaxL1, 8, 128, 1024, 167936), 6);
  // V100 (no reserve): 64 B in 128-byte units, 32 blocks of 64 threads: 4 KiB of 96 KiB -> 5%.
  EXPECT_EQ(cuda::carveout_percent(cuda::Carveout::MaxL1, 32, 64, 0, 98304), 5);
  EXPECT_EQ(cuda::carveout_percent(cuda::Carveout::MaxL1, 64, 100000, 0, 98304), 100);  // never above 100
}

}  // namespace
}  // namespace roofprobe
