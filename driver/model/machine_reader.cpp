// Machine file reader and validator: every field checked with its file, line and key; the
// physical sanity warnings a consumer should see.
#include <yaml-cpp/yaml.h>

#include <climits>
#include <cmath>
#include <fstream>
#include <set>
#include <utility>
#include <sstream>
#include <sys/stat.h>

#include "driver/model/atomic_file.hpp"
#include "driver/model/document.hpp"
#include "driver/model/errors.hpp"
#include "driver/model/machine.hpp"
#include "driver/model/yaml_checks.hpp"

namespace roofprobe {

namespace {

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& msg) const {
    std::ostringstream out;
    out << path_;
    if (at.IsDefined() && at.Mark().line >= 0) out << ':' << at.Mark().line + 1;
    out << ": " << key << ": " << msg;
    throw InputError(one_line_message(out.str()));  // a quoted value may hold "\0" or "\n"
  }

  // yaml-cpp throws on map[key] when `map` is a scalar: every lookup checks for a mapping first.
  void need_map(const YAML::Node& map, const std::string& where) const {
    if (!map.IsMap())
      fail(map, where.empty() ? "(top level)" : where.substr(0, where.size() - 1), "expected a mapping");
  }

  YAML::Node need(const YAML::Node& map, const std::string& key, const std::string& where) const {
    need_map(map, where);
    YAML::Node n = map[key];
    if (!n) fail(map, where + key, "missing");
    return n;
  }

  double number(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a number");
    try {
      double v = n.as<double>();
      if (!std::isfinite(v)) fail(n, key, "not a finite number");
      return v;
    } catch (const YAML::Exception&) {
      fail(n, key, "expected a number, got '" + n.Scalar() + "'");
    }
  }

  double opt_number(const YAML::Node& map, const std::string& key, const std::string& where) const {
    need_map(map, where);
    YAML::Node n = map[key];
    return n ? number(n, where + key) : 0.0;
  }

  // Counts (cores, lanes, samples): a number that fits an int (casting one that does not is UB).
  int integer(const YAML::Node& n, const std::string& key) const {
    double v = number(n, key);
    if (v < INT_MIN || v > INT_MAX) fail(n, key, "out of range for a count");
    if (v != std::floor(v)) fail(n, key, "expected a whole number");
    return static_cast<int>(v);
  }

  int opt_integer(const YAML::Node& map, const std::string& key, const std::string& where) const {
    need_map(map, where);
    YAML::Node n = map[key];
    return n ? integer(n, where + key) : 0;
  }

  // Sizes in bytes: >= 0 and below 2^64.
  std::uint64_t bytes(const YAML::Node& n, const std::string& key) const {
    double v = number(n, key);
    if (v < 0 || v >= 18446744073709551616.0) fail(n, key, "expected a size in bytes");
    return static_cast<std::uint64_t>(v);
  }

  std::string text(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected text");
    return n.Scalar();
  }

  std::string opt_text(const YAML::Node& map, const std::string& key, const std::string& where) const {
    need_map(map, where);
    YAML::Node n = map[key];
    return n ? text(n, where + key) : std::string();
  }

  std::map<std::string, std::string> text_map(const YAML::Node& n, const std::string& key) const {
    std::map<std::string, std::string> out;
    if (!n) return out;
    if (!n.IsMap()) fail(n, key, "expected a mapping");
    for (const auto& kv : n) out[kv.first.Scalar()] = text(kv.second, key + "." + kv.first.Scalar());
    return out;
  }

  // [lo, hi] with 0 < lo <= hi; absent: unknown.
  Interval interval(const YAML::Node& n, const std::string& key) const {
    if (!n) return {};
    if (!n.IsSequence() || n.size() != 2) fail(n, key, "expected [lo, hi]");
    const Interval i{number(n[0], key + "[0]"), number(n[1], key + "[1]")};
    if (!(i.lo > 0 && i.lo <= i.hi)) fail(n, key, "expected 0 < lo <= hi");
    return i;
  }

  // [lo, hi] with lo <= hi, either sign (an energy coefficient's interval may reach below 0).
  void signed_interval(const YAML::Node& n, const std::string& key, double& lo, double& hi) const {
    if (!n) return;
    if (!n.IsSequence() || n.size() != 2) fail(n, key, "expected [lo, hi]");
    lo = number(n[0], key + "[0]");
    hi = number(n[1], key + "[1]");
    if (lo > hi) fail(n, key, "expected lo <= hi");
  }

  bool opt_flag(const YAML::Node& map, const std::string& key, const std::string& where) const {
    need_map(map, where);
    YAML::Node n = map[key];
    if (!n) return false;
    try {
      if (n.IsScalar()) return n.as<bool>();
    } catch (const YAML::Exception&) {
    }
    fail(n, where + key, "expected true or false");
  }

  // A list of mappings under `key`, each read by read_one(node, "key[i].") into `out`; absent:
  // nothing.
  template <class T, class ReadOne>
  void list(const YAML::Node& n, const std::string& key, std::vector<T>& out, ReadOne read_one) const {
    if (!n) return;
    if (!n.IsSequence()) fail(n, key, "expected a list");
    for (const auto& item : n) {
      const std::string at = key + "[" + std::to_string(out.size()) + "]";
      if (!item.IsMap()) fail(item, at, "expected a mapping");
      out.push_back(read_one(item, at + "."));
    }
  }

