// build_plan: a combination that does not exist on the device (Probe::exists_on) is not planned
// and is no gap; one that exists but cannot run here stays a gap, named under missing:.
#include <gtest/gtest.h>

#include <memory>
#include <sstream>
#include <stdexcept>

#include "driver/model/machine.hpp"
#include "driver/report/summary.hpp"
#include "driver/run/config.hpp"
#include "driver/run/plan.hpp"

namespace roofprobe {
namespace {

// api x type, where api=b has no type y (as mma.m16n8k4 has no fp16) and a y point lacks its
// code in this build (a real gap).
class ShapeProbe : public Probe {
 public:
  ShapeProbe() {
    info_.name = "shapes";
    info_.backend = "plantest";
    info_.axes = {{"api", AxisType::Choice, "", {"a", "b"}, 0, 0, {"a", "b"}},
                  {"type", AxisType::Choice, "", {"x", "y"}, 0, 0, {"x", "y"}}};
  }
  const ProbeInfo& info() const override { return info_; }
  bool exists_on(const Params& p, const DeviceInfo&) const override {
    return !(p.at("api") == "b" && p.at("type") == "y");
  }
  std::string unsupported_reason(const Params& p, const DeviceInfo&) const override {
    if (p.at("api") == "b" && p.at("type") == "y") return "api=b has no type y";
    if (p.at("api") == "a" && p.at("type") == "y") return "this build lacks the code for a y";
    return {};
  }
  std::uint64_t footprint_bytes(const Params&) const override { return 0; }
  std::unique_ptr<PreparedPoint> prepare(const Params&, const DeviceInfo&) const override {
    throw std::logic_error("not run");
  }

 private:
  ProbeInfo info_;
};

const Probe& shape_probe() {
  static const Probe* registered = [] {
    auto probe = std::make_unique<ShapeProbe>();
    const Probe* raw = probe.get();
    Registry::instance().add_probe(std::move(probe));
    return raw;
  }();
  return *registered;
}

TEST(Plan, ACombinationThatDoesNotExistIsNeitherPlannedNorAGap) {
  const Probe& probe = shape_probe();
  RunConfig config;
  config.source = "test.yaml";
  BackendConfig bc;
  bc.name = "plantest";
  ProbeConfig pc;
  pc.name = probe.info().name;
  pc.axes = {{"api", {"a", "b"}}, {"type", {"x", "y"}}};
  pc.axis_line = {{"api", 0}, {"type", 0}};
  bc.probes = {pc};
  config.backends = {bc};
  const Plan plan = build_plan(config, bc, DeviceInfo{});
  ASSERT_EQ(plan.points.size(), 2u);
  EXPECT_EQ(plan.skipped, (std::vector<std::string>{"shapes api=a;type=y: this build lacks the code for a y"}));
  EXPECT_EQ(plan.not_existing, (std::vector<std::string>{"shapes api=b;type=y: api=b has no type y"}));
}

TEST(Plan, ListShowsTheCombinationsThatExist) {
  std::ostringstream out;
  print_existing_combinations(out, {&shape_probe()}, DeviceInfo{});
  EXPECT_EQ(out.str(),
            "shapes [plantest]: 3 of 4 combinations exist\n    api=a;type=x\n    api=a;type=y\n    api=b;type=x\n");
}

// The default config on the H200 of the committed acceptance run (its device section, as the
// CUDA backend described it): the plan leaves under missing: only what this build cannot run
// there, never an api x type combination or an architecture's instruction that does not exist
// on compute capability 9.0 (an H200 run once listed 34 such entries). What remains depends on
// the architectures this build compiled (CMAKE_CUDA_ARCHITECTURES): at most the tensor points
// of sm_90a code when that is not among them.
TEST(Plan, TheDefaultConfigOnAnH200PlansNoCombinationThatCannotExist) {
  if (Registry::instance().probes("cuda").empty()) GTEST_SKIP() << "this build has no CUDA backend";
  const Machine h200 =
      read_machine_file(std::string(ROOFPROBE_SOURCE_DIR) + "/results/measured/h200-sxm/20261125T2354Z/machine.yaml");
  ASSERT_EQ(h200.device.extra.at("compute_capability"), "9.0");
  const RunConfig config = load_embedded_config("default.yaml");
  const BackendConfig* cuda = config.backend("cuda");
  ASSERT_NE(cuda, nullptr);
  const Plan plan = build_plan(config, *cuda, h200.device);
  EXPECT_GT(plan.points.size(), 100u);
  for (const std::string& gap : plan.skipped)
    EXPECT_EQ(gap.find("tcgen05"), std::string::npos) << gap;  // Blackwell's: not on cc 9.0
  std::string listed;
  for (const std::string& gap : plan.skipped) listed += "\n  " + gap;
  EXPECT_LE(plan.skipped.size(), 3u) << "gaps planned on an H200:" << listed;
}

}  // namespace
}  // namespace roofprobe
