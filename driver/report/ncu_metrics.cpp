// points --ncu-metrics: the `--metrics` list per architecture (see ncu_metrics.hpp).
#include "driver/report/ncu_metrics.hpp"

#include <cmath>
#include <regex>
#include <set>
#include <vector>

#include "driver/report/points.hpp"

namespace roofprobe {

std::optional<double> parse_compute_capability(const std::string& text) {
  std::smatch m;
  // "9.0", "12.1"
  static const std::regex dotted(R"(\s*([0-9]{1,2})\.([0-9])\s*)");
  // "sm_90", "sm_90a", "compute_120", "90": the last digit is the minor version.
  static const std::regex packed(R"(\s*(?:sm_|compute_)?([0-9]{1,2})([0-9])[af]?\s*)", std::regex::icase);
  if (!std::regex_match(text, m, dotted) && !std::regex_match(text, m, packed)) return std::nullopt;
  const int major = std::stoi(m[1]);
  if (major < 1) return std::nullopt;  // "0.0", "sm_00": no GPU has major version 0
  return major + std::stoi(m[2]) / 10.0;
}

namespace {

// The tensor counters of one architecture, without the ".sum".
std::vector<std::string> tensor_counters(double cc) {
  const int tenths = static_cast<int>(std::lround(cc * 10));
  const std::string ops = "sm__ops_path_tensor_src_";
  // Before Ampere there are no tensor-path op counters: the pipe's instruction count is all there is.
  if (tenths < 80) return {"sm__inst_executed_pipe_tensor"};
  std::vector<std::string> out;
  if (tenths < 90) {  // Ampere, Ada
    for (const char* t : {"fp16_dst_fp16", "fp16_dst_fp32", "bf16_dst_fp32", "tf32_dst_fp32", "int8", "int4"})
      out.push_back(ops + t);
    if (tenths == 80) out.push_back(ops + "fp64");  // A100's DMMA; GA10x and AD10x have none
    if (tenths == 89) out.push_back(ops + "fp8");
    return out;
  }
  if (tenths < 100) {  // Hopper: `ncu --query-metrics --chip gh100`
    for (const char* t : {"fp16", "bf16_dst_fp32", "tf32_dst_fp32", "fp8", "int8", "fp64"}) out.push_back(ops + t);
    return out;
  }
  // Blackwell: the low-precision types share one grouped path; a total and a part it may also
  // have are both asked for, and never added together.
  for (const char* t : {"fp16", "fp16_dst_fp16", "fp16_dst_fp32", "bf16_dst_fp32", "tf32_dst_fp32",
                        "fp4_fp6_fp8_dst_fp16", "fp4_fp6_fp8_dst_fp32", "fp8_dst_fp16", "fp8_dst_fp32", "int8"})
    out.push_back(ops + t);
  if (tenths < 110) out.push_back(ops + "fp64");  // B200/B300; the GeForce and Spark parts have none
  return out;
}

}  // namespace

std::string ncu_metrics_for(std::optional<double> cc) {
  std::vector<std::string> tensor;
  if (cc) {
    tensor = tensor_counters(*cc);
  } else {
    std::set<std::string> all;
    for (double c : {7.0, 8.0, 8.9, 9.0, 10.0})
      for (const std::string& name : tensor_counters(c)) all.insert(name);
    tensor.assign(all.begin(), all.end());
  }
  std::string out = kNcuMetrics;
  for (const std::string& name : tensor)
    if (out.find("," + name + ".sum") == std::string::npos) out += "," + name + ".sum";
  return out;
}

}  // namespace roofprobe