  Stats stats(const YAML::Node& n, const std::string& key) const {
    Stats s;
    if (!n) return s;
    if (!n.IsMap()) fail(n, key, "expected a mapping");
    s.best = opt_number(n, "best", key + ".");
    s.median = opt_number(n, "median", key + ".");
    s.spread = opt_number(n, "spread", key + ".");
    s.samples = opt_integer(n, "samples", key + ".");
    return s;
  }

 private:
  std::string path_;
};

Wall read_wall(const Reader& r, const YAML::Node& n, const std::string& where, bool shared) {
  if (!n.IsMap()) r.fail(n, where, "expected a mapping");
  Wall w;
  w.pattern = r.text(r.need(n, "pattern", where + "."), where + ".pattern");
  if (shared)
    w.conflict_degree = r.opt_integer(n, "conflict_degree", where + ".");
  else
    w.word_bytes = r.opt_integer(n, "word_bytes", where + ".");
  w.instruction_intensity = r.number(r.need(n, "instruction_intensity", where + "."), where + ".instruction_intensity");
  w.measured_intensity = r.opt_number(n, "measured", where + ".");
  w.gtxn_s = r.opt_number(n, "gtxn_s", where + ".");
  w.warp_gips = r.opt_number(n, "warp_gips", where + ".");
  return w;
}

