// Machine file: the document tree it is written from (YAML here, JSON by export). Reading and
// validating it: machine_reader.cpp.
#include "driver/model/machine.hpp"

#include "driver/model/atomic_file.hpp"

namespace roofprobe {

const std::map<std::string, std::string>& machine_units() {
  static const std::map<std::string, std::string> units = {
      {"bandwidth", "GB/s (1e9 bytes/s)"},
      {"transactions", "GTXN/s (1e9 32-byte transactions/s)"},
      {"compute", "GFLOP/s (1e9 FLOP/s)"},
      {"instructions", "GIPS (1e9 warp instructions/s)"},
      {"sizes", "bytes"},
      {"clock", "MHz"},
  };
  return units;
}

namespace {

std::string per_unit_key(const DeviceInfo& d) {
  return d.kind == "gpu" ? "bytes_per_clk_per_sm" : "bytes_per_clk_per_core";
}

using doc::Value;

Value text_map(const std::map<std::string, std::string>& map) {
  Value out = Value::object();
  for (const auto& [k, v] : map) out.set(k, Value::text(v));
  return out;
}

Value stats_value(const Stats& s) {
  return Value::object()
      .set("best", Value::number(s.best))
      .set("median", Value::number(s.median))
      .set("spread", Value::number(s.spread))
      .set("samples", Value::integer(s.samples))
      .flow();
}

Value pair_value(double lo, double hi) { return Value::array().push(Value::number(lo)).push(Value::number(hi)).flow(); }

Value device_value(const DeviceInfo& d) {
  Value caches = Value::array();
  for (const auto& c : d.caches)
    caches.push(Value::object()
                    .set("level", Value::string(c.name))
                    .set("bytes", Value::integer(static_cast<long long>(c.bytes)))
                    .set("instances", Value::integer(c.instances))
                    .flow());
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
                            .set("measured", Value::number(d.clock_measured_mhz))
                            .flow())
      .set("extra", text_map(d.extra).flow())
      .set("theoretical", std::move(theoretical));
}

// `rate_key`: gflops or gbs, the ceiling's own unit.
Value sustained_value(const SustainedFigure& f, const std::string& rate_key) {
  Value e = Value::object();
  e.set(rate_key, Value::number(f.rate));
  if (f.ci95.known()) e.set(rate_key + "_ci95", pair_value(f.ci95.lo, f.ci95.hi));
  e.set("settled", Value::boolean(f.settled));
  e.set("clock_mhz", Value::number(f.clock_mhz));
  if (f.power_w > 0) e.set("power_w", Value::number(f.power_w));
  const std::string pj_key = rate_key == "gflops" ? "pj_per_flop" : "pj_per_byte";
  if (f.pj_per_unit > 0) e.set(pj_key, Value::number(f.pj_per_unit));
  if (f.pj_ci95.known()) e.set(pj_key + "_ci95", pair_value(f.pj_ci95.lo, f.pj_ci95.hi));
  e.set("seconds", Value::number(f.seconds)).set("windows", Value::integer(f.windows));
  if (!f.throttled.empty()) e.set("throttled", Value::string(f.throttled));
  if (!f.limited_by.empty()) e.set("limited_by", Value::string(f.limited_by));
  return e;
}

Value memory_value(const MemoryLevel& l, const std::string& per_unit) {
  Value by_series = Value::object().flow();
  for (const auto& [k, v] : l.by_series) by_series.set(k, Value::number(v));
  Value e = Value::object();
  e.set("level", Value::string(l.level))
      .set("source", Value::string(l.source))
      .set("gbs", Value::number(l.gbs))
      .set("transaction_bytes", Value::integer(transaction_bytes(l)))
      .set("gtxn_s", Value::number(l.gtxn_s))
      .set(per_unit, Value::number(l.bytes_per_clk_per_unit))
      .set("working_set_bytes", pair_value(l.working_set_lo, l.working_set_hi));
  if (l.gbs_ci95.known()) e.set("gbs_ci95", pair_value(l.gbs_ci95.lo, l.gbs_ci95.hi));
  if (l.capacity_bytes > 0) e.set("capacity_bytes", Value::number(l.capacity_bytes));
  if (l.capacity_ci95.known()) e.set("capacity_ci95", pair_value(l.capacity_ci95.lo, l.capacity_ci95.hi));
  if (!l.capacity_note.empty()) e.set("capacity_note", Value::string(l.capacity_note));
  if (l.noisy) e.set("noisy", Value::boolean(true));
  e.set("stats", stats_value(l.stats)).set("probe", Value::string(l.probe)).set("params", text_map(l.params).flow());
  if (!l.headline_series.empty()) e.set("headline", Value::string(l.headline_series));
  e.set("by_series", std::move(by_series));
  if (!l.citation.empty()) e.set("citation", Value::string(l.citation));
  if (l.sustained) e.set("sustained", sustained_value(*l.sustained, "gbs"));
  return e;
}

Value compute_value(const ComputeCeiling& c) {
  Value e = Value::object();
  e.set("name", Value::string(c.name)).set("source", Value::string(c.source)).set("gflops", Value::number(c.gflops));
  if (c.gflops_ci95.known()) e.set("gflops_ci95", pair_value(c.gflops_ci95.lo, c.gflops_ci95.hi));
  e.set("theoretical_gflops", Value::number(c.theoretical_gflops))
      .set("fraction_of_theoretical", Value::number(c.fraction_of_theoretical))
      .set("clock_mhz", Value::number(c.clock_mhz));
  if (c.noisy) e.set("noisy", Value::boolean(true));
  if (!c.throttled.empty()) e.set("throttled", Value::string(c.throttled));
  if (!c.limited_by.empty()) e.set("limited_by", Value::string(c.limited_by));
  if (c.flops_per_instruction > 0) {
    e.set("instructions_gips", Value::number(c.instructions_gips));
    e.set("flops_per_instruction", Value::number(c.flops_per_instruction));
  }
  if (!c.instruction.empty()) e.set("instruction", Value::string(c.instruction));
  if (!c.by_instruction.empty()) {
    Value list = Value::array();
    for (const InstructionFigure& f : c.by_instruction) {
      Value item = Value::object().flow();
      item.set("instruction", Value::string(f.instruction)).set("gflops", Value::number(f.gflops));
      if (f.flops_per_instruction > 0)
        item.set("instructions_gips", Value::number(f.instructions_gips))
            .set("flops_per_instruction", Value::number(f.flops_per_instruction));
      item.set("stats", stats_value(f.stats)).set("params", text_map(f.params).flow());
      list.push(std::move(item));
    }
    e.set("by_instruction", std::move(list));
  }
  e.set("stats", stats_value(c.stats)).set("probe", Value::string(c.probe)).set("params", text_map(c.params).flow());
  if (!c.citation.empty()) e.set("citation", Value::string(c.citation));
  if (c.sustained) e.set("sustained", sustained_value(*c.sustained, "gflops"));
  return e;
}

Value wall_value(const Wall& w, bool shared) {
  Value out = Value::object().flow();
  out.set("pattern", Value::string(w.pattern));
  if (shared)
    out.set("conflict_degree", Value::integer(w.conflict_degree));
  else
    out.set("word_bytes", Value::integer(w.word_bytes));
  out.set("instruction_intensity", Value::number(w.instruction_intensity));
  out.set("measured", Value::number(w.measured_intensity));
  out.set("gtxn_s", Value::number(w.gtxn_s));
  if (w.warp_gips > 0) out.set("warp_gips", Value::number(w.warp_gips));
  return out;
}

// The GPU instruction-roofline sections, scaling and clocks: present only when measured (or given
// in a reference file).
void add_optional_sections(Value& root, const Machine& m) {
  if (m.warp_gips || !m.predication.empty()) {
    Value ins = Value::object();
    if (m.warp_gips) {
      const InstructionCeiling& w = *m.warp_gips;
      Value e = Value::object();
      e.set("measured", Value::number(w.measured_gips))
          .set("theoretical", Value::number(w.theoretical_gips))
          .set("clock_mhz", Value::number(w.clock_mhz))
          .set("source", Value::string(w.source))
          .set("stats", stats_value(w.stats))
          .set("probe", Value::string(w.probe));
      if (!w.citation.empty()) e.set("citation", Value::string(w.citation));
      ins.set("warp_gips", std::move(e));
    }
    Value pred = Value::array();
    for (const auto& p : m.predication)
      pred.push(Value::object()
                    .set("active_lanes", Value::integer(p.active_lanes))
                    .set("warp_gips", Value::number(p.warp_gips))
                    .set("thread_gips", Value::number(p.thread_gips))
                    .flow());
    ins.set("predication", std::move(pred));
    root.set("instructions", std::move(ins));
  }
  if (!m.global_walls.empty() || !m.shared_walls.empty()) {
    Value global = Value::array(), shared = Value::array();
    for (const auto& w : m.global_walls) global.push(wall_value(w, false));
    for (const auto& w : m.shared_walls) shared.push(wall_value(w, true));
    root.set("walls", Value::object().set("global", std::move(global)).set("shared", std::move(shared)));
  }
  if (!m.scaling.empty()) {
    Value scaling = Value::array();
    for (const auto& p : m.scaling) {
      Value e = Value::object().set("units", Value::integer(p.units)).flow();
      for (const auto& [k, v] : p.ceilings) e.set(k, Value::number(v));
      scaling.push(std::move(e));
    }
    root.set("scaling", std::move(scaling));
  }
  if (!m.clocks.empty()) {
    Value clocks = Value::array();
    for (const auto& c : m.clocks)
      clocks.push(Value::object()
                      .set("load", Value::string(c.load))
                      .set("median_mhz", Value::number(c.median_mhz))
                      .set("min_mhz", Value::number(c.min_mhz))
                      .set("max_mhz", Value::number(c.max_mhz))
                      .set("samples", Value::integer(c.samples))
                      .set("probe", Value::string(c.probe))
                      .flow());
    root.set("clocks", std::move(clocks));
  }
  if (m.energy) {
    const EnergySection& e = *m.energy;
    Value ceilings = Value::array();
    for (const EnergyFigure& f : e.ceilings) {
      Value v = Value::object().set("name", Value::string(f.name)).set("power_w", Value::number(f.power_w));
      if (f.pj_per_flop > 0) v.set("pj_per_flop", Value::number(f.pj_per_flop));
      if (f.pj_per_byte > 0) v.set("pj_per_byte", Value::number(f.pj_per_byte));
      v.set("seconds", Value::number(f.seconds)).set("samples", Value::integer(f.samples));
      ceilings.push(v.flow());
    }
    root.set("energy", Value::object()
                           .set("schema", Value::string(e.schema))
                           .set("counter", Value::string(e.counter))
                           .set("update_seconds", Value::number(e.update_seconds))
                           .set("idle_power_w", Value::number(e.idle_power_w))
                           .set("min_point_seconds", Value::number(e.min_point_seconds))
                           .set("ceilings", std::move(ceilings)));
  }
  if (m.energy_model) {
    const EnergyModelSection& e = *m.energy_model;
    auto coefficients = [](const std::vector<EnergyCoefficient>& list) {
      Value out = Value::array();
      for (const EnergyCoefficient& c : list)
        out.push(Value::object()
                     .set("name", Value::string(c.name))
                     .set("value", Value::number(c.value))
                     .set("ci95", pair_value(c.ci95_lo, c.ci95_hi))
                     .set("points", Value::integer(c.points))
                     .flow());
      return out;
    };
    Value balance = Value::array();
    for (const EnergyBalance& b : e.balance)
      balance.push(Value::object()
                       .set("flops", Value::string(b.flops))
                       .set("level", Value::string(b.level))
                       .set("time_flop_per_byte", Value::number(b.time_flop_per_byte))
                       .set("energy_flop_per_byte", Value::number(b.energy_flop_per_byte))
                       .set("energy_with_constant_power_flop_per_byte",
                            Value::number(b.energy_with_constant_power_flop_per_byte))
                       .set("gap", Value::number(b.gap))
                       .flow());
    Value checks = Value::array();
    for (const EnergyCheck& c : e.checks)
      checks.push(Value::object()
                      .set("check", Value::string(c.check))
                      .set("holds", Value::boolean(c.holds))
                      .set("detail", Value::string(c.detail))
                      .flow());
    Value section =
        Value::object()
            .set("schema", Value::string(e.schema))
            .set("model", Value::string("E = sum_type W_type eps_type + sum_level Q_level eps_level + pi0 T"))
            .set("fit", Value::string(e.fit))
            .set("points", Value::integer(e.points))
            .set("launches", Value::integer(e.launches))
            .set("constant_power_w", Value::number(e.constant_power_w))
            .set("constant_power_ci95", pair_value(e.constant_power_ci95_lo, e.constant_power_ci95_hi))
            .set("pj_per_flop", coefficients(e.pj_per_flop))
            .set("pj_per_byte", coefficients(e.pj_per_byte))
            .set("residuals", Value::object()
                                  .set("median_abs", Value::number(e.residual_median_abs))
                                  .set("worst", Value::number(e.residual_worst))
                                  .set("worst_launch", Value::string(e.worst_launch))
                                  .set("within_5pct", Value::integer(e.within_5pct))
                                  .set("of", Value::integer(e.launches)))
            .set("reproduces_within_5pct", Value::boolean(e.reproduces_within_5pct()))
            .set("balance", std::move(balance))
            .set("checks", std::move(checks));
    if (!e.left_out.empty()) section.set("left_out", Value::string(e.left_out));
    root.set("energy_model", std::move(section));
  }
}

}  // namespace

