// feeds.yaml (feeds_file.hpp): written from the document tree, read with yaml-cpp.
#include "driver/fit/feeds_file.hpp"

#include <yaml-cpp/yaml.h>

#include "driver/model/atomic_file.hpp"
#include "driver/model/document.hpp"
#include "driver/model/errors.hpp"

namespace roofprobe {
namespace {

constexpr const char* kSchema = "roofprobe.feeds/1";

const std::vector<std::pair<FeedKind, const char*>>& kind_names() {
  static const std::vector<std::pair<FeedKind, const char*>> names = {{FeedKind::MemoryLevels, "memory_levels"},
                                                                      {FeedKind::ComputeCeiling, "compute_ceiling"},
                                                                      {FeedKind::NamedLevel, "named_level"},
                                                                      {FeedKind::WarpGips, "warp_gips"},
                                                                      {FeedKind::Predication, "predication"},
                                                                      {FeedKind::Walls, "walls"},
                                                                      {FeedKind::Scaling, "scaling"},
                                                                      {FeedKind::Clock, "clock"}};
  return names;
}

const char* kind_name(FeedKind kind) {
  for (const auto& [k, name] : kind_names())
    if (k == kind) return name;
  return "unknown";
}

doc::Value strings(const std::vector<std::string>& items) {
  doc::Value out = doc::Value::array().flow();
  for (const std::string& s : items) out.push(doc::Value::string(s));
  return out;
}

doc::Value feed_value(const FeedSpec& f) {
  doc::Value v = doc::Value::object();
  v.set("kind", doc::Value::string(kind_name(f.kind)))
      .set("metric", doc::Value::string(f.metric))
      .set("x_axis", doc::Value::string(f.x_axis))
      .set("series_axes", strings(f.series_axes))
      .set("primary_series", doc::Value::string(f.primary_series));
  doc::Value reach = doc::Value::array();
  for (const FeedSpec::SeriesReach& r : f.series_reach)
    reach.push(doc::Value::object()
                   .set("params", doc::Value::string(r.params))
                   .set("first_level", doc::Value::string(r.first_level))
                   .set("first_level_only", doc::Value::boolean(r.first_level_only))
                   .flow());
  v.set("series_reach", std::move(reach))
      .set("name_pattern", doc::Value::string(f.name_pattern))
      .set("level_name", doc::Value::string(f.level_name))
      .set("wall_set", doc::Value::string(f.wall_set));
  // Written only where a feed has one, so that feeds files of probes without it stay as they were.
  if (!f.instruction_axis.empty()) {
    doc::Value texts = doc::Value::object();
    for (const auto& [value, text] : f.instruction_text) texts.set(value, doc::Value::string(text));
    v.set("instruction_axis", doc::Value::string(f.instruction_axis)).set("instruction_text", std::move(texts));
  }
  return v;
}

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}
  [[noreturn]] void fail(const YAML::Node& n, const std::string& what) const {
    const YAML::Mark m = n.Mark();
    throw InputError(path_ + (m.line >= 0 ? ":" + std::to_string(m.line + 1) : std::string()) + ": " + what);
  }
  std::string text(const YAML::Node& map, const char* key) const {
    const YAML::Node n = map[key];
    if (!n) fail(map, std::string(key) + ": missing");
    if (!n.IsScalar()) fail(n, std::string(key) + ": expected text");
    return n.Scalar();
  }
  std::vector<std::string> list(const YAML::Node& map, const char* key) const {
    const YAML::Node n = map[key];
    if (!n || !n.IsSequence()) fail(n ? n : map, std::string(key) + ": expected a list");
    std::vector<std::string> out;
    for (const YAML::Node& item : n) {
      if (!item.IsScalar()) fail(item, std::string(key) + ": expected text items");
      out.push_back(item.Scalar());
    }
    return out;
  }

 private:
  std::string path_;
};

}  // namespace

FeedTable registered_feeds(const std::string& backend) {
  FeedTable out;
  for (const Probe* p : Registry::instance().probes(backend))
    out[{p->info().backend, p->info().name}] = p->info().feeds;
  return out;
}