void read_instructions_walls_scaling(const Reader& r, const YAML::Node& root, Machine& m) {
  if (YAML::Node ins = root["instructions"]) {
    if (!ins.IsMap()) r.fail(ins, "instructions", "expected a mapping");
    if (YAML::Node w = ins["warp_gips"]) {
      if (!w.IsMap()) r.fail(w, "instructions.warp_gips", "expected a mapping");
      InstructionCeiling c;
      c.measured_gips = r.opt_number(w, "measured", "instructions.warp_gips.");
      c.theoretical_gips = r.opt_number(w, "theoretical", "instructions.warp_gips.");
      c.clock_mhz = r.opt_number(w, "clock_mhz", "instructions.warp_gips.");
      c.source = r.opt_text(w, "source", "instructions.warp_gips.");
      if (c.source.empty()) c.source = "empirical";
      c.stats = r.stats(w["stats"], "instructions.warp_gips.stats");
      c.probe = r.opt_text(w, "probe", "instructions.warp_gips.");
      c.citation = r.opt_text(w, "citation", "instructions.warp_gips.");
      m.warp_gips = c;
    }
    if (YAML::Node pred = ins["predication"]) {
      if (!pred.IsSequence()) r.fail(pred, "instructions.predication", "expected a list");
      for (const auto& p : pred) {
        const std::string where = "instructions.predication[" + std::to_string(m.predication.size()) + "].";
        if (!p.IsMap()) r.fail(p, where, "expected a mapping");
        PredicationPoint point;
        point.active_lanes = r.integer(r.need(p, "active_lanes", where), where + "active_lanes");
        point.warp_gips = r.opt_number(p, "warp_gips", where);
        point.thread_gips = r.opt_number(p, "thread_gips", where);
        m.predication.push_back(point);
      }
    }
  }
  if (YAML::Node walls = root["walls"]) {
    if (!walls.IsMap()) r.fail(walls, "walls", "expected a mapping");
    for (const char* kind : {"global", "shared"}) {
      YAML::Node list = walls[kind];
      if (!list) continue;
      if (!list.IsSequence()) r.fail(list, std::string("walls.") + kind, "expected a list");
      auto& out = std::string(kind) == "global" ? m.global_walls : m.shared_walls;
      for (const auto& w : list)
        out.push_back(read_wall(r, w, std::string("walls.") + kind + "[" + std::to_string(out.size()) + "]",
                                std::string(kind) == "shared"));
    }
  }
  if (YAML::Node scaling = root["scaling"]) {
    if (!scaling.IsSequence()) r.fail(scaling, "scaling", "expected a list");
    for (const auto& s : scaling) {
      const std::string where = "scaling[" + std::to_string(m.scaling.size()) + "].";
      if (!s.IsMap()) r.fail(s, where, "expected a mapping");
      ScalingPoint p;
      p.units = r.integer(r.need(s, "units", where), where + "units");
      for (const auto& kv : s)
        if (kv.first.Scalar() != "units")
          p.ceilings[kv.first.Scalar()] = r.number(kv.second, where + kv.first.Scalar());
      m.scaling.push_back(p);
    }
  }
  r.list(root["clocks"], "clocks", m.clocks, [&](const YAML::Node& n, const std::string& where) {
    ClockReading c;
    c.load = r.text(r.need(n, "load", where), where + "load");
    c.median_mhz = r.number(r.need(n, "median_mhz", where), where + "median_mhz");
    c.min_mhz = r.opt_number(n, "min_mhz", where);
    c.max_mhz = r.opt_number(n, "max_mhz", where);
    c.samples = r.opt_integer(n, "samples", where);
    c.probe = r.opt_text(n, "probe", where);
    return c;
  });
  if (YAML::Node energy = root["energy"]) {
    if (!energy.IsMap()) r.fail(energy, "energy", "expected a mapping");
    EnergySection e;
    e.schema = r.text(r.need(energy, "schema", "energy."), "energy.schema");
    if (e.schema != kEnergySchema) r.fail(energy["schema"], "energy.schema", std::string("expected ") + kEnergySchema);
    e.counter = r.opt_text(energy, "counter", "energy.");
    e.update_seconds = r.opt_number(energy, "update_seconds", "energy.");
    e.idle_power_w = r.opt_number(energy, "idle_power_w", "energy.");
    e.min_point_seconds = r.opt_number(energy, "min_point_seconds", "energy.");
    r.list(energy["ceilings"], "energy.ceilings", e.ceilings, [&](const YAML::Node& n, const std::string& where) {
      EnergyFigure f;
      f.name = r.text(r.need(n, "name", where), where + "name");
      f.power_w = r.number(r.need(n, "power_w", where), where + "power_w");
      f.pj_per_flop = r.opt_number(n, "pj_per_flop", where);
      f.pj_per_byte = r.opt_number(n, "pj_per_byte", where);
      f.seconds = r.opt_number(n, "seconds", where);
      f.samples = r.opt_integer(n, "samples", where);
      return f;
    });
    m.energy = e;
  }
  if (YAML::Node model = root["energy_model"]) {
    if (!model.IsMap()) r.fail(model, "energy_model", "expected a mapping");
    EnergyModelSection e;
    e.schema = r.text(r.need(model, "schema", "energy_model."), "energy_model.schema");
    if (e.schema != kEnergyModelSchema)
      r.fail(model["schema"], "energy_model.schema", std::string("expected ") + kEnergyModelSchema);
    e.fit = r.opt_text(model, "fit", "energy_model.");
    e.points = r.opt_integer(model, "points", "energy_model.");
    e.launches = r.opt_integer(model, "launches", "energy_model.");
    e.constant_power_w = r.number(r.need(model, "constant_power_w", "energy_model."), "energy_model.constant_power_w");
    r.signed_interval(model["constant_power_ci95"], "energy_model.constant_power_ci95", e.constant_power_ci95_lo,
                      e.constant_power_ci95_hi);
    auto coefficients = [&](const char* key, std::vector<EnergyCoefficient>& out) {
      r.list(model[key], std::string("energy_model.") + key, out, [&](const YAML::Node& n, const std::string& where) {
        EnergyCoefficient c;
        c.name = r.text(r.need(n, "name", where), where + "name");
        c.value = r.number(r.need(n, "value", where), where + "value");
        r.signed_interval(n["ci95"], where + "ci95", c.ci95_lo, c.ci95_hi);
        c.points = r.opt_integer(n, "points", where);
        return c;
      });
    };
    coefficients("pj_per_flop", e.pj_per_flop);
    coefficients("pj_per_byte", e.pj_per_byte);
    if (YAML::Node res = model["residuals"]) {
      e.residual_median_abs = r.opt_number(res, "median_abs", "energy_model.residuals.");
      e.residual_worst = r.opt_number(res, "worst", "energy_model.residuals.");
      e.worst_launch = r.opt_text(res, "worst_launch", "energy_model.residuals.");
      e.within_5pct = r.opt_integer(res, "within_5pct", "energy_model.residuals.");
    }
    r.list(model["balance"], "energy_model.balance", e.balance, [&](const YAML::Node& n, const std::string& where) {
      EnergyBalance b;
      b.flops = r.text(r.need(n, "flops", where), where + "flops");
      b.level = r.text(r.need(n, "level", where), where + "level");
      b.time_flop_per_byte = r.opt_number(n, "time_flop_per_byte", where);
      b.energy_flop_per_byte = r.opt_number(n, "energy_flop_per_byte", where);
      b.energy_with_constant_power_flop_per_byte = r.opt_number(n, "energy_with_constant_power_flop_per_byte", where);
      b.gap = r.opt_number(n, "gap", where);
      return b;
    });
    r.list(model["checks"], "energy_model.checks", e.checks, [&](const YAML::Node& n, const std::string& where) {
      EnergyCheck c;
      c.check = r.text(r.need(n, "check", where), where + "check");
      c.holds = r.opt_flag(n, "holds", where);
      c.detail = r.opt_text(n, "detail", where);
      return c;
    });
    e.left_out = r.opt_text(model, "left_out", "energy_model.");
    m.energy_model = e;
  }
  if (YAML::Node caps = root["power_caps"]) {
    if (!caps.IsMap()) r.fail(caps, "power_caps", "expected a mapping");
    PowerCapsSection section;
    section.schema = r.text(r.need(caps, "schema", "power_caps."), "power_caps.schema");
    if (section.schema != kPowerCapsSchema)
      r.fail(caps["schema"], "power_caps.schema", std::string("expected ") + kPowerCapsSchema);
    section.restored_w = r.opt_number(caps, "restored_w", "power_caps.");
    r.list(r.need(caps, "caps", "power_caps."), "power_caps.caps", section.caps,
           [&](const YAML::Node& n, const std::string& where) {
             PowerCapResult cap;
             cap.cap_w = r.number(r.need(n, "cap_w", where), where + "cap_w");
             r.list(n["ceilings"], where + "ceilings", cap.ceilings, [&](const YAML::Node& c, const std::string& at) {
               PowerCapCeiling f;
               f.name = r.text(r.need(c, "name", at), at + "name");
               f.kind = r.text(r.need(c, "kind", at), at + "kind");
               if (f.kind != "compute" && f.kind != "memory")
                 r.fail(c["kind"], at + "kind", "expected compute or memory");
               f.rate = r.number(r.need(c, "rate", at), at + "rate");
               f.ci95 = r.interval(c["ci95"], at + "ci95");
               f.spread = r.opt_number(c, "spread", at);
               f.clock_mhz = r.opt_number(c, "clock_mhz", at);
               f.limited_by = r.opt_text(c, "limited_by", at);
               f.samples = r.opt_integer(c, "samples", at);
               return f;
             });
             return cap;
           });
    m.power_caps = section;
  }
}

