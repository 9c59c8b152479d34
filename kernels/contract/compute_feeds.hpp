// What the compute probes declare alike (the CPU and CUDA flops probes, fma_mix, tensor): their
// compute-ceiling feed, and the fleet's FP64 FMA aggregate.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "kernels/contract/probe.hpp"

namespace roofprobe {

// One compute ceiling per series of `series_axes`: the series' best GFLOP/s, named by
// `name_pattern` ("{precision}.{form}" -> "FP64.FMA").
inline FeedSpec compute_ceiling_feed(std::vector<std::string> series_axes, std::string name_pattern) {
  FeedSpec feed;
  feed.kind = FeedKind::ComputeCeiling;
  feed.metric = "gflops";
  feed.series_axes = std::move(series_axes);
  feed.name_pattern = std::move(name_pattern);
  return feed;
}

// The flops probes' ceilings: one per precision and form ("FP64.FMA", "FP32.noFMA").
inline FeedSpec precision_form_feed() { return compute_ceiling_feed({"precision", "form"}, "{precision}.{form}"); }

// The fleet's compute aggregate of a flops probe: every rank's FP64 FMA peak at once, at the
// largest flops_per_element.
inline FleetAggregate fp64_fma_aggregate() {
  return {FleetAggregate::Kind::Compute, "FP64.FMA", {{"precision", "fp64"}, {"form", "fma"}}, "flops_per_element"};
}

}  // namespace roofprobe
