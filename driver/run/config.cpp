#include "driver/run/config.hpp"

#include "driver/model/atomic_file.hpp"
#include "driver/model/yaml_checks.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/stat.h>

#include "driver/model/errors.hpp"
#include "driver/model/units.hpp"

namespace roofprobe {

namespace {

// Builds "file:line: key: message" errors.
class Reporter {
 public:
  explicit Reporter(std::string source) : source_(std::move(source)) {}
  [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& msg) const {
    std::ostringstream out;
    out << source_;
    if (at.IsDefined() && at.Mark().line >= 0) out << ':' << at.Mark().line + 1;
    out << ": ";
    if (!key.empty()) out << key << ": ";
    out << msg;
    throw InputError(one_line_message(out.str()));  // a quoted value may hold "\0" or "\n"
  }
  const std::string& source() const { return source_; }

 private:
  std::string source_;
};

std::string suggestion(const std::string& key, const std::vector<std::string>& valid) {
  std::string best;
  std::size_t best_distance = 3;  // only suggest close matches
  for (const auto& v : valid) {
    std::size_t d = edit_distance(key, v);
    if (d < best_distance) {
      best_distance = d;
      best = v;
    }
  }
  std::string list;
  for (const auto& v : valid) list += (list.empty() ? "" : ", ") + v;
  if (!best.empty()) return " (did you mean '" + best + "'?)";
  return " (valid: " + list + ")";
}

// The probes: value (or key) that stands for every probe of the backend.
constexpr const char* kAllProbes = "all";

void check_keys(const Reporter& r, const YAML::Node& map, const std::string& where,
                const std::vector<std::string>& valid) {
  for (const auto& kv : map) {
    if (!kv.first.IsScalar()) r.fail(kv.first, where, "expected a plain key, got a list or mapping");
    std::string key = kv.first.Scalar();
    bool ok = false;
    for (const auto& v : valid) ok = ok || v == key;
    if (!ok) r.fail(kv.first, where.empty() ? key : where + "." + key, "unknown key" + suggestion(key, valid));
  }
}

double as_number(const Reporter& r, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) r.fail(node, key, "expected a number");
  try {
    double v = node.as<double>();
    if (!std::isfinite(v)) r.fail(node, key, "expected a finite number");
    return v;
  } catch (const YAML::Exception&) {
    r.fail(node, key, "expected a number, got '" + node.Scalar() + "'");
  }
}

int as_int(const Reporter& r, const YAML::Node& node, const std::string& key, int lo, int hi) {
  double v = as_number(r, node, key);
  if (v != std::floor(v)) r.fail(node, key, "expected an integer");
  if (v < lo || v > hi) r.fail(node, key, "must be between " + std::to_string(lo) + " and " + std::to_string(hi));
  return static_cast<int>(v);
}

double as_bytes(const Reporter& r, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) r.fail(node, key, "expected a size such as 4096, 32KiB or 1GiB");
  auto v = parse_bytes(node.Scalar());
  if (!v) r.fail(node, key, "malformed size '" + node.Scalar() + "' (use e.g. 4096, 32KiB, 1GiB)");
  if (*v <= 0) r.fail(node, key, "size must be > 0");
  return *v;
}