// The file's bytes, at most kMaxMachineFileBytes of them: yaml-cpp needs about a second per
// 100k nodes, so an oversized file (or /dev/zero) is refused before it is parsed.
std::string read_machine_bytes(const std::string& path) {
  return read_input_file(path, kMaxMachineFileBytes, "a machine file");
}

std::string at_line(const std::string& name, const YAML::Mark& mark) {
  return mark.line >= 0 ? name + ":" + std::to_string(mark.line + 1) : name;
}

YAML::Node parse_machine_yaml(const std::string& text, const std::string& name) {
  YAML::Node root;
  try {
    // Invalid UTF-8 is read as the writer writes it (U+FFFD), so that names the writer would change
    // (and the order of the maps keyed by them) are the same after a round trip.
    root = YAML::Load(doc::valid_utf8(text));
  } catch (const YAML::ParserException& e) {
    // yaml-cpp stops nesting at a fixed depth with the message "bad file" (DeepRecursion).
    const bool deep = e.msg == "bad file";
    throw InputError(at_line(name, e.mark) +
                     ": malformed YAML: " + (deep ? std::string("nested too deeply") : one_line_message(e.msg)));
  }
  if (!root || root.IsNull()) throw InputError(name + ": empty file, expected a machine file");
  if (!root.IsMap()) throw InputError(name + ": not a machine file (expected a YAML mapping)");
  check_yaml_document(text, name);
  return root;
}

Machine read_machine_root(const Reader& r, const YAML::Node& root);

// Runs `f` so that only InputError leaves it, as one printable line: yaml-cpp's own exceptions
// (a conversion or subscript the checks above missed) become one naming the file and line.
template <typename F>
auto one_error_kind(const std::string& name, F f) -> decltype(f()) {
  try {
    return f();
  } catch (const InputError& e) {
    throw InputError(one_line_message(e.what()));
  } catch (const YAML::Exception& e) {
    throw InputError(one_line_message(at_line(name, e.mark) + ": " + e.msg));
  }
}

}  // namespace

Machine read_machine_text(const std::string& text, const std::string& name) {
  return one_error_kind(name, [&] { return read_machine_root(Reader(name), parse_machine_yaml(text, name)); });
}

Machine read_machine_file(const std::string& path) {
  std::string text = one_error_kind(path, [&] { return read_machine_bytes(path); });
  return read_machine_text(text, path);
}

