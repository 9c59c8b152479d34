// The CUDA FLOP probe's points on the GPU, every precision: each verifies against the host model
// (bit-exact for the 16-bit formats, exact modulo 2^32 for int32) and its rate stays below the
// theoretical peak at the measured clock (kernels/cuda/backend/gpu_arith_rates.hpp), by at most
// kTolerance. FP64 and FP32 peaks are known for every GPU the backend runs on; a 16-bit or int32
// peak missing from the rate table skips, as does bf16, with the probe's reason, before compute
// capability 8.0.
#include <gtest/gtest.h>

#include <cstdio>
#include <ostream>
#include <string>

#include "kernels/contract/probe.hpp"
#include "tests/gpu/gpu_test_support.hpp"

namespace roofprobe {
namespace {

using gpu_test::CudaProbeTest;
using gpu_test::device;
using gpu_test::kTolerance;

struct PrecisionCase {
  const char* precision;
  const char* form;
  int k;
  const char* ceiling;
  double min_fraction;  // of the theoretical peak; 0: no lower bound (memory-bound point)
  bool peak_required;   // the rate table has this peak for every GPU (FP64, FP32)
};

void PrintTo(const PrecisionCase& c, std::ostream* os) { *os << c.precision << "." << c.form << " K=" << c.k; }

class CudaFlopsPrecisionTest : public CudaProbeTest, public ::testing::WithParamInterface<PrecisionCase> {};

TEST_P(CudaFlopsPrecisionTest, VerifiesAndStaysBelowThePeak) {
  const PrecisionCase& c = GetParam();
  const Params params{{"precision", c.precision},
                      {"form", c.form},
                      {"flops_per_element", std::to_string(c.k)},
                      {"working_set_bytes", std::to_string(32u << 20)}};
  const Probe* probe = Registry::instance().probe("cuda", "flops");
  ASSERT_NE(probe, nullptr);
  const std::string why = probe->unsupported_reason(params, device());
  if (!why.empty()) GTEST_SKIP() << why;

  Work work;
  const double s = best_seconds("flops", params, 3, &work);
  const double gflops = rates_of(work, s).gflops;
  const auto peak = device().theoretical_gflops.find(c.ceiling);
  if (peak == device().theoretical_gflops.end()) {
    ASSERT_FALSE(c.peak_required) << "no theoretical " << c.ceiling;
    GTEST_SKIP() << "no theoretical " << c.ceiling << " for compute capability "
                 << device().extra.at("compute_capability") << " (verified: " << gflops << " GFLOP/s)";
  }
  std::printf("%s K=%d: %.1f G/s of %.1f theoretical (%.1f%%), launch %.3f ms\n", c.ceiling, c.k, gflops, peak->second,
              100 * gflops / peak->second, s * 1e3);
  EXPECT_LE(gflops, peak->second * kTolerance)
      << "faster than the theoretical peak: " << device().theoretical_basis.at(c.ceiling);
  EXPECT_GE(gflops, peak->second * c.min_fraction) << "far below the theoretical peak";
}

INSTANTIATE_TEST_SUITE_P(Points, CudaFlopsPrecisionTest,
                         ::testing::Values(PrecisionCase{"fp64", "fma", 1024, "FP64.FMA", 0.5, true},
                                           PrecisionCase{"fp64", "nofma", 8, "FP64.noFMA", 0.0, true},
                                           PrecisionCase{"fp32", "fma", 1024, "FP32.FMA", 0.5, true},
                                           PrecisionCase{"fp32", "nofma", 256, "FP32.noFMA", 0.5, true},
                                           PrecisionCase{"fp32", "fma", 1, "FP32.FMA", 0.0, true},
                                           PrecisionCase{"fp16", "fma", 1024, "FP16.FMA", 0.25, false},
                                           PrecisionCase{"fp16", "nofma", 256, "FP16.noFMA", 0.0, false},
                                           PrecisionCase{"fp16", "fma", 1, "FP16.FMA", 0.0, false},
                                           PrecisionCase{"bf16", "fma", 1024, "BF16.FMA", 0.25, false},
                                           PrecisionCase{"bf16", "nofma", 64, "BF16.noFMA", 0.0, false},
                                           PrecisionCase{"int32", "fma", 1024, "INT32.FMA", 0.25, false},
                                           PrecisionCase{"int32", "nofma", 1024, "INT32.noFMA", 0.0, false},
                                           PrecisionCase{"int32", "fma", 2, "INT32.FMA", 0.0, false}),
                         [](const ::testing::TestParamInfo<PrecisionCase>& i) {
                           return std::string(i.param.precision) + "_" + i.param.form + "_k" +
                                  std::to_string(i.param.k);
                         });

// The probe's own peaks are in the device description, with their provenance.
TEST_F(CudaProbeTest, FlopsAddsPrecisionPeaksWithTheirBasis) {
  const DeviceInfo& d = device();
  for (const char* name : {"FP16.FMA", "FP16.noFMA", "INT32.FMA", "INT32.noFMA"}) {
    const auto it = d.theoretical_gflops.find(name);
    if (it == d.theoretical_gflops.end()) continue;  // architecture not in the rate table
    EXPECT_GT(it->second, 0) << name;
    EXPECT_NE(d.theoretical_basis.at(name).find("results/clk/SM"), std::string::npos) << name;
  }
}

}  // namespace
}  // namespace roofprobe
