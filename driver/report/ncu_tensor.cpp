// points --ncu-csv: tensor FLOPs per launch (see ncu_tensor.hpp for the order of sources).
#include "driver/report/ncu_tensor.hpp"

#include "driver/model/csv_text.hpp"

#include <cmath>
#include <cstdio>
#include <regex>
#include <set>
#include <vector>

namespace roofprobe {

namespace {

// One sm__ops_path_tensor_* counter, split into its qualifiers ("" where absent).
struct OpsCounter {
  std::string op, dst, sparsity;
  double value = 0;
};

// The ops of one source type, each data path counted once. A path is (instruction kind, dst);
// "" stands for all of them. At each path: its unsplit counter, else the sum of its sparsity
// halves. Unqualified counters hold every instruction kind, so they win over kind-qualified ones
// of the same dst; a total over dst types wins over everything.
double ops_of_source(const std::vector<OpsCounter>& counters) {
  const auto path = [&](const std::string& op, const std::string& dst) -> std::optional<double> {
    std::optional<double> whole, halves;
    for (const OpsCounter& c : counters) {
      if (c.op != op || c.dst != dst) continue;
      if (c.sparsity.empty())
        whole = c.value;
      else
        halves = halves.value_or(0) + c.value;
    }
    return whole ? whole : halves;
  };
  if (auto total = path("", "")) return *total;
  std::set<std::string> dsts, ops;
  for (const OpsCounter& c : counters) {
    if (!c.dst.empty()) dsts.insert(c.dst);
    if (!c.op.empty()) ops.insert(c.op);
  }
  double sum = 0;
  if (dsts.empty()) {  // kind-qualified totals only: the kinds are disjoint
    for (const std::string& op : ops) sum += path(op, "").value_or(0);
    return sum;
  }
  for (const std::string& dst : dsts) {
    if (auto all_kinds = path("", dst)) {
      sum += *all_kinds;
      continue;
    }
    for (const std::string& op : ops) sum += path(op, dst).value_or(0);
  }
  return sum;
}

std::optional<double> ops_counter_flops(const std::map<std::string, double>& counters) {
  static const std::regex name(
      R"(sm__ops_path_tensor_(?:op_([a-z0-9]+)_)?src_([a-z0-9]+?)(?:_dst_([a-z0-9]+?))?(?:_sparsity_(on|off))?\.sum)");
  std::map<std::string, std::vector<OpsCounter>> by_source;
  for (const auto& [metric, value] : counters) {
    std::smatch m;
    if (std::regex_match(metric, m, name)) by_source[m[2]].push_back({m[1], m[3], m[4], value});
  }
  if (by_source.empty()) return std::nullopt;
  double flops = 0;
  for (const auto& [source, list] : by_source) flops += ops_of_source(list);
  return flops;
}

std::string cc_text(double cc) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.1f", cc);
  return buf;
}

// The note line of one way of counting: "tensor instructions <what> counted as <n> FLOPs each (<why>)".
std::string counted_as(const std::string& what, double flops, const std::string& why) {
  return "tensor instructions " + what + " counted as " + csv_text::number_text(flops) + " FLOPs each (" + why + ")";
}

void append(std::string& list, const std::string& item) { list += (list.empty() ? "" : ",") + item; }

}  // namespace

std::optional<TensorShapeFigure> ncu_tensor_shape(const std::string& kind, double cc) {
  const int tenths = static_cast<int>(std::lround(cc * 10));
  if (kind == "hmma" && (tenths == 70 || tenths == 72)) return TensorShapeFigure{"HMMA.884", 512};
  if (kind == "dmma" && tenths == 80) return TensorShapeFigure{"DMMA.884", 512};
  return std::nullopt;
}

TensorWork tensor_work(const std::map<std::string, double>& counters, double flops_per_instruction) {
  TensorWork work;
  const auto counter = [&](const std::string& n) -> std::optional<double> {
    if (auto it = counters.find(n); it != counters.end()) return it->second;
    return std::nullopt;
  };
  if (auto ops = ops_counter_flops(counters)) {  // one FLOP per op, whatever the instructions
    work.flops = *ops;
    if (*ops > 0)
      work.counted.push_back(
          "tensor FLOPs from Nsight Compute's tensor-path op counters (sm__ops_path_tensor_*), one FLOP per op "
          "(NVIDIA's advice for tensor FLOPs; not yet checked here against a GEMM of known size)");
    return work;
  }
  const std::optional<double> cc = counter("CC");
  const std::string at = cc ? "@" + cc_text(*cc) : std::string(" (no CC column)");
  const std::string user = "--tensor-flops-per-inst";
  bool any_kind = false;
  for (const std::string kind : {"hmma", "imma", "dmma", "gmma"}) {
    const std::string metric = "sm__inst_executed_pipe_tensor_op_" + kind + ".sum";
    std::optional<double> n = counter(metric);
    if (!n) n = counter("smsp__" + metric.substr(4));
    if (!n) continue;
    any_kind = true;
    if (!(*n > 0)) continue;
    if (kind == "hmma" && flops_per_instruction > 0) {
      work.flops += flops_per_instruction * *n;
      work.counted.push_back(counted_as(kind, flops_per_instruction, user));
    } else if (const auto shape = cc ? ncu_tensor_shape(kind, *cc) : std::nullopt) {
      work.flops += shape->flops * *n;
      work.counted.push_back(counted_as(kind + at, shape->flops, std::string("the one shape there, ") + shape->shape));
    } else {
      append(work.uncounted, kind + at);
    }
  }
  if (any_kind) return work;
  for (const char* metric : {"sm__inst_executed_pipe_tensor.sum", "smsp__inst_executed_pipe_tensor.sum"}) {
    const std::optional<double> n = counter(metric);
    if (!n) continue;
    if (!(*n > 0)) return work;
    // The one pipe counter cannot tell shapes apart: 512 is right only where V100's HMMA.884 is
    // the only one, and is NERSC's recipe for an export that does not say its architecture.
    const bool volta = !cc || ncu_tensor_shape("hmma", *cc).has_value();
    if (flops_per_instruction > 0) {
      work.flops = flops_per_instruction * *n;
      work.counted.push_back(counted_as("pipe", flops_per_instruction, user));
    } else if (volta) {
      work.flops = 512 * *n;
      work.counted.push_back(cc ? counted_as("pipe@" + cc_text(*cc), 512, "the one shape there, HMMA.884")
                                : counted_as("pipe", 512, "no CC column: NERSC's recipe, V100's HMMA.884"));
    } else {
      work.uncounted = "pipe" + at;
    }
    return work;
  }
  return work;
}

}  // namespace roofprobe
