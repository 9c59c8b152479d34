// Every probe this build registers, checked against the contract the fitter and the configs rely
// on (kernels/contract/probe.hpp): its feeds name metrics sweep.csv has and axes the probe has (a
// typo there once surfaced only at fit time, as a ceiling that never appeared), its choice axes
// have choices and defaults among them, and the embedded default config runs it (a probe left
// out of the configs never runs).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "driver/run/config.hpp"
#include "kernels/contract/probe.hpp"

namespace roofprobe {
namespace {

// The probes this build ships: those of a registered backend. Other unit tests register probes of
// their own under made-up backends (fit_instruction_feeds_test's "fit_feeds_test"); when the whole
// binary runs in one process, the registry holds them too, and they are not the product.
std::vector<const Probe*> shipped_probes() {
  std::vector<const Probe*> shipped;
  for (const Probe* p : Registry::instance().probes())
    if (Registry::instance().backend(p->info().backend) != nullptr) shipped.push_back(p);
  return shipped;
}

bool has_axis(const ProbeInfo& info, const std::string& name) {
  return std::any_of(info.axes.begin(), info.axes.end(), [&](const Axis& a) { return a.name == name; });
}

// The axis names in "axis=value;axis=value".
std::vector<std::string> keys_of(const std::string& params) {
  std::vector<std::string> keys;
  std::size_t at = 0;
  while (at < params.size()) {
    const std::size_t end = std::min(params.find(';', at), params.size());
    const std::string pair = params.substr(at, end - at);
    keys.push_back(pair.substr(0, pair.find('=')));
    at = end + 1;
  }
  return keys;
}

TEST(ProbeConformance, FeedsNameRealMetricsAndAxes) {
  const std::set<std::string> metrics = {"gbs", "gflops", "gtxn_s", "gips", "shared_gtxn_s", "clock_mhz"};
  const std::vector<const Probe*> probes = shipped_probes();
  ASSERT_GE(probes.size(), 2u);
  for (const Probe* p : probes) {
    const ProbeInfo& info = p->info();
    const std::string who = info.backend + "/" + info.name;
    EXPECT_FALSE(info.feeds.empty()) << who << ": a probe that feeds nothing measures for nobody";
    for (const FeedSpec& f : info.feeds) {
      // Scaling may leave the metric to each series (GFLOP/s where its samples count FLOPs, else GB/s).
      if (!(f.kind == FeedKind::Scaling && f.metric.empty()))
        EXPECT_EQ(metrics.count(f.metric), 1u) << who << ": metric '" << f.metric << "' is not a sweep.csv rate";
      for (const std::string& axis : f.series_axes)
        EXPECT_TRUE(has_axis(info, axis)) << who << ": series axis " << axis;
      const bool swept =
          f.kind == FeedKind::MemoryLevels || f.kind == FeedKind::Predication || f.kind == FeedKind::Scaling;
      if (swept) EXPECT_TRUE(has_axis(info, f.x_axis)) << who << ": x axis " << f.x_axis;
      for (const std::string& key : keys_of(f.primary_series))
        EXPECT_TRUE(has_axis(info, key)) << who << ": primary series names axis '" << key << "'";
      for (const FeedSpec::SeriesReach& r : f.series_reach)
        for (const std::string& key : keys_of(r.params))
          EXPECT_TRUE(has_axis(info, key)) << who << ": series_reach names axis '" << key << "'";
      // "{axis}" placeholders of a ceiling name are series axes (their values name the series).
      static const std::regex placeholder(R"(\{([a-z_0-9]+)\})");
      for (auto it = std::sregex_iterator(f.name_pattern.begin(), f.name_pattern.end(), placeholder);
           it != std::sregex_iterator(); ++it) {
        const std::string axis = (*it)[1];
        EXPECT_NE(std::find(f.series_axes.begin(), f.series_axes.end(), axis), f.series_axes.end())
            << who << ": name pattern '" << f.name_pattern << "' uses {" << axis << "}, not a series axis";
      }
      if (f.kind == FeedKind::NamedLevel) EXPECT_FALSE(f.level_name.empty()) << who;
      if (f.kind == FeedKind::Walls) EXPECT_TRUE(f.wall_set == "global" || f.wall_set == "shared") << who;
      if (f.kind == FeedKind::ComputeCeiling) EXPECT_FALSE(f.name_pattern.empty()) << who;
    }
  }
}

// The fleet's aggregates are declared by the probes (ProbeInfo::fleet): each backend offers one
// memory and one compute point, on axes and choices the probe has.
TEST(ProbeConformance, FleetAggregatesNameRealAxesAndChoices) {
  std::map<std::string, std::set<FleetAggregate::Kind>> offered;
  for (const Probe* p : shipped_probes()) {
    const ProbeInfo& info = p->info();
    if (info.fleet.kind == FleetAggregate::Kind::None) continue;
    const std::string who = info.backend + "/" + info.name;
    EXPECT_TRUE(offered[info.backend].insert(info.fleet.kind).second) << who << ": a second offer of this kind";
    EXPECT_TRUE(has_axis(info, info.fleet.largest_axis)) << who << ": " << info.fleet.largest_axis;
    for (const auto& [axis, value] : info.fleet.select) {
      const auto a = std::find_if(info.axes.begin(), info.axes.end(), [&](const Axis& x) { return x.name == axis; });
      ASSERT_NE(a, info.axes.end()) << who << ": select names axis " << axis;
      if (a->type == AxisType::Choice)
        EXPECT_NE(std::find(a->defaults.begin(), a->defaults.end(), value), a->defaults.end())
            << who << ": " << axis << "=" << value << " is not among the defaults, so the default plan lacks it";
    }
    if (info.fleet.kind == FleetAggregate::Kind::Compute) EXPECT_FALSE(info.fleet.ceiling.empty()) << who;
  }
  for (const auto& [backend, kinds] : offered) EXPECT_EQ(kinds.size(), 2u) << backend;
  EXPECT_EQ(offered.count("cpu"), 1u);
}

TEST(ProbeConformance, ChoiceAxesHaveTheirDefaultsAmongTheChoices) {
  for (const Probe* p : shipped_probes()) {
    const std::string who = p->info().backend + "/" + p->info().name;
    std::set<std::string> names;
    for (const Axis& a : p->info().axes) {
      EXPECT_TRUE(names.insert(a.name).second) << who << ": axis " << a.name << " twice";
      if (a.type != AxisType::Choice) continue;
      EXPECT_FALSE(a.choices.empty()) << who << ": " << a.name;
      for (const std::string& d : a.defaults)
        EXPECT_NE(std::find(a.choices.begin(), a.choices.end(), d), a.choices.end())
            << who << ": default '" << d << "' of " << a.name << " is not a choice";
    }
  }
}

TEST(ProbeConformance, TheDefaultConfigRunsEveryProbe) {
  const RunConfig def = load_embedded_config("default.yaml");
  for (const Probe* p : shipped_probes()) {
    const BackendConfig* backend = def.backend(p->info().backend);
    ASSERT_NE(backend, nullptr) << "configs/default.yaml has no " << p->info().backend << ": section";
    const bool listed = std::any_of(backend->probes.begin(), backend->probes.end(),
                                    [&](const ProbeConfig& c) { return c.name == p->info().name; });
    EXPECT_TRUE(listed) << p->info().backend << "/" << p->info().name
                        << " is not in configs/default.yaml: it never runs";
  }
}

}  // namespace
}  // namespace roofprobe