MeasurementSettings parse_measurement(const Reporter& r, const YAML::Node& node) {
  MeasurementSettings m;
  if (!node.IsMap()) r.fail(node, "measurement", "expected a mapping");
  check_keys(r, node, "measurement",
             {"warmup_seconds", "min_samples", "min_seconds", "max_noise", "timeout_seconds", "target_launch_seconds"});
  const auto in_range = [&](const char* key, double* value) {
    const YAML::Node n = node[key];
    if (!n) return;
    const std::string name = std::string("measurement.") + key;
    const double v = as_number(r, n, name);
    for (const SettingRange& range : kMeasurementRanges)
      if (std::string(range.key) == key && !(v >= range.min && v <= range.max)) {
        std::ostringstream allowed;
        allowed << "out of range: " << n.Scalar() << " not in [" << range.min << ", " << range.max << "]";
        r.fail(n, name, allowed.str());
      }
    *value = v;
  };
  in_range("warmup_seconds", &m.warmup_seconds);
  if (auto n = node["min_samples"]) m.min_samples = as_int(r, n, "measurement.min_samples", 1, 100000);
  in_range("min_seconds", &m.min_seconds);
  in_range("max_noise", &m.max_noise);
  in_range("timeout_seconds", &m.timeout_seconds);
  in_range("target_launch_seconds", &m.target_launch_seconds);
  if (m.timeout_seconds < m.min_seconds)
    r.fail(node["timeout_seconds"] ? node["timeout_seconds"] : node, "measurement.timeout_seconds",
           "must be >= min_seconds");
  return m;
}

// Axis values: a scalar, a list, or (Bytes) a sweep {min, max, points_per_octave}.
std::vector<std::string> parse_axis(const Reporter& r, const Axis& axis, const YAML::Node& node,
                                    const std::string& key) {
  std::vector<YAML::Node> items;
  if (node.IsSequence()) {
    if (node.size() == 0) r.fail(node, key, "empty list");
    for (const auto& item : node) items.push_back(item);
  } else if (node.IsMap()) {
    if (axis.type != AxisType::Bytes)
      r.fail(node, key, "a {min, max, points_per_octave} sweep is only allowed for sizes");
    check_keys(r, node, key, {"min", "max", "points_per_octave"});
    if (!node["min"] || !node["max"]) r.fail(node, key, "a sweep needs min and max");
    double lo = as_bytes(r, node["min"], key + ".min");
    double hi = as_bytes(r, node["max"], key + ".max");
    if (lo > hi) r.fail(node["min"], key, "min (" + format_bytes(lo) + ") > max (" + format_bytes(hi) + ")");
    int ppo = node["points_per_octave"] ? as_int(r, node["points_per_octave"], key + ".points_per_octave", 1, 64) : 4;
    if (lo < axis.min || hi > axis.max)
      r.fail(node, key, "sizes must lie in [" + format_bytes(axis.min) + ", " + format_bytes(axis.max) + "]");
    return geometric_sizes(lo, hi, ppo);
  } else if (node.IsScalar()) {
    items.push_back(node);
  } else {
    r.fail(node, key, "expected a value or a list");
  }
  std::vector<std::string> values;
  for (const auto& item : items) {
    if (!item.IsScalar()) r.fail(item, key, "expected a scalar value");
    switch (axis.type) {
      case AxisType::Choice: {
        const std::string& v = item.Scalar();
        bool ok = false;
        for (const auto& c : axis.choices) ok = ok || c == v;
        if (!ok) r.fail(item, key, "'" + v + "' is not one of the choices" + suggestion(v, axis.choices));
        values.push_back(v);
        break;
      }
      case AxisType::Integer: {
        double v = as_number(r, item, key);
        if (v != std::floor(v)) r.fail(item, key, "expected an integer, got '" + item.Scalar() + "'");
        if (v < axis.min || v > axis.max) {
          std::ostringstream range;
          range << "out of range: " << item.Scalar() << " not in [" << axis.min << ", " << axis.max << "]";
          r.fail(item, key, range.str());
        }
        values.push_back(std::to_string(static_cast<long long>(v)));
        break;
      }
      case AxisType::Bytes: {
        double v = as_bytes(r, item, key);
        if (v < axis.min || v > axis.max)
          r.fail(
              item, key,
              "size " + format_bytes(v) + " not in [" + format_bytes(axis.min) + ", " + format_bytes(axis.max) + "]");
        values.push_back(std::to_string(static_cast<long long>(std::llround(v))));
        break;
      }
    }
  }
  std::set<std::string> seen;
  for (const auto& v : values)
    if (!seen.insert(v).second) r.fail(node, key, "value '" + v + "' listed twice");
  return values;
}

