// points --ncu-csv: tensor FLOPs per launch (see ncu_tensor.hpp for the order of sources).
#include "driver/report/ncu_tensor.hpp"

#include <cmath>
#include <cstdio>
#include <regex>
#include <set>
#include <vector>

namespace roofprobe {

namespace {

// One sm__ops_path_tensor_* counter, split into its qualifiers ("" where absent).
struct OpsCounter {
  std::string op, src, dst, sparsity;
  double value = 0;
};

// The ops of one source type under one instruction-kind qualifier, each data path counted once:
// the total over accumulators if ncu wrote it, else the sum over accumulators; at each step a
// path without a sparsity split, else the sum of its two halves.
double ops_of_one_kind(const std::vector<OpsCounter>& counters) {
  const auto unsplit_or_halves = [&](const std::string& dst) -> std::optional<double> {
    std::optional<double> whole, halves;
    for (const OpsCounter& c : counters) {
      if (c.dst != dst) continue;
      if (c.sparsity.empty())
        whole = c.value;
      else
        halves = halves.value_or(0) + c.value;
    }
    return whole ? whole : halves;
  };
  if (auto total = unsplit_or_halves("")) return *total;
  std::set<std::string> dsts;
  for (const OpsCounter& c : counters) dsts.insert(c.dst);
  double sum = 0;
  for (const std::string& dst : dsts) sum += unsplit_or_halves(dst).value_or(0);
  return sum;
}

std::optional<double> ops_counter_flops(const std::map<std::string, double>& counters) {
  static const std::regex name(
      R"(sm__ops_path_tensor_(?:op_([a-z0-9]+)_)?src_([a-z0-9]+?)(?:_dst_([a-z0-9]+?))?(?:_sparsity_(on|off))?\.sum)");
  std::map<std::string, std::map<std::string, std::vector<OpsCounter>>> by_src_and_op;
  for (const auto& [metric, value] : counters) {
    std::smatch m;
    if (!std::regex_match(metric, m, name)) continue;
    by_src_and_op[m[2]][m[1]].push_back({m[1], m[2], m[3], m[4], value});
  }
  if (by_src_and_op.empty()) return std::nullopt;
  double flops = 0;
  for (const auto& [src, by_op] : by_src_and_op) {
    // Unqualified counters already hold every instruction kind; else the kinds are disjoint.
    if (auto all = by_op.find(""); all != by_op.end()) {
      flops += ops_of_one_kind(all->second);
      continue;
    }
    for (const auto& [op, list] : by_op) flops += ops_of_one_kind(list);
  }
  return flops;
}

std::string cc_text(double cc) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f", cc);
  return buf;
}

}  // namespace

std::optional<double> tensor_flops_per_instruction(const std::string& kind, double cc) {
  const int major = static_cast<int>(std::floor(cc + 1e-9));
  const int tenths = static_cast<int>(std::lround(cc * 10)) % 10;
  if (kind == "hmma") {
    if (major == 7) return tenths == 5 ? 2048.0 : 512.0;  // Turing HMMA.1688; Volta HMMA.884
    if (major >= 8) return 4096.0;                        // HMMA.16816
  }
  if (kind == "imma") {
    if (major == 7 && tenths >= 2) return 2048.0;  // IMMA.8816
    if (major >= 8) return 8192.0;                 // IMMA.16832
  }
  if (kind == "dmma" && major == 8) return 512.0;  // DMMA.884
  return std::nullopt;
}

TensorWork tensor_work(const std::map<std::string, double>& counters, double flops_per_instruction) {
  TensorWork work;
  const auto counter = [&](const std::string& n) -> std::optional<double> {
    if (auto it = counters.find(n); it != counters.end()) return it->second;
    return std::nullopt;
  };
  const std::optional<double> cc = counter("CC");
  for (const char* kind : {"hmma", "imma", "dmma", "gmma"}) {
    const std::string metric = std::string("sm__inst_executed_pipe_tensor_op_") + kind + ".sum";
    const std::optional<double> n = counter(metric) ? counter(metric) : counter("smsp__" + metric.substr(4));
    if (!n || !(*n > 0)) continue;
    work.instructions += *n;
    std::optional<double> per = cc ? tensor_flops_per_instruction(kind, *cc) : std::nullopt;
    if (std::string(kind) == "hmma" && flops_per_instruction > 0) per = flops_per_instruction;
    if (per) {
      work.flops += *per * *n;
      work.how += (work.how.empty() ? "" : ",") + std::string(kind) + "@" + (cc ? cc_text(*cc) : "?");
    } else {
      work.uncounted += (work.uncounted.empty() ? "" : ",") + std::string(kind) + "@" + (cc ? cc_text(*cc) : "?");
    }
  }
  if (auto ops = ops_counter_flops(counters)) {
    work.flops = *ops;  // exact: replaces any per-instruction estimate
    work.how = "ops";
    work.uncounted.clear();
    return work;
  }
  if (!work.how.empty() || !work.uncounted.empty()) return work;
  for (const char* metric : {"sm__inst_executed_pipe_tensor.sum", "smsp__inst_executed_pipe_tensor.sum"}) {
    if (auto n = counter(metric)) {
      // From Hopper on, the one pipe counter mixes mma.sync with wgmma/tcgen05 instructions of
      // any N: no per-instruction figure holds, and a guess would put the point 2-64x off.
      // Without a CC column the figure is V100's (NERSC's recipe, which this counter comes from).
      std::optional<double> per = flops_per_instruction > 0 ? std::optional<double>(flops_per_instruction)
                                  : !cc                     ? std::optional<double>(512.0)
                                  : *cc < 9                 ? tensor_flops_per_instruction("hmma", *cc)
                                                            : std::nullopt;
      work.instructions = *n;
      if (per) {
        work.flops = *per * *n;
        work.how = "pipe:" + std::to_string(static_cast<long long>(*per));
      } else if (*n > 0) {
        work.uncounted = "pipe@" + cc_text(*cc);
      }
      return work;
    }
  }
  return work;
}

}  // namespace roofprobe
