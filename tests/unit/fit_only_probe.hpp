// Probes that only declare what the fitter reads, for the fit tests (fit_test.cpp,
// fit_compute_clock_test.cpp): registered under test backends, so the tests do not depend on
// the real CPU and CUDA probes' declarations.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

#include "kernels/contract/compute_feeds.hpp"
#include "kernels/contract/probe.hpp"

namespace roofprobe::testing {

// A probe that only declares what the fitter reads; it cannot run.
class FitOnlyProbe : public Probe {
 public:
  explicit FitOnlyProbe(ProbeInfo info) : info_(std::move(info)) {}
  const ProbeInfo& info() const override { return info_; }
  std::uint64_t footprint_bytes(const Params&) const override { return 0; }
  std::unique_ptr<PreparedPoint> prepare(const Params&, const DeviceInfo&) const override {
    throw std::logic_error("fit-only probe '" + info_.name + "' cannot run");
  }

 private:
  ProbeInfo info_;
};

// A probe `name` of `backend` with the CPU flops probe's contract: precision fp64/fp32, form
// fma/nofma, flops_per_element, one compute-ceiling feed named "{precision}.{form}".
inline ProbeInfo flops_like_probe(const std::string& name, const std::string& backend) {
  ProbeInfo fl;
  fl.name = name;
  fl.backend = backend;
  fl.axes = {{"precision", AxisType::Choice, "", {"fp64", "fp32"}, 0, 0, {"fp64"}},
             {"form", AxisType::Choice, "", {"fma", "nofma"}, 0, 0, {"fma"}},
             {"flops_per_element", AxisType::Integer, "", {}, 1, 4096, {"1"}}};
  fl.feeds = {precision_form_feed()};
  return fl;
}

}  // namespace roofprobe::testing