namespace {

DeviceInfo read_device(const Reader& r, const YAML::Node& root) {
  YAML::Node dev = r.need(root, "device", "");
  if (!dev.IsMap()) r.fail(dev, "device", "expected a mapping");
  DeviceInfo d;
  d.kind = r.text(r.need(dev, "kind", "device."), "device.kind");
  if (d.kind != "cpu" && d.kind != "gpu") r.fail(dev["kind"], "device.kind", "expected cpu or gpu");
  d.backend = r.opt_text(dev, "backend", "device.");
  d.name = r.text(r.need(dev, "name", "device."), "device.name");
  d.vendor = r.opt_text(dev, "vendor", "device.");
  d.compute_units = r.opt_integer(dev, "compute_units", "device.");
  d.compute_unit_name = r.opt_text(dev, "compute_unit_name", "device.");
  d.threads = r.opt_integer(dev, "threads", "device.");
  if (YAML::Node caches = dev["caches"]) {
    if (!caches.IsSequence()) r.fail(caches, "device.caches", "expected a list");
    for (const auto& c : caches) {
      if (!c.IsMap()) r.fail(c, "device.caches[]", "expected a mapping");
      CacheInfo info;
      info.name = r.text(r.need(c, "level", "device.caches[]."), "device.caches[].level");
      info.bytes = r.bytes(r.need(c, "bytes", "device.caches[]."), "device.caches[].bytes");
      info.instances = r.opt_integer(c, "instances", "device.caches[].");
      if (info.instances <= 0) info.instances = 1;
      d.caches.push_back(info);
    }
  }
  d.memory_name = r.opt_text(dev, "memory_name", "device.");
  if (d.memory_name.empty()) d.memory_name = "DRAM";
  if (YAML::Node mb = dev["memory_bytes"]) d.memory_bytes = r.bytes(mb, "device.memory_bytes");
  if (YAML::Node clock = dev["clock_mhz"]) {
    if (!clock.IsMap()) r.fail(clock, "device.clock_mhz", "expected a mapping");
    d.clock_max_mhz = r.opt_number(clock, "max", "device.clock_mhz.");
    d.clock_measured_mhz = r.opt_number(clock, "measured", "device.clock_mhz.");
  }
  d.extra = r.text_map(dev["extra"], "device.extra");
  if (YAML::Node theo = dev["theoretical"]) {
    if (!theo.IsSequence()) r.fail(theo, "device.theoretical", "expected a list");
    for (const auto& t : theo) {
      if (!t.IsMap()) r.fail(t, "device.theoretical[]", "expected a mapping");
      std::string name = r.text(r.need(t, "name", "device.theoretical[]."), "device.theoretical[].name");
      d.theoretical_gflops[name] =
          r.number(r.need(t, "gflops", "device.theoretical[]."), "device.theoretical[].gflops");
      std::string basis = r.opt_text(t, "basis", "device.theoretical[].");
      if (!basis.empty()) d.theoretical_basis[name] = basis;
    }
  }
  return d;
}

// A ceiling's `sustained:` (SustainedFigure); `rate_key` gflops or gbs. A settled figure must
// carry its interval and the rate must lie inside it; an unsettled one has none.
std::optional<SustainedFigure> read_sustained(const Reader& r, const YAML::Node& parent, const std::string& rate_key,
                                              const std::string& where) {
  const YAML::Node n = parent["sustained"];
  if (!n) return std::nullopt;
  const std::string at = where + "sustained.";
  if (!n.IsMap()) r.fail(n, where + "sustained", "expected a mapping");
  SustainedFigure f;
  f.rate = r.number(r.need(n, rate_key, at), at + rate_key);
  if (!(f.rate > 0)) r.fail(n[rate_key], at + rate_key, "expected a rate > 0");
  f.ci95 = r.interval(n[rate_key + "_ci95"], at + rate_key + "_ci95");
  f.settled = r.opt_flag(n, "settled", at);
  if (!n["settled"]) r.fail(n, at + "settled", "missing");
  if (f.settled && !f.ci95.known())
    r.fail(n, at + rate_key + "_ci95", "missing: a settled figure carries its interval");
  if (!f.settled && f.ci95.known())
    r.fail(n[rate_key + "_ci95"], at + rate_key + "_ci95", "an unsettled figure has no interval");
  if (f.ci95.known() && !(f.rate >= f.ci95.lo && f.rate <= f.ci95.hi))
    r.fail(n[rate_key], at + rate_key, "outside its interval " + rate_key + "_ci95");
  f.clock_mhz = r.opt_number(n, "clock_mhz", at);
  f.power_w = r.opt_number(n, "power_w", at);
  const std::string pj_key = rate_key == "gflops" ? "pj_per_flop" : "pj_per_byte";
  f.pj_per_unit = r.opt_number(n, pj_key, at);
  f.pj_ci95 = r.interval(n[pj_key + "_ci95"], at + pj_key + "_ci95");
  if (f.pj_ci95.known() && !(f.pj_per_unit >= f.pj_ci95.lo && f.pj_per_unit <= f.pj_ci95.hi))
    r.fail(n[pj_key + "_ci95"], at + pj_key + "_ci95", "does not hold " + pj_key);
  f.seconds = r.opt_number(n, "seconds", at);
  f.windows = r.opt_integer(n, "windows", at);
  if (f.clock_mhz < 0 || f.power_w < 0 || f.seconds < 0 || f.windows < 0 || f.pj_per_unit < 0)
    r.fail(n, where + "sustained", "clock_mhz, power_w, " + pj_key + ", seconds and windows must be >= 0");
  f.throttled = r.opt_text(n, "throttled", at);
  f.limited_by = r.opt_text(n, "limited_by", at);
  return f;
}

MemoryLevel read_memory_level(const Reader& r, const YAML::Node& n, const std::string& where) {
  if (!n.IsMap()) r.fail(n, where, "expected a mapping");
  MemoryLevel l;
  l.level = r.text(r.need(n, "level", where), where + "level");
  l.source = r.opt_text(n, "source", where);
  if (l.source.empty()) l.source = "empirical";
  l.gbs = r.number(r.need(n, "gbs", where), where + "gbs");
  l.gtxn_s = r.opt_number(n, "gtxn_s", where);
  l.bytes_per_clk_per_unit = n["bytes_per_clk_per_sm"] ? r.opt_number(n, "bytes_per_clk_per_sm", where)
                                                       : r.opt_number(n, "bytes_per_clk_per_core", where);
  if (YAML::Node ws = n["working_set_bytes"]) {
    if (!ws.IsSequence() || ws.size() != 2) r.fail(ws, where + "working_set_bytes", "expected [lo, hi]");
    l.working_set_lo = r.number(ws[0], where + "working_set_bytes[0]");
    l.working_set_hi = r.number(ws[1], where + "working_set_bytes[1]");
  }
  l.gbs_ci95 = r.interval(n["gbs_ci95"], where + "gbs_ci95");
  l.capacity_bytes = r.opt_number(n, "capacity_bytes", where);
  l.capacity_ci95 = r.interval(n["capacity_ci95"], where + "capacity_ci95");
  l.capacity_note = r.opt_text(n, "capacity_note", where);
  l.noisy = r.opt_flag(n, "noisy", where);
  l.stats = r.stats(n["stats"], where + "stats");
  l.probe = r.opt_text(n, "probe", where);
  l.params = r.text_map(n["params"], where + "params");
  l.headline_series = r.opt_text(n, "headline", where);
  if (YAML::Node bs = n["by_series"]) {
    if (!bs.IsMap()) r.fail(bs, where + "by_series", "expected a mapping");
    for (const auto& kv : bs)
      l.by_series[kv.first.Scalar()] = r.number(kv.second, where + "by_series." + kv.first.Scalar());
  }
  l.citation = r.opt_text(n, "citation", where);
  l.sustained = read_sustained(r, n, "gbs", where);
  return l;
}

ComputeCeiling read_compute_ceiling(const Reader& r, const YAML::Node& n, const std::string& where) {
  if (!n.IsMap()) r.fail(n, where, "expected a mapping");
  ComputeCeiling c;
  c.name = r.text(r.need(n, "name", where), where + "name");
  c.source = r.opt_text(n, "source", where);
  if (c.source.empty()) c.source = "empirical";
  c.gflops = r.number(r.need(n, "gflops", where), where + "gflops");
  c.gflops_ci95 = r.interval(n["gflops_ci95"], where + "gflops_ci95");
  c.theoretical_gflops = r.opt_number(n, "theoretical_gflops", where);
  c.fraction_of_theoretical = r.opt_number(n, "fraction_of_theoretical", where);
  c.noisy = r.opt_flag(n, "noisy", where);
  c.throttled = r.opt_text(n, "throttled", where);
  c.limited_by = r.opt_text(n, "limited_by", where);
  c.clock_mhz = r.opt_number(n, "clock_mhz", where);
  c.instructions_gips = r.opt_number(n, "instructions_gips", where);
  c.flops_per_instruction = r.opt_number(n, "flops_per_instruction", where);
  c.instruction = r.opt_text(n, "instruction", where);
  if (YAML::Node list = n["by_instruction"]) {
    if (!list.IsSequence()) r.fail(list, where + "by_instruction", "expected a list");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string at = where + "by_instruction[" + std::to_string(i) + "].";
      const YAML::Node f = list[i];
      if (!f.IsMap()) r.fail(f, at, "expected a mapping");
      InstructionFigure figure;
      figure.instruction = r.text(r.need(f, "instruction", at), at + "instruction");
      figure.gflops = r.number(r.need(f, "gflops", at), at + "gflops");
      figure.instructions_gips = r.opt_number(f, "instructions_gips", at);
      figure.flops_per_instruction = r.opt_number(f, "flops_per_instruction", at);
      figure.stats = r.stats(f["stats"], at + "stats");
      figure.params = r.text_map(f["params"], at + "params");
      c.by_instruction.push_back(std::move(figure));
    }
  }
  c.stats = r.stats(n["stats"], where + "stats");
  c.probe = r.opt_text(n, "probe", where);
  c.params = r.text_map(n["params"], where + "params");
  c.citation = r.opt_text(n, "citation", where);
  c.sustained = read_sustained(r, n, "gflops", where);
  return c;
}