ProbeConfig parse_probe(const Reporter& r, const Probe& probe, const YAML::Node& node, const std::string& key) {
  ProbeConfig pc;
  pc.name = probe.info().name;
  pc.line = node.Mark().line + 1;
  std::vector<std::string> axis_names;
  for (const auto& axis : probe.info().axes) axis_names.push_back(axis.name);
  if (!node.IsNull() && !node.IsMap()) r.fail(node, key, "expected a mapping of axis: values");
  if (node.IsMap()) check_keys(r, node, key, axis_names);
  for (const auto& axis : probe.info().axes) {
    // (A default-constructed YAML::Node counts as defined: only a mapping's lookup can say absent.)
    const YAML::Node value = node.IsMap() ? node[axis.name] : YAML::Node(YAML::NodeType::Undefined);
    if (value.IsDefined()) {
      pc.axes[axis.name] = parse_axis(r, axis, value, key + "." + axis.name);
      pc.axis_line[axis.name] = value.Mark().line + 1;
    } else {
      pc.axes[axis.name] = axis.defaults;
      pc.axis_line[axis.name] = 0;
    }
  }
  return pc;
}

BackendConfig parse_backend(const Reporter& r, const std::string& name, const YAML::Node& node) {
  BackendConfig bc;
  bc.name = name;
  if (!node.IsMap()) r.fail(node, name, "expected a mapping");
  if (name == "cpu")
    check_keys(r, node, name, {"threads", "sustained_seconds", "probes"});
  else
    check_keys(r, node, name, {"device", "sustained_seconds", "probes"});
  if (auto n = node["threads"]) bc.threads = as_int(r, n, name + ".threads", 0, 1 << 20);
  bc.sustained_seconds = name == "cpu" ? kDefaultSustainedSecondsCpu : kDefaultSustainedSecondsGpu;
  if (auto n = node["sustained_seconds"]) {
    const std::string key = name + ".sustained_seconds";
    const double v = as_number(r, n, key);
    if (!(v >= kSustainedSecondsRange.min && v <= kSustainedSecondsRange.max)) {
      std::ostringstream allowed;
      allowed << "out of range: " << n.Scalar() << " not in [" << kSustainedSecondsRange.min << ", "
              << kSustainedSecondsRange.max << "] (0 turns the sustained phase off)";
      r.fail(n, key, allowed.str());
    }
    bc.sustained_seconds = v;
  }
  if (auto n = node["device"]) bc.device = as_int(r, n, name + ".device", 0, 1024);
  bc.built = Registry::instance().backend(name) != nullptr;
  YAML::Node probes = node["probes"];
  if (!probes) r.fail(node, name + ".probes", "missing (list the probes to run)");
  // `probes: all` runs every probe of the backend at its defaults; `all: {}` inside the mapping
  // adds those the mapping does not list. So a new probe family runs without a config edit.
  const bool every_probe = probes.IsScalar() && probes.Scalar() == kAllProbes;
  if (!every_probe && !probes.IsMap()) r.fail(probes, name + ".probes", "expected a mapping of probe: axes, or 'all'");
  if (probes.IsMap() && probes.size() == 0)
    r.fail(probes, name + ".probes", "empty: list at least one probe, or write 'all' (roofprobe list shows them)");
  if (!bc.built) return bc;  // a backend this binary lacks: its section is kept, not run
  std::vector<std::string> probe_names{kAllProbes};
  for (const Probe* p : Registry::instance().probes(name)) probe_names.push_back(p->info().name);
  bool add_the_rest = every_probe;
  if (probes.IsMap()) {
    check_keys(r, probes, name + ".probes", probe_names);
    for (const auto& kv : probes) {
      const std::string probe_name = kv.first.Scalar();
      if (probe_name == kAllProbes) {
        if (!kv.second.IsNull() && !(kv.second.IsMap() && kv.second.size() == 0))
          r.fail(kv.second, name + ".probes.all", "takes no axes: write 'all: {}' and list a probe to set its axes");
        add_the_rest = true;
        continue;
      }
      const Probe* probe = Registry::instance().probe(name, probe_name);
      bc.probes.push_back(parse_probe(r, *probe, kv.second, name + ".probes." + probe_name));
    }
  }
  if (add_the_rest)
    for (const Probe* p : Registry::instance().probes(name)) {
      const bool listed = std::any_of(bc.probes.begin(), bc.probes.end(),
                                      [&](const ProbeConfig& pc) { return pc.name == p->info().name; });
      if (listed) continue;
      ProbeConfig pc = parse_probe(r, *p, YAML::Node(), name + ".probes." + p->info().name);
      pc.line = probes.Mark().line + 1;  // errors about it point at `probes: all` (or `all: {}`)
      bc.probes.push_back(std::move(pc));
    }
  return bc;
}

}  // namespace

