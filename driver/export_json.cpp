// JSON text: string escaping, numbers, a small ordered document builder, and the machine file as
// JSON (`roofprobe export --format json`): the same keys, nesting and order as machine_to_yaml.
#include <charconv>
#include <cmath>
#include <cstdio>

#include "driver/export.hpp"

namespace roofprobe {
namespace json {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  std::size_t n = 0;
  unsigned int code = 0, min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, code = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, code = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, code = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
          if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    const std::size_t n = utf8_length(text, i);
    if (n == 0) {
      out += "\\ufffd";  // not UTF-8: a replacement character rather than an unreadable file
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out + "\"";
}

std::string real(double value) {
  if (!std::isfinite(value)) return "null";
  if (value == 0) return "0.0";  // also -0.0
  // Shortest round trip; plain digits (no exponent) for the range rates and sizes live in.
  char buf[64];
  const double a = std::fabs(value);
  const auto result = a >= 1e-6 && a < 1e15 ? std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed)
                                            : std::to_chars(buf, buf + sizeof buf, value);
  std::string text(buf, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::Bool;
  v.bool_ = b;
  return v;
}

Value Value::integer(long long i) {
  Value v;
  v.kind_ = Kind::Integer;
  v.int_ = i;
  return v;
}

Value Value::number(double d) {
  Value v;
  v.kind_ = Kind::Real;
  v.real_ = d;
  return v;
}

Value Value::string(std::string s) {
  Value v;
  v.kind_ = Kind::String;
  v.text_ = std::move(s);
  return v;
}

Value Value::array() {
  Value v;
  v.kind_ = Kind::Array;
  return v;
}

Value Value::object() {
  Value v;
  v.kind_ = Kind::Object;
  return v;
}

Value& Value::push(Value v) {
  items_.emplace_back(std::string(), std::move(v));
  return *this;
}

Value& Value::set(const std::string& key, Value v) {
  items_.emplace_back(key, std::move(v));
  return *this;
}

std::string Value::dump(int indent) const {
  std::string out;
  write(out, indent, 0);
  return out;
}

void Value::write(std::string& out, int indent, int depth) const {
  switch (kind_) {
    case Kind::Null: out += "null"; return;
    case Kind::Bool: out += bool_ ? "true" : "false"; return;
    case Kind::Integer: out += std::to_string(int_); return;
    case Kind::Real: out += real(real_); return;
    case Kind::String: out += quote(text_); return;
    case Kind::Array:
    case Kind::Object: break;
  }
  const bool object = kind_ == Kind::Object;
  out += object ? '{' : '[';
  if (items_.empty()) {
    out += object ? '}' : ']';
    return;
  }
  const std::string inner = indent > 0 ? "\n" + std::string(std::size_t(indent) * (depth + 1), ' ') : "";
  const std::string outer = indent > 0 ? "\n" + std::string(std::size_t(indent) * depth, ' ') : "";
  for (std::size_t i = 0; i < items_.size(); ++i) {
    if (i > 0) out += indent > 0 ? "," : ", ";
    out += inner;
    if (object) out += quote(items_[i].first) + ": ";
    items_[i].second.write(out, indent, depth + 1);
  }
  out += outer;
  out += object ? '}' : ']';
}

}  // namespace json

namespace {

using json::Value;

Value text_map(const std::map<std::string, std::string>& map) {
  Value out = Value::object();
  for (const auto& [k, v] : map) out.set(k, Value::string(v));
  return out;
}

Value stats_json(const Stats& s) {
  return Value::object()
      .set("best", Value::number(s.best))
      .set("median", Value::number(s.median))
      .set("spread", Value::number(s.spread))
      .set("samples", Value::integer(s.samples));
}

Value wall_json(const Wall& w, bool shared) {
  Value out = Value::object();
  out.set("pattern", Value::string(w.pattern));
  if (shared)
    out.set("conflict_degree", Value::integer(w.conflict_degree));
  else
    out.set("word_bytes", Value::integer(w.word_bytes));
  out.set("instruction_intensity", Value::number(w.instruction_intensity));
  out.set("measured", Value::number(w.measured_intensity));
  out.set("gtxn_s", Value::number(w.gtxn_s));
  return out;
}

Value device_json(const DeviceInfo& d) {
  Value caches = Value::array();
  for (const auto& c : d.caches)
    caches.push(Value::object()
                    .set("level", Value::string(c.name))
                    .set("bytes", Value::integer(static_cast<long long>(c.bytes)))
                    .set("instances", Value::integer(c.instances)));
  Value theoretical = Value::array();
  for (const auto& [name, gflops] : d.theoretical_gflops) {
    Value t = Value::object().set("name", Value::string(name)).set("gflops", Value::number(gflops));
    auto basis = d.theoretical_basis.find(name);
    if (basis != d.theoretical_basis.end()) t.set("basis", Value::string(basis->second));
    theoretical.push(std::move(t));
  }
  return Value::object()
      .set("kind", Value::string(d.kind))
      .set("backend", Value::string(d.backend))
      .set("name", Value::string(d.name))
      .set("vendor", Value::string(d.vendor))
      .set("compute_units", Value::integer(d.compute_units))
      .set("compute_unit_name", Value::string(d.compute_unit_name))
      .set("threads", Value::integer(d.threads))
      .set("caches", std::move(caches))
      .set("memory_name", Value::string(d.memory_name))
      .set("memory_bytes", Value::integer(static_cast<long long>(d.memory_bytes)))
      .set("clock_mhz", Value::object()
                            .set("max", Value::number(d.clock_max_mhz))
                            .set("measured", Value::number(d.clock_measured_mhz)))
      .set("extra", text_map(d.extra))
      .set("theoretical", std::move(theoretical));
}

}  // namespace

json::Value machine_to_json(const Machine& m) {
  Value root = Value::object();
  root.set("schema", Value::string(m.schema));
  root.set("complete", Value::boolean(m.complete));
  Value missing = Value::array();
  for (const auto& s : m.missing) missing.push(Value::string(s));
  root.set("missing", std::move(missing));
  root.set("provenance", text_map(m.provenance));
  root.set("device", device_json(m.device));
  root.set("units", text_map(machine_units()));

  const std::string per_unit = m.device.kind == "gpu" ? "bytes_per_clk_per_sm" : "bytes_per_clk_per_core";
  Value memory = Value::array();
  for (const auto& l : m.memory) {
    Value by_series = Value::object();
    for (const auto& [k, v] : l.by_series) by_series.set(k, Value::number(v));
    Value e = Value::object();
    e.set("level", Value::string(l.level))
        .set("source", Value::string(l.source))
        .set("gbs", Value::number(l.gbs))
        .set("transaction_bytes", Value::integer(transaction_bytes(l)))
        .set("gtxn_s", Value::number(l.gtxn_s))
        .set(per_unit, Value::number(l.bytes_per_clk_per_unit))
        .set("working_set_bytes", Value::array()
                                      .push(Value::number(l.working_set_lo))
                                      .push(Value::number(l.working_set_hi)))
        ;
    if (l.gbs_ci95.known())
      e.set("gbs_ci95", Value::array().push(Value::number(l.gbs_ci95.lo)).push(Value::number(l.gbs_ci95.hi)));
    if (l.capacity_bytes > 0) e.set("capacity_bytes", Value::number(l.capacity_bytes));
    if (l.capacity_ci95.known())
      e.set("capacity_ci95",
            Value::array().push(Value::number(l.capacity_ci95.lo)).push(Value::number(l.capacity_ci95.hi)));
    if (l.noisy) e.set("noisy", Value::boolean(true));
    e.set("stats", stats_json(l.stats)).set("probe", Value::string(l.probe)).set("params", text_map(l.params));
    if (!l.headline_series.empty()) e.set("headline", Value::string(l.headline_series));
    e.set("by_series", std::move(by_series));
    if (!l.citation.empty()) e.set("citation", Value::string(l.citation));
    memory.push(std::move(e));
  }
  root.set("memory", std::move(memory));

  Value compute = Value::array();
  for (const auto& c : m.compute) {
    Value e = Value::object();
    e.set("name", Value::string(c.name))
        .set("source", Value::string(c.source))
        .set("gflops", Value::number(c.gflops))
        .set("theoretical_gflops", Value::number(c.theoretical_gflops))
        .set("fraction_of_theoretical", Value::number(c.fraction_of_theoretical))
        .set("clock_mhz", Value::number(c.clock_mhz));
    if (c.noisy) e.set("noisy", Value::boolean(true));
    if (c.flops_per_instruction > 0) {
      e.set("instructions_gips", Value::number(c.instructions_gips));
      e.set("flops_per_instruction", Value::number(c.flops_per_instruction));
    }
    e.set("stats", stats_json(c.stats))
        .set("probe", Value::string(c.probe))
        .set("params", text_map(c.params));
    if (!c.citation.empty()) e.set("citation", Value::string(c.citation));
    compute.push(std::move(e));
  }
  root.set("compute", std::move(compute));

  // The instruction-roofline sections appear only when the YAML has them.
  if (m.warp_gips || !m.predication.empty()) {
    Value ins = Value::object();
    if (m.warp_gips) {
      const InstructionCeiling& w = *m.warp_gips;
      Value e = Value::object();
      e.set("measured", Value::number(w.measured_gips))
          .set("theoretical", Value::number(w.theoretical_gips))
          .set("clock_mhz", Value::number(w.clock_mhz))
          .set("source", Value::string(w.source))
          .set("stats", stats_json(w.stats))
          .set("probe", Value::string(w.probe));
      if (!w.citation.empty()) e.set("citation", Value::string(w.citation));
      ins.set("warp_gips", std::move(e));
    }
    Value pred = Value::array();
    for (const auto& p : m.predication)
      pred.push(Value::object()
                    .set("active_lanes", Value::integer(p.active_lanes))
                    .set("warp_gips", Value::number(p.warp_gips))
                    .set("thread_gips", Value::number(p.thread_gips)));
    ins.set("predication", std::move(pred));
    root.set("instructions", std::move(ins));
  }
  if (!m.global_walls.empty() || !m.shared_walls.empty()) {
    Value global = Value::array(), shared = Value::array();
    for (const auto& w : m.global_walls) global.push(wall_json(w, false));
    for (const auto& w : m.shared_walls) shared.push(wall_json(w, true));
    root.set("walls", Value::object().set("global", std::move(global)).set("shared", std::move(shared)));
  }
  if (!m.scaling.empty()) {
    Value scaling = Value::array();
    for (const auto& p : m.scaling) {
      Value e = Value::object().set("units", Value::integer(p.units));
      for (const auto& [k, v] : p.ceilings) e.set(k, Value::number(v));
      scaling.push(std::move(e));
    }
    root.set("scaling", std::move(scaling));
  }
  return root;
}

std::string export_json(const Machine& machine) { return machine_to_json(machine).dump(2) + "\n"; }

}  // namespace roofprobe
