// Every compute capability from 7.0 to 12.1 has an explicit row in each per-architecture GPU
// table (kernels/cuda/backend/gpu_arch.hpp, kernels/cuda/backend/gpu_arith_rates.hpp, the dense
// tensor table of kernels/cuda/tensor/model.hpp): figures, or zeros with an "unknown: ..." reason
// the row gives itself. A row removed falls to the tables' default (zeros, no reason) and fails
// here. Where the CUDA flops probe is built in, also that it records theoretical_unknown.<ceiling>
// for a ceiling without a rate. Host-only: the tables are inline functions without CUDA headers.
#include <gtest/gtest.h>

#include <string>

#include "kernels/contract/probe.hpp"
#include "kernels/cuda/backend/gpu_arch.hpp"
#include "kernels/cuda/backend/gpu_arith_rates.hpp"
#include "kernels/cuda/tensor/model.hpp"

namespace roofprobe {
namespace {

struct Cc {
  int major, minor;
};
constexpr Cc kEveryCc[] = {{7, 0}, {7, 2},  {7, 5},  {8, 0},  {8, 6},  {8, 7}, {8, 9},
                           {9, 0}, {10, 0}, {10, 3}, {11, 0}, {12, 0}, {12, 1}};

std::string text(const Cc& cc) { return std::to_string(cc.major) + "." + std::to_string(cc.minor); }

bool says_unknown(const char* why) { return std::string(why).rfind("unknown: ", 0) == 0; }

TEST(GpuTablesCoverEveryCc, ArchFigures) {
  for (const Cc& cc : kEveryCc) {
    const GpuArchFigures a = gpu_arch_figures(cc.major, cc.minor);
    EXPECT_NE(std::string(a.family), "") << "cc " << text(cc);
    const bool some_zero =
        a.fp32_lanes_per_sm == 0 || a.fp64_lanes_per_sm == 0 || a.l1_bytes_per_sm == 0 || a.schedulers_per_sm == 0;
    if (some_zero)
      EXPECT_TRUE(says_unknown(a.unknown)) << "cc " << text(cc) << ": a 0 figure without a reason";
    else
      EXPECT_STREQ(a.unknown, "") << "cc " << text(cc) << ": every figure known, yet a reason";
  }
  EXPECT_EQ(gpu_arch_figures(12, 1).fp32_lanes_per_sm, 128);  // GB10: the 12.0 SM
  EXPECT_EQ(gpu_arch_figures(10, 3).fp32_lanes_per_sm, 128);  // B300: the 10.0 SM ...
  EXPECT_EQ(gpu_arch_figures(10, 3).fp64_lanes_per_sm, 0);    // ... without B200's FP64
}

TEST(GpuTablesCoverEveryCc, ArithRates) {
  for (const Cc& cc : kEveryCc) {
    const GpuArithRates r = gpu_arith_rates(cc.major, cc.minor);
    const bool bf16_exists = cc.major >= 8;
    const bool some_zero = r.fp16 == 0 || (bf16_exists && r.bf16 == 0) || r.int32_mad == 0 || r.int32_add == 0;
    if (some_zero)
      EXPECT_TRUE(says_unknown(r.unknown)) << "cc " << text(cc) << ": a 0 rate without a reason";
    else
      EXPECT_STREQ(r.unknown, "") << "cc " << text(cc) << ": every rate known, yet a reason";
    if (r.fp16 > 0 || r.int32_mad > 0) EXPECT_NE(std::string(r.source), "") << "cc " << text(cc);
    // What the flops probe records: a reason for exactly the ceilings without a peak.
    const auto peaks = gpu_arith_peaks(cc.major, cc.minor, 100, 1000, "nominal");
    const auto unknown = gpu_arith_unknown(cc.major, cc.minor);
    for (const char* name : {"FP16.FMA", "FP16.noFMA", "BF16.FMA", "BF16.noFMA", "INT32.FMA", "INT32.noFMA"}) {
      const bool bf16 = std::string(name).rfind("BF16", 0) == 0;
      if (bf16 && !bf16_exists) {
        EXPECT_EQ(peaks.count(name) + unknown.count(name), 0u) << name << " cc " << text(cc);
        continue;
      }
      EXPECT_EQ(peaks.count(name) + unknown.count(name), 1u) << name << " cc " << text(cc);
      if (unknown.count(name) != 0) {
        EXPECT_TRUE(says_unknown(unknown.at(name).c_str())) << unknown.at(name);
        EXPECT_NE(unknown.at(name).find(text(cc)), std::string::npos) << unknown.at(name);
      }
    }
  }
  // A compute capability without a row: zeros, and the reason says the table has none.
  EXPECT_NE(gpu_arith_unknown(12, 3).at("FP16.FMA").find("has no row"), std::string::npos);
}

TEST(GpuTablesCoverEveryCc, TensorPeaks) {
  for (const Cc& cc : kEveryCc) {
    const int code = cc.major * 10 + cc.minor;
    // fp16 inputs with FP32 accumulate run on the tensor cores of every one of them.
    const TensorPeak fp16 = tensor_peak_per_sm(TensorType::Fp16Fp32, code);
    if (fp16.flops_per_clk_per_sm > 0)
      EXPECT_FALSE(says_unknown(fp16.source)) << "cc " << text(cc) << ": " << fp16.source;
    else
      EXPECT_TRUE(says_unknown(fp16.source)) << "cc " << text(cc) << ": a 0 figure without a reason";
    // Every type of an unknown row carries the row's reason.
    for (int i = 0; i < kTensorTypeCount; ++i) {
      const TensorPeak p = tensor_peak_per_sm(static_cast<TensorType>(i), code);
      if (p.flops_per_clk_per_sm > 0) EXPECT_FALSE(says_unknown(p.source)) << "cc " << text(cc) << " type " << i;
      if (fp16.flops_per_clk_per_sm == 0) EXPECT_STREQ(p.source, fp16.source) << "cc " << text(cc) << " type " << i;
    }
  }
}

// The registered CUDA flops probe (present only in CUDA builds, no GPU needed): a ceiling without a
// rate is said as theoretical_unknown.<ceiling>, the convention of the tensor probe.
TEST(GpuTablesCoverEveryCc, FlopsProbeSaysWhyAPeakIsMissing) {
  const Probe* probe = Registry::instance().probe("cuda", "flops");
  if (probe == nullptr) GTEST_SKIP() << "built without CUDA";
  auto device = [](const char* cc) {
    DeviceInfo d;
    d.backend = "cuda";
    d.compute_units = 100;
    d.clock_measured_mhz = 1500;
    d.extra["compute_capability"] = cc;
    return d;
  };
  DeviceInfo b200 = device("10.0");
  probe->add_theoretical_peaks(b200);
  EXPECT_EQ(b200.theoretical_gflops.count("FP16.FMA"), 0u);
  ASSERT_EQ(b200.extra.count("theoretical_unknown.FP16.FMA"), 1u);
  EXPECT_NE(b200.extra.at("theoretical_unknown.FP16.FMA").find("10.0"), std::string::npos);
  EXPECT_EQ(b200.extra.count("theoretical_unknown.INT32.noFMA"), 1u);

  DeviceInfo orin = device("8.7");  // int32 known, 16-bit not
  probe->add_theoretical_peaks(orin);
  EXPECT_EQ(orin.theoretical_gflops.count("INT32.FMA"), 1u);
  EXPECT_EQ(orin.extra.count("theoretical_unknown.INT32.FMA"), 0u);
  EXPECT_EQ(orin.extra.count("theoretical_unknown.BF16.FMA"), 1u);

  DeviceInfo h100 = device("9.0");
  probe->add_theoretical_peaks(h100);
  for (const auto& [key, value] : h100.extra) EXPECT_EQ(key.rfind("theoretical_unknown", 0), std::string::npos) << key;

  DeviceInfo v100 = device("7.0");  // no bf16 arithmetic: no BF16 ceiling, so nothing to say
  probe->add_theoretical_peaks(v100);
  EXPECT_EQ(v100.extra.count("theoretical_unknown.BF16.FMA"), 0u);
}

}  // namespace
}  // namespace roofprobe