Machine read_machine_root(const Reader& r, const YAML::Node& root) {
  Machine m;
  m.schema = r.text(r.need(root, "schema", ""), "schema");
  if (m.schema != kMachineSchema)
    r.fail(root["schema"], "schema",
           "unsupported schema '" + m.schema + "' (this roofprobe reads " + kMachineSchema + ")");
  YAML::Node complete = r.need(root, "complete", "");
  try {
    m.complete = complete.as<bool>();
  } catch (const YAML::Exception&) {
    r.fail(complete, "complete", "expected true or false");
  }
  if (YAML::Node missing = root["missing"]) {
    if (!missing.IsSequence()) r.fail(missing, "missing", "expected a list");
    for (const auto& item : missing) m.missing.push_back(r.text(item, "missing[]"));
  }
  m.provenance = r.text_map(root["provenance"], "provenance");

  m.device = read_device(r, root);

  if (YAML::Node units = root["units"]) {
    if (!units.IsMap()) r.fail(units, "units", "expected a mapping");
    for (const auto& kv : units)
      if (kv.first.IsScalar() && kv.second.IsScalar()) m.units_as_read[kv.first.Scalar()] = kv.second.Scalar();
  } else {
    r.fail(root, "units", "missing");
  }

  YAML::Node memory = r.need(root, "memory", "");
  if (!memory.IsSequence()) r.fail(memory, "memory", "expected a list");
  for (const auto& n : memory) {
    const std::string where = "memory[" + std::to_string(m.memory.size()) + "].";
    m.memory.push_back(read_memory_level(r, n, where));
  }

  YAML::Node compute = r.need(root, "compute", "");
  if (!compute.IsSequence()) r.fail(compute, "compute", "expected a list");
  for (const auto& n : compute) {
    const std::string where = "compute[" + std::to_string(m.compute.size()) + "].";
    m.compute.push_back(read_compute_ceiling(r, n, where));
  }
  read_instructions_walls_scaling(r, root, m);
  return m;
}

}  // namespace