std::string feeds_to_yaml(const FeedTable& feeds, const std::string& run_id) {
  doc::Value probes = doc::Value::array();
  for (const auto& [key, list] : feeds) {
    doc::Value f = doc::Value::array();
    for (const FeedSpec& spec : list) f.push(feed_value(spec));
    probes.push(doc::Value::object()
                    .set("backend", doc::Value::string(key.first))
                    .set("probe", doc::Value::string(key.second))
                    .set("feeds", std::move(f)));
  }
  doc::Value root = doc::Value::object().set("schema", doc::Value::string(kSchema));
  if (!run_id.empty()) root.set("run_id", doc::Value::string(run_id));
  return doc::to_yaml(root.set("probes", std::move(probes)));
}

FeedTable read_feeds_file(const std::string& path, std::string* run_id) {
  const std::string text = read_input_file(path, kMaxCsvInputBytes, "a feeds file");
  const Reader r(path);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(path + ":" + std::to_string(e.mark.line + 1) + ": malformed YAML: " + e.msg);
  }
  if (!root.IsMap()) throw InputError(path + ": not a feeds file (expected schema: " + kSchema + ")");
  if (r.text(root, "schema") != kSchema)
    r.fail(root["schema"], "schema '" + root["schema"].Scalar() + "' is not " + kSchema);
  if (run_id != nullptr) *run_id = root["run_id"] && root["run_id"].IsScalar() ? root["run_id"].Scalar() : "";
  const YAML::Node probes = root["probes"];
  if (!probes || !probes.IsSequence()) r.fail(root, "probes: expected a list");
  FeedTable out;
  for (const YAML::Node& p : probes) {
    if (!p.IsMap()) r.fail(p, "probes: expected maps");
    std::vector<FeedSpec> feeds;
    const YAML::Node list = p["feeds"];
    if (!list || !list.IsSequence()) r.fail(p, "feeds: expected a list");
    for (const YAML::Node& f : list) {
      if (!f.IsMap()) r.fail(f, "feeds: expected maps");
      FeedSpec spec;
      const std::string kind = r.text(f, "kind");
      bool known = false;
      for (const auto& [k, name] : kind_names())
        if (kind == name) spec.kind = k, known = true;
      if (!known) r.fail(f["kind"], "kind: unknown '" + kind + "'");
      spec.metric = r.text(f, "metric");
      spec.x_axis = r.text(f, "x_axis");
      spec.series_axes = r.list(f, "series_axes");
      spec.primary_series = r.text(f, "primary_series");
      const YAML::Node reach = f["series_reach"];
      if (!reach || !reach.IsSequence()) r.fail(f, "series_reach: expected a list");
      for (const YAML::Node& rule : reach) {
        if (!rule.IsMap()) r.fail(rule, "series_reach: expected maps");
        FeedSpec::SeriesReach sr;
        sr.params = r.text(rule, "params");
        sr.first_level = r.text(rule, "first_level");
        const std::string only = r.text(rule, "first_level_only");
        if (only != "true" && only != "false")
          r.fail(rule["first_level_only"], "first_level_only: expected true or false");
        sr.first_level_only = only == "true";
        spec.series_reach.push_back(sr);
      }
      spec.name_pattern = r.text(f, "name_pattern");
      spec.level_name = r.text(f, "level_name");
      spec.wall_set = r.text(f, "wall_set");
      if (f["instruction_axis"]) {  // optional: feeds files written before it have none
        spec.instruction_axis = r.text(f, "instruction_axis");
        const YAML::Node texts = f["instruction_text"];
        if (!texts || !texts.IsMap()) r.fail(f, "instruction_text: expected a mapping");
        for (const auto& kv : texts) {
          if (!kv.second.IsScalar()) r.fail(kv.second, "instruction_text: expected text");
          spec.instruction_text[kv.first.Scalar()] = kv.second.Scalar();
        }
      }
      feeds.push_back(std::move(spec));
    }
    out[{r.text(p, "backend"), r.text(p, "probe")}] = std::move(feeds);
  }
  return out;
}

}  // namespace roofprobe