const BackendConfig* RunConfig::backend(const std::string& name) const {
  for (const auto& b : backends)
    if (b.name == name) return &b;
  return nullptr;
}

std::vector<std::string> geometric_sizes(double min_bytes, double max_bytes, int points_per_octave) {
  std::vector<std::string> out;
  const double step = std::pow(2.0, 1.0 / points_per_octave);
  long long last = -1;
  for (int i = 0;; ++i) {
    double v = min_bytes * std::pow(step, i);
    if (v > max_bytes * (1 + 1e-9)) break;
    long long rounded = std::llround(v / 256.0) * 256;
    if (rounded < 256) rounded = 256;
    if (rounded != last) out.push_back(std::to_string(rounded));
    last = rounded;
  }
  return out;
}

namespace {

std::string at_line(const std::string& source, const YAML::Mark& mark) {
  return mark.line >= 0 ? source + ":" + std::to_string(mark.line + 1) : source;
}

RunConfig parse_config_unchecked(const std::string& text, const std::string& source) {
  Reporter r(source);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    // yaml-cpp stops nesting at a fixed depth with the message "bad file" (DeepRecursion).
    throw InputError(at_line(source, e.mark) + ": malformed YAML: " +
                     (e.msg == "bad file" ? std::string("nested too deeply") : one_line_message(e.msg)));
  }
  if (!root || root.IsNull()) throw InputError(source + ": empty configuration");
  if (!root.IsMap()) r.fail(root, "", "the configuration must be a mapping (measurement:, cpu:, cuda:)");
  check_yaml_document(text, source);
  check_keys(r, root, "", {"measurement", "cpu", "cuda"});
  RunConfig config;
  config.source = source;
  config.text = text;
  if (auto m = root["measurement"]) config.measurement = parse_measurement(r, m);
  for (const char* name : {"cpu", "cuda"})
    if (auto b = root[name]) config.backends.push_back(parse_backend(r, name, b));
  if (config.backends.empty()) r.fail(root, "", "no backend section (cpu: or cuda:)");
  return config;
}

}  // namespace

// InputError is the only exception that leaves (tests/fuzz/config_fuzz.cpp holds it to that),
// as one printable line; a yaml-cpp exception the checks above missed becomes one too.
RunConfig parse_config(const std::string& text, const std::string& source) {
  try {
    return parse_config_unchecked(text, source);
  } catch (const InputError& e) {
    throw InputError(one_line_message(e.what()));
  } catch (const YAML::Exception& e) {
    throw InputError(one_line_message(at_line(source, e.mark) + ": " + e.msg));
  }
}

RunConfig load_config_file(const std::string& path) {
  // Bounded: yaml-cpp needs about a second per 100k nodes, and /dev/zero never ends.
  return parse_config(read_input_file(path, kMaxConfigFileBytes, "a config"), path);
}

RunConfig load_embedded_config(const std::string& name) {
  auto it = embedded_files().find(name);
  if (it == embedded_files().end()) throw InputError("no embedded configuration '" + name + "'");
  return parse_config(it->second, "embedded:" + name);
}

std::string config_hash(const std::string& text) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace roofprobe