Machine read_valid_machine_file(const std::string& path) {
  const std::string text = read_machine_bytes(path);
  const std::vector<std::string> problems = validate_machine_text(text, path);
  if (!problems.empty())
    throw InputError(problems.front() + (problems.size() > 1 ? " (and " + std::to_string(problems.size() - 1) +
                                                                   " more: roofprobe validate " + path + ")"
                                                             : ""));
  return read_machine_text(text, path);
}

std::vector<std::string> validate_machine_file(const std::string& path) {
  std::string text;
  try {
    text = one_error_kind(path, [&] { return read_machine_bytes(path); });
  } catch (const InputError& e) {
    return {e.what()};
  }
  return validate_machine_text(text, path);
}

namespace {
// Problems and warnings quote names the file holds (a level named "D\x18RAM"): each is made one
// printable line, as the reader's own errors are.
std::vector<std::string> printable_lines(std::vector<std::string> lines) {
  for (std::string& line : lines) line = one_line_message(line);
  return lines;
}
}  // namespace

std::vector<std::string> validate_machine_text(const std::string& text, const std::string& path) {
  std::vector<std::string> problems;
  Machine m;
  try {
    m = read_machine_text(text, path);
  } catch (const InputError& e) {
    problems.push_back(e.what());
    return problems;
  }
  auto positive = [&](double v, const std::string& key) {
    if (!(v > 0)) problems.push_back(path + ": " + key + ": must be > 0");
  };
  if (m.device.compute_units < 0) problems.push_back(path + ": device.compute_units: negative");
  // The units are the schema's: a reader takes every rate as GB/s or GFLOP/s, whatever the file
  // says, so a file in other units is refused, not read 1000x off. (Missing: a warning.)
  for (const auto& [k, v] : machine_units())
    if (auto it = m.units_as_read.find(k); it != m.units_as_read.end() && it->second != v)
      problems.push_back(path + ": units." + k + ": '" + it->second + "', but machine files are in '" + v +
                         "': convert the values");
  for (std::size_t i = 0; i < m.memory.size(); ++i) {
    const auto& l = m.memory[i];
    std::string key = "memory[" + std::to_string(i) + "] (" + l.level + ")";
    if (l.level.empty()) problems.push_back(path + ": " + key + ".level: empty");
    positive(l.gbs, key + ".gbs");
    if (l.working_set_lo < 0) problems.push_back(path + ": " + key + ".working_set_bytes: negative");
    if (l.source != "empirical" && l.source != "spec" && l.source != "published")
      problems.push_back(path + ": " + key + ".source: expected empirical, spec or published");
    if (l.working_set_lo > l.working_set_hi) problems.push_back(path + ": " + key + ".working_set_bytes: lo > hi");
  }
  // One figure per name and source: a reader (export, compare, plot) looks a level or ceiling up
  // by its name and would take one of two and drop the other without a word.
  std::set<std::pair<std::string, std::string>> named;
  for (std::size_t i = 0; i < m.memory.size(); ++i)
    if (!named.insert({"memory " + m.memory[i].level, m.memory[i].source}).second)
      problems.push_back(path + ": memory[" + std::to_string(i) + "] (" + m.memory[i].level + "): a second " +
                         m.memory[i].source + " level of that name");
  for (std::size_t i = 0; i < m.compute.size(); ++i)
    if (!named.insert({"compute " + m.compute[i].name, m.compute[i].source}).second)
      problems.push_back(path + ": compute[" + std::to_string(i) + "] (" + m.compute[i].name + "): a second " +
                         m.compute[i].source + " ceiling of that name");
  for (std::size_t i = 0; i < m.compute.size(); ++i) {
    const auto& c = m.compute[i];
    std::string key = "compute[" + std::to_string(i) + "] (" + c.name + ")";
    if (c.name.empty()) problems.push_back(path + ": " + key + ".name: empty");
    positive(c.gflops, key + ".gflops");
    if (c.theoretical_gflops < 0) problems.push_back(path + ": " + key + ".theoretical_gflops: negative");
  }
  if (m.energy)
    for (std::size_t i = 0; i < m.energy->ceilings.size(); ++i) {
      const EnergyFigure& f = m.energy->ceilings[i];
      const std::string key = "energy.ceilings[" + std::to_string(i) + "] (" + f.name + ")";
      positive(f.power_w, key + ".power_w");
      if (f.pj_per_flop < 0 || f.pj_per_byte < 0) problems.push_back(path + ": " + key + ": negative energy");
    }
  if (m.energy_model) {
    const EnergyModelSection& e = *m.energy_model;
    auto inside = [&](const std::string& key, double value, double lo, double hi) {
      if (!(lo <= value && value <= hi)) problems.push_back(path + ": " + key + ": value outside its ci95");
    };
    inside("energy_model.constant_power_w", e.constant_power_w, e.constant_power_ci95_lo, e.constant_power_ci95_hi);
    for (std::size_t i = 0; i < e.pj_per_flop.size(); ++i)
      inside("energy_model.pj_per_flop[" + std::to_string(i) + "] (" + e.pj_per_flop[i].name + ")",
             e.pj_per_flop[i].value, e.pj_per_flop[i].ci95_lo, e.pj_per_flop[i].ci95_hi);
    for (std::size_t i = 0; i < e.pj_per_byte.size(); ++i)
      inside("energy_model.pj_per_byte[" + std::to_string(i) + "] (" + e.pj_per_byte[i].name + ")",
             e.pj_per_byte[i].value, e.pj_per_byte[i].ci95_lo, e.pj_per_byte[i].ci95_hi);
    if (e.within_5pct < 0 || e.within_5pct > e.launches)
      problems.push_back(path + ": energy_model.residuals.within_5pct: not between 0 and the launches");
  }
  if (m.power_caps) {
    std::set<double> seen;
    for (std::size_t i = 0; i < m.power_caps->caps.size(); ++i) {
      const PowerCapResult& cap = m.power_caps->caps[i];
      const std::string key = "power_caps.caps[" + std::to_string(i) + "]";
      positive(cap.cap_w, key + ".cap_w");
      if (!seen.insert(cap.cap_w).second) problems.push_back(path + ": " + key + ".cap_w: a cap listed twice");
      for (std::size_t j = 0; j < cap.ceilings.size(); ++j) {
        const PowerCapCeiling& c = cap.ceilings[j];
        const std::string at = key + ".ceilings[" + std::to_string(j) + "] (" + c.name + ")";
        positive(c.rate, at + ".rate");
        if (c.spread < 0 || c.clock_mhz < 0 || c.samples < 0)
          problems.push_back(path + ": " + at + ": negative spread, clock or samples");
      }
    }
  }
  // An interrupted run may have measured too little to fit anything; it says so (complete: false).
  if (m.complete && m.memory.empty() && m.compute.empty())
    problems.push_back(path + ": no memory levels and no compute ceilings");
  return printable_lines(std::move(problems));
}