doc::Value machine_document(const Machine& m) {
  Value root = Value::object();
  root.set("schema", Value::string(m.schema));
  root.set("complete", Value::boolean(m.complete));
  Value missing = Value::array();
  for (const auto& s : m.missing) missing.push(Value::string(s));
  root.set("missing", std::move(missing));
  root.set("provenance", text_map(m.provenance));
  root.set("device", device_value(m.device));
  root.set("units", text_map(machine_units()));
  const std::string per_unit = per_unit_key(m.device);
  Value memory = Value::array();
  for (const auto& l : m.memory) memory.push(memory_value(l, per_unit));
  root.set("memory", std::move(memory));
  Value compute = Value::array();
  for (const auto& c : m.compute) compute.push(compute_value(c));
  root.set("compute", std::move(compute));
  add_optional_sections(root, m);
  if (m.power_caps) {
    Value caps = Value::array();
    for (const PowerCapResult& cap : m.power_caps->caps) {
      Value ceilings = Value::array();
      for (const PowerCapCeiling& c : cap.ceilings) {
        Value v = Value::object()
                      .set("name", Value::string(c.name))
                      .set("kind", Value::string(c.kind))
                      .set("rate", Value::number(c.rate));
        if (c.ci95.known()) v.set("ci95", pair_value(c.ci95.lo, c.ci95.hi));
        v.set("spread", Value::number(c.spread)).set("clock_mhz", Value::number(c.clock_mhz));
        if (!c.limited_by.empty()) v.set("limited_by", Value::string(c.limited_by));
        v.set("samples", Value::integer(c.samples));
        ceilings.push(v.flow());
      }
      caps.push(Value::object().set("cap_w", Value::number(cap.cap_w)).set("ceilings", std::move(ceilings)));
    }
    root.set("power_caps", Value::object()
                               .set("schema", Value::string(m.power_caps->schema))
                               .set("restored_w", Value::number(m.power_caps->restored_w))
                               .set("caps", std::move(caps)));
  }
  return root;
}

std::string machine_to_yaml(const Machine& m) { return doc::to_yaml(machine_document(m)); }

void write_machine_file(const Machine& m, const std::string& path) { write_file_atomically(path, machine_to_yaml(m)); }

}  // namespace roofprobe
