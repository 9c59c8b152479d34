// points --ncu-csv: tensor FLOPs per launch (see ncu_tensor.hpp for the order of sources).
#include "driver/report/ncu_tensor.hpp"

#include "driver/model/csv_text.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <cstdio>
#include <regex>
#include <set>
#include <vector>

namespace roofprobe {

namespace {

// One sm__ops_path_tensor_* counter: the ops of the instruction kind `op` ("" = every kind), of
// the source types `sources` (one, or a group such as Blackwell's fp4_fp6_fp8), into accumulator
// `dst` ("" = every accumulator), with sparsity `sparsity` ("" = both).
struct OpsCounter {
  std::string name;
  std::string op;
  std::set<std::string> sources;
  std::string dst, sparsity;
  double value = 0;
};

bool contains(const std::set<std::string>& a, const std::set<std::string>& b) {
  return std::includes(a.begin(), a.end(), b.begin(), b.end());
}

// Every op `b` counts is counted by `a` too: `a` is a total `b` is a part of.
bool covers(const OpsCounter& a, const OpsCounter& b) {
  return (a.op.empty() || a.op == b.op) && contains(a.sources, b.sources) && (a.dst.empty() || a.dst == b.dst) &&
         (a.sparsity.empty() || a.sparsity == b.sparsity);
}

// Some op could be counted by both.
bool overlap(const OpsCounter& a, const OpsCounter& b) {
  const auto same_or_any = [](const std::string& x, const std::string& y) { return x.empty() || y.empty() || x == y; };
  const bool shared_source =
      std::any_of(a.sources.begin(), a.sources.end(), [&](const std::string& s) { return b.sources.count(s) != 0; });
  return shared_source && same_or_any(a.op, b.op) && same_or_any(a.dst, b.dst) && same_or_any(a.sparsity, b.sparsity);
}

std::optional<OpsCounter> ops_counter(const std::string& metric, double value) {
  static const std::regex name(
      R"(sm__ops_path_tensor_(?:op_([a-z0-9]+)_)?src_((?:fp|bf|tf|int)[0-9]+(?:_(?:fp|bf|tf|int)[0-9]+)*)(?:_dst_([a-z0-9]+?))?(?:_sparsity_(on|off))?\.sum)");
  std::smatch m;
  if (!std::regex_match(metric, m, name)) return std::nullopt;
  OpsCounter c;
  c.name = metric;
  c.op = m[1];
  std::string types = m[2];
  for (std::size_t at = 0; at < types.size();) {
    const std::size_t end = types.find('_', at);
    c.sources.insert(types.substr(at, end == std::string::npos ? std::string::npos : end - at));
    at = end == std::string::npos ? types.size() : end + 1;
  }
  c.dst = m[3];
  c.sparsity = m[4];
  c.value = value;
  return c;
}

// The ops of the launch, each counted once: the counters no other counter holds (the totals),
// summed, when they are disjoint. Counters of 0 hold no ops and are left out first. Two
// totals that overlap without one holding the other cannot be added: `overlapping` names them.
struct OpsSum {
  std::optional<double> ops;  // nullopt: no tensor-path counter at all
  std::string overlapping;
};

OpsSum ops_counter_flops(const std::map<std::string, double>& counters) {
  OpsSum out;
  std::vector<OpsCounter> nonzero;
  for (const auto& [metric, value] : counters) {
    if (auto c = ops_counter(metric, value)) {
      out.ops = 0.0;
      if (value > 0) nonzero.push_back(std::move(*c));
    }
  }
  std::vector<const OpsCounter*> totals;
  for (const OpsCounter& c : nonzero) {
    bool held = false;
    for (const OpsCounter& other : nonzero)
      if (&other != &c && covers(other, c) && (!covers(c, other) || &other < &c)) held = true;
    if (!held) totals.push_back(&c);
  }
  for (std::size_t i = 0; i < totals.size(); ++i)
    for (std::size_t j = i + 1; j < totals.size(); ++j)
      if (overlap(*totals[i], *totals[j])) {
        out.overlapping = totals[i]->name + " and " + totals[j]->name;
        return out;
      }
  for (const OpsCounter* t : totals) *out.ops += t->value;
  return out;
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
  const OpsSum ops = ops_counter_flops(counters);
  if (!ops.overlapping.empty()) {
    work.uncounted = "counted by both " + ops.overlapping;
    return work;
  }
  if (ops.ops) {  // one FLOP per op, whatever the instructions
    work.flops = *ops.ops;
    if (*ops.ops > 0)
      work.counted.push_back(
          "tensor FLOPs from Nsight Compute's tensor-path op counters (sm__ops_path_tensor_*), one FLOP per op "
          "(each total is 2*M*N*K for a GEMM), every total counted once and never added to its parts");
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