std::vector<std::string> physical_warnings(const std::string& path, const Machine& m) {
  std::vector<std::string> warnings;
  for (const auto& [k, v] : machine_units()) {
    auto it = m.units_as_read.find(k);
    if (it == m.units_as_read.end() || it->second != v)
      warnings.push_back(path + ": units." + k + ": missing or not '" + v + "'");
  }
  // Levels nearer the cores are at least as fast as farther ones. Published/spec entries are
  // compared only among themselves' kind, so a reference file's spec and measured rows do not clash.
  for (std::size_t i = 0; i + 1 < m.memory.size(); ++i)
    for (std::size_t j = i + 1; j < m.memory.size(); ++j) {
      const MemoryLevel& near = m.memory[i];
      const MemoryLevel& far = m.memory[j];
      if (near.source != far.source || near.level == far.level) continue;
      // Shared memory and L1 are one SRAM array on NVIDIA GPUs: siblings, neither is nearer.
      auto is_l1 = [](const std::string& n) { return n == "L1" || n.rfind("L1.", 0) == 0; };
      if ((near.level == "shared" && is_l1(far.level)) || (far.level == "shared" && is_l1(near.level))) continue;
      if (far.gbs > 1.05 * near.gbs) {
        std::ostringstream w;
        w << path << ": memory[" << j << "] (" << far.level << "): " << far.gbs
          << " GB/s is faster than the nearer memory[" << i << "] (" << near.level << ") at " << near.gbs << " GB/s";
        warnings.push_back(w.str());
      }
    }
  for (std::size_t i = 0; i < m.compute.size(); ++i) {
    const ComputeCeiling& c = m.compute[i];
    if (c.theoretical_gflops > 0 && c.gflops > 1.03 * c.theoretical_gflops) {
      std::ostringstream w;
      w << path << ": compute[" << i << "] (" << c.name << ").gflops: " << c.gflops << " is above theoretical_gflops "
        << c.theoretical_gflops << " by more than 3%";
      warnings.push_back(w.str());
    }
  }
  if (m.warp_gips && m.warp_gips->theoretical_gips > 0 &&
      m.warp_gips->measured_gips > 1.03 * m.warp_gips->theoretical_gips) {
    std::ostringstream w;
    w << path << ": instructions.warp_gips.measured: " << m.warp_gips->measured_gips << " is above theoretical "
      << m.warp_gips->theoretical_gips << " by more than 3%";
    warnings.push_back(w.str());
  }
  return printable_lines(std::move(warnings));
}

}  // namespace roofprobe
