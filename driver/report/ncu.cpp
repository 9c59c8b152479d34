// points --ncu-csv: an Nsight Compute export (ncu --csv --page raw) -> kernel points: per kernel,
// its FLOPs, warp instructions and bytes at each level, over all its launches.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

#include "driver/model/errors.hpp"
#include "driver/model/csv_text.hpp"
#include "driver/report/ncu_tensor.hpp"
#include "driver/report/points.hpp"

namespace roofprobe {

using namespace csv_text;  // trim, lower, lines_of, strict_number, number_text

namespace {

// Where the bracket that closes at `close` (a ')' or '>') opens, scanning back; npos if nowhere.
std::size_t opening_bracket(const std::string& s, std::size_t close) {
  const char shut = s[close], open = shut == ')' ? '(' : '<';
  int depth = 0;
  for (std::size_t i = close + 1; i-- > 0;) {
    if (s[i] == shut) ++depth;
    if (s[i] == open && --depth == 0) return i;
  }
  return std::string::npos;
}

}  // namespace

std::string kernel_base_name(const std::string& full) {
  std::string name = trim(full);
  // The argument list, then the template arguments: "ns::k<float, 2>(float const*, int)" -> "ns::k".
  for (char shut : {')', '>'}) {
    if (name.empty() || name.back() != shut) continue;
    const std::size_t open = opening_bracket(name, name.size() - 1);
    if (open == std::string::npos || open == 0) return trim(full);
    name = trim(name.substr(0, open));
  }
  // The last component of the qualified name, outside brackets ("(anonymous namespace)", "<...>"),
  // without the return type before it: "void at::native::(anonymous namespace)::k" -> "k".
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    if (c == '(' || c == '<') ++depth;
    if ((c == ')' || c == '>') && depth > 0) --depth;
    if (depth != 0) continue;
    if (c == ' ') start = i + 1;
    if (c == ':' && i + 1 < name.size() && name[i + 1] == ':') start = i + 2;
  }
  name = trim(name.substr(start));
  return name.empty() ? trim(full) : name;
}

namespace {

// A metric value as ncu prints it: "1,234,567.5", "n/a", "". Thousands separators dropped. A
// number written in another locale ("27.595.520", "1.234,5", "0,5") is an error: dropping the
// separators would read it 1000x off, and skipping it would lose the counter without a word. So
// is any other text: only "n/a" and an empty cell say that a counter was not collected.
std::optional<double> ncu_number(const std::string& text) {
  const std::string raw = trim(text);
  if (raw.empty() || lower(raw) == "n/a") return std::nullopt;
  static const std::regex c_locale(R"([-+]?([0-9]{1,3}(,[0-9]{3})+|[0-9]+)(\.[0-9]*)?([eE][-+]?[0-9]+)?)");
  static const std::regex numberish(R"([-+]?[0-9][0-9.,' \xC2\xA0]*)");
  if (!std::regex_match(raw, c_locale)) {
    if (raw.find(';') != std::string::npos)
      throw InputError("'" + raw +
                       "' holds one value per instance: export without --print-metric-instances, which "
                       "gives the metric's total");
    if (std::regex_match(raw, numberish))
      throw InputError("value '" + raw +
                       "' is written in a locale with other separators than '1,234.5'; "
                       "export again with LC_ALL=C (LC_ALL=C ncu --csv ... or LC_ALL=C ncu --import ... --csv)");
    // "inf", "nan" and the like: read as the C library reads them (and refused by the caller).
    // Anything else is no number, and not a counter ncu left out (that is "n/a" or empty).
    if (std::optional<double> v = strict_number(raw)) return v;
    throw InputError("'" + raw + "' is not a number (a counter that was not collected is 'n/a' or empty)");
  }
  std::string t;
  for (char c : raw)
    if (c != ',') t += c;
  return strict_number(t);
}

std::optional<double> seconds_per(const std::string& unit) {
  static const std::map<std::string, double> table = {{"nsecond", 1e-9}, {"usecond", 1e-6}, {"msecond", 1e-3},
                                                      {"second", 1.0},   {"ns", 1e-9},      {"us", 1e-6},
                                                      {"ms", 1e-3},      {"s", 1.0}};
  auto it = table.find(unit);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

// Multiplier from a unit ncu printed to the base unit (count, second, per second). ncu scales
// units with decimal prefixes ("Ksector", "Minst", "usecond", "cycle/nsecond", "Ghz"). A unit
// that is none of ncu's gives nullopt: reading it as a plain count could put a rate 1e3-1e9 off.
std::optional<double> unit_scale(const std::string& raw) {
  const std::string unit = trim(raw);
  if (unit.empty() || unit == "%") return 1.0;
  if (auto s = seconds_per(unit)) return *s;
  static const std::map<std::string, double> hz = {{"hz", 1}, {"khz", 1e3}, {"mhz", 1e6}, {"ghz", 1e9}};
  if (auto it = hz.find(lower(unit)); it != hz.end()) return it->second;
  // Counted things ncu names, singular as it prints them, with an optional K/M/G/T prefix.
  static const std::set<std::string> counts = {
      "byte",      "sector",      "request", "inst",        "cycle",    "warp",    "thread", "block",
      "wavefront", "transaction", "bit",     "instruction", "register", "context", "count",  "op"};
  auto count_scale = [&](const std::string& u) -> std::optional<double> {
    if (counts.count(u) != 0) return 1.0;
    if (u.size() > 1 && std::string("KMGT").find(u[0]) != std::string::npos && counts.count(u.substr(1)) != 0) {
      const double scales[] = {1e3, 1e6, 1e9, 1e12};
      return scales[std::string("KMGT").find(u[0])];
    }
    return std::nullopt;
  };
  const std::size_t slash = unit.find('/');
  if (slash != std::string::npos) {
    const std::optional<double> num = count_scale(unit.substr(0, slash));
    // Per second ("byte/second", "cycle/nsecond"), or per elapsed cycle ("inst/cycle": the
    // roofline sections' .per_cycle_elapsed rates).
    const std::string denominator = unit.substr(slash + 1);
    const std::optional<double> per = denominator == "cycle" ? std::optional<double>(1.0) : seconds_per(denominator);
    if (!num || !per) return std::nullopt;
    return *num / *per;
  }
  return count_scale(unit);
}

bool is_read_metric(const std::string& name);  // after the tables of what is read

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The multiplier to base units of a column that is read, after checking that its unit fits what
// the name says it is: a duration, a rate per second, a rate per cycle, or a count. A rate unit
// on a count (".sum" as "byte/second") would put the point a duration off.
double column_scale(const std::string& name, const std::string& raw_unit) {
  const std::string unit = trim(raw_unit);
  if (name == "CC") return 1.0;
  const std::optional<double> scale = unit_scale(unit);
  const std::string where = "column '" + name + "' has unit '" + unit + "'";
  if (!scale) throw InputError(where + ", which is not one of Nsight Compute's (a count, a time or a rate)");
  const bool per_time = (unit.find('/') != std::string::npos && !ends_with(unit, "/cycle")) ||
                        lower(unit).find("hz") != std::string::npos;
  if (ends_with(name, ".per_second")) {
    // ncu prints the rate of a count without a unit of its own (the tensor-path ops) with no
    // unit at all: '' on a .per_second column is ops per second.
    if (!per_time && !unit.empty()) throw InputError(where + ", not a rate per second");
  } else if (ends_with(name, ".per_cycle_elapsed")) {
    if (!unit.empty() && !ends_with(unit, "/cycle")) throw InputError(where + ", not a rate per cycle");
  } else if (name == "gpu__time_duration.sum") {
    if (!seconds_per(unit)) throw InputError(where + ", not a time");
  } else if (unit.find('/') != std::string::npos || per_time || seconds_per(unit) || unit == "%") {
    throw InputError(where + ", a rate or a time, but a ." + name.substr(name.rfind('.') + 1) +
                     " column counts (export without --print-units or other unit options)");
  }
  return *scale;
}

// A value read from row `line`, column `name`, in base units: a finite, non-negative count.
std::optional<double> counter_value(const std::string& text, double scale, const std::string& name, std::size_t line) {
  const std::string where = "line " + std::to_string(line) + ", column '" + name + "': ";
  std::optional<double> v;
  try {
    v = ncu_number(text);
  } catch (const InputError& e) {
    throw InputError(where + e.what());
  }
  if (!v) return std::nullopt;
  if (!std::isfinite(*v)) throw InputError(where + "'" + trim(text) + "' is not a finite number");
  if (*v < 0) throw InputError(where + "negative value " + trim(text) + " (every counter read counts something)");
  return *v * scale;
}

// A CC column without a value: tensor FLOPs per instruction depend on it, and an export without
// the column gets V100's (docs/NCU.md), which must not stand in for a cell that lost its value.
[[noreturn]] void refuse_empty_cc(std::size_t line) {
  throw InputError("line " + std::to_string(line) +
                   ", column 'CC': no compute capability (ncu writes the device's, such as 9.0; the tensor "
                   "FLOPs per instruction depend on it)");
}

using Counters = std::map<std::string, double>;  // metric name -> value in base units

struct Launch {
  std::string kernel;
  Counters values;
};

// The CSV records from the header on, each with its line in the file, and where the header and
// its "Kernel Name" column are.
struct NcuTable {
  std::vector<std::vector<std::string>> records;
  std::vector<std::size_t> lines;
  std::size_t header = 0;
  std::size_t kernel_col = 0;
};

// One row per launch with a metric per column; the row under the header holds the units. Only
// the columns read are looked at: the others (Host Name, launch__*, device__*, ...) may hold
// anything in any unit.
std::vector<Launch> parse_raw_layout(const NcuTable& table) {
  const std::vector<std::string>& names = table.records[table.header];
  std::map<std::string, std::size_t> read;  // metric -> its column
  for (std::size_t c = 0; c < names.size(); ++c) {
    const std::string name = trim(names[c]);
    if (c == table.kernel_col || !is_read_metric(name)) continue;
    auto [it, added] = read.emplace(name, c);
    if (!added)
      throw InputError("column '" + name + "' appears twice in the header (columns " + std::to_string(it->second + 1) +
                       " and " + std::to_string(c + 1) + "): which one holds the counter cannot be told");
  }
  std::map<std::string, double> scale;
  bool have_units = false;
  std::vector<Launch> out;
  for (std::size_t r = table.header + 1; r < table.records.size(); ++r) {
    const std::vector<std::string>& row = table.records[r];
    const std::size_t line = table.lines[r];
    if (trim(row[table.kernel_col]).empty()) {  // the units row, right under the header
      if (have_units || !out.empty())
        throw InputError("line " + std::to_string(line) + ": a row without a kernel name under the launches");
      for (const auto& [name, c] : read) scale[name] = column_scale(name, row[c]);
      have_units = true;
      continue;
    }
    if (!have_units)
      throw InputError(
          "no units row under the header (ncu --csv --page raw prints one: without it 'usecond' and "
          "'Ksector' values would be read as seconds and sectors)");
    Launch launch;
    launch.kernel = trim(row[table.kernel_col]);
    for (const auto& [name, c] : read)
      if (auto v = counter_value(row[c], scale[name], name, line)) launch.values[name] = *v;
    if (read.count("CC") != 0 && launch.values.count("CC") == 0) refuse_empty_cc(line);
    out.push_back(std::move(launch));
  }
  return out;
}

// The column of a header that holds `name`, if any.
std::optional<std::size_t> header_column(const std::vector<std::string>& names, const char* name) {
  for (std::size_t c = 0; c < names.size(); ++c)
    if (trim(names[c]) == name) return c;
  return std::nullopt;
}

// A launch's CC cell: the compute capability its tensor FLOPs depend on, never empty.
double compute_capability(const std::string& cell, std::size_t line) {
  if (auto cc = counter_value(cell, 1.0, "CC", line)) return *cc;
  refuse_empty_cc(line);
}

// One row per (launch, metric): "ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value".
// With --metrics it holds the counters by name; with sections only (--set roofline) it holds
// their display values (SOL percentages, Duration) and no counter: refused.
std::vector<Launch> parse_details_layout(const NcuTable& table) {
  const std::vector<std::string>& names = table.records[table.header];
  const auto column = [&](const char* name) { return header_column(names, name); };
  const auto id_col = column("ID");
  const std::size_t metric_col = *column("Metric Name"), value_col = *column("Metric Value");
  const auto unit_col = column("Metric Unit");
  const auto cc_col = column("CC");  // the compute capability, which tensor FLOPs depend on
  std::vector<Launch> out;
  std::map<std::string, std::size_t> index;  // launch id (or kernel name) -> out
  bool any_counter = false;
  for (std::size_t r = table.header + 1; r < table.records.size(); ++r) {
    const std::vector<std::string>& row = table.records[r];
    const std::size_t line = table.lines[r];
    const std::string kernel = trim(row[table.kernel_col]);
    if (kernel.empty()) continue;
    const std::string id = id_col ? trim(row[*id_col]) : kernel;
    auto [it, added] = index.emplace(id + "\n" + kernel, out.size());
    if (added) out.push_back({kernel, {}});
    Counters& values = out[it->second].values;
    if (cc_col) values["CC"] = compute_capability(row[*cc_col], line);
    const std::string name = trim(row[metric_col]);
    if (!is_read_metric(name)) continue;
    any_counter = true;
    const double scale = column_scale(name, unit_col ? row[*unit_col] : std::string());
    if (auto v = counter_value(row[value_col], scale, name, line)) {
      // The same metric in two sections is the same counter; two values cannot be told apart.
      auto [it, added] = values.emplace(name, *v);
      if (!added && it->second != *v)
        throw InputError("line " + std::to_string(line) + ": metric '" + name + "' appears twice for launch " + id +
                         " with different values");
    }
  }
  if (!out.empty() && !any_counter)
    throw InputError(
        "a --page details export of sections holds no counters (only section values such as SOL percentages "
        "and Duration): export with --page raw (ncu --csv --page raw --set roofline, or --metrics from "
        "roofprobe points --ncu-metrics)");
  return out;
}

// The first of `names` the launch has.
std::optional<double> metric(const Counters& c, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (auto it = c.find(n); it != c.end()) return it->second;
  return std::nullopt;
}

std::optional<double> launch_seconds(const Counters& c) {
  if (auto t = metric(c, {"gpu__time_duration.sum"}); t && *t > 0) return *t;
  auto cycles = metric(c, {"sm__cycles_elapsed.avg"});
  auto rate = metric(c, {"sm__cycles_elapsed.avg.per_second"});
  if (cycles && rate && *cycles > 0 && *rate > 0) return *cycles / *rate;
  return std::nullopt;
}

struct Level {
  const char* name;  // nullptr: the DRAM level (named by the options)
  double bytes_per_transaction;
  std::vector<const char*> metrics;  // transaction counters (the first two come together)
  // Byte counters of the same traffic (NERSC's recipe: l1tex__t_bytes, lts__t_bytes,
  // dram__bytes), used when the transaction counters were not collected: either the total or
  // its two halves (read and write).
  const char* bytes_total;
  std::vector<const char*> bytes_halves;
};

const std::vector<Level>& levels() {
  static const std::vector<Level> table = {
      {"L1",
       32,
       {"l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"},
       "l1tex__t_bytes.sum",
       {"l1tex__t_bytes_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_bytes_pipe_lsu_mem_global_op_st.sum"}},
      {"shared",
       128,
       {"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"},
       nullptr,
       {}},
      {"L2",
       32,
       {"lts__t_sectors_op_read.sum", "lts__t_sectors_op_write.sum", "lts__t_sectors_op_atom.sum",
        "lts__t_sectors_op_red.sum"},
       "lts__t_bytes.sum",
       {}},
      {nullptr,
       32,
       {"dram__sectors_read.sum", "dram__sectors_write.sum"},
       "dram__bytes.sum",
       {"dram__bytes_read.sum", "dram__bytes_write.sum"}},
  };
  return table;
}

// The counters points are made of (by name, without a rate suffix), and the clocks and times
// that turn rates back into counts.
bool is_read_count(const std::string& name) {
  static const std::set<std::string> names = [] {
    std::set<std::string> n = {"gpu__time_duration.sum", "smsp__inst_executed.sum", "sm__inst_executed.sum",
                               "sm__inst_executed_pipe_tensor.sum", "smsp__inst_executed_pipe_tensor.sum"};
    for (const char* unit : {"sm", "smsp", "dram", "lts", "l1tex"})
      n.insert(std::string(unit) + "__cycles_elapsed.avg");
    for (const char* p : {"d", "f", "h"})
      for (const char* op : {"add", "mul", "fma"})
        for (const char* unit : {"smsp", "sm"})
          n.insert(std::string(unit) + "__sass_thread_inst_executed_op_" + p + op + "_pred_on.sum");
    for (const char* kind : {"hmma", "imma", "dmma", "gmma"})
      for (const char* unit : {"smsp", "sm"})
        n.insert(std::string(unit) + "__inst_executed_pipe_tensor_op_" + kind + ".sum");
    for (const Level& level : levels()) {
      n.insert(level.metrics.begin(), level.metrics.end());
      if (level.bytes_total) n.insert(level.bytes_total);
      n.insert(level.bytes_halves.begin(), level.bytes_halves.end());
    }
    return n;
  }();
  static const std::regex tensor_ops(R"(sm__ops_path_tensor_[a-z0-9_]+\.sum)");
  return names.count(name) != 0 || std::regex_match(name, tensor_ops);
}

bool is_read_metric(const std::string& name) {
  if (name == "CC" || is_read_count(name)) return true;
  for (const std::string suffix : {".per_second", ".per_cycle_elapsed"})
    if (ends_with(name, suffix) && is_read_count(name.substr(0, name.size() - suffix.size()))) return true;
  return false;
}

// Nsight Compute's roofline sections collect rates, not counts: `X.per_second` and
// `X.per_cycle_elapsed`. With the launch's duration (and its elapsed cycles) they are counts
// again; a count the launch has is never replaced.
Counters with_counts_from_rates(const Counters& c) {
  Counters out = c;
  std::optional<double> seconds;
  if (auto t = metric(c, {"gpu__time_duration.sum"}); t && *t > 0) seconds = *t;
  // The elapsed cycles of a unit ("sm", "smsp", "dram", ...): each counts in its own clock.
  const auto cycles_of = [&](const std::string& unit) -> std::optional<double> {
    const std::string name = unit + "__cycles_elapsed.avg";
    if (auto n = metric(c, {name.c_str()})) return n;
    const std::string rate = name + ".per_second";
    if (auto r = metric(c, {rate.c_str()}); r && seconds) return *r * *seconds;
    return std::nullopt;
  };
  const auto strip = [](const std::string& name, const std::string& suffix) -> std::optional<std::string> {
    if (name.size() > suffix.size() && ends_with(name, suffix)) return name.substr(0, name.size() - suffix.size());
    return std::nullopt;
  };
  for (const auto& [name, value] : c) {
    if (auto base = strip(name, ".per_second"); base && seconds && c.count(*base) == 0) out[*base] = value * *seconds;
    if (auto base = strip(name, ".per_cycle_elapsed"); base && c.count(*base) == 0) {
      std::optional<double> cycles = cycles_of(base->substr(0, base->find("__")));
      if (!cycles) cycles = cycles_of("sm");
      if (cycles) out[*base] = value * *cycles;
    }
  }
  return out;
}

struct KernelTotals {
  std::string kernel;
  double flops = 0, instructions = 0, seconds = 0;
  bool has_flops = false, has_instructions = false, has_time = true;
  // A total is whole only when every launch of the kernel has its counters: a counter n/a or
  // empty in one launch, or one of a precision's add/mul/fma not collected, would be read as 0
  // and put the point far below the kernel's rate. Such a kind of point is skipped with a note.
  int launches = 0;
  std::map<std::string, int> counter_launches;  // a counter (as a count) -> the launches that have it
  std::set<std::string> flop_gaps;              // a precision's counter missing where another of its three is there
  std::set<std::string> tensor_counted, tensor_uncounted;  // how its tensor FLOPs were counted (or not)
  std::vector<double> transactions = std::vector<double>(levels().size(), 0.0);
  std::vector<bool> has_level = std::vector<bool>(levels().size(), false);
};

void add_launch(KernelTotals& k, const Counters& counters, double tensor_flops) {
  const Counters c = with_counts_from_rates(counters);
  ++k.launches;
  for (const auto& [name, value] : c)
    if (is_read_count(name)) ++k.counter_launches[name];
  for (const char* p : {"d", "f", "h"}) {
    std::string present, absent_tail;  // the name the export uses (smsp__ or sm__), an op it lacks
    for (const char* op : {"add", "mul", "fma"}) {
      const std::string tail = std::string("sass_thread_inst_executed_op_") + p + op + "_pred_on.sum";
      const std::string smsp = "smsp__" + tail, sm = "sm__" + tail;
      if (auto v = metric(c, {smsp.c_str(), sm.c_str()})) {
        k.flops += (std::string(op) == "fma" ? 2 : 1) * *v;
        k.has_flops = true;
        present = c.count(smsp) ? smsp : sm;
      } else {
        absent_tail = tail;
      }
    }
    if (!present.empty() && !absent_tail.empty())
      k.flop_gaps.insert("'" + present.substr(0, present.find("__") + 2) + absent_tail +
                         "' is missing (n/a, empty or not collected) where '" + present + "' is there");
  }
  const TensorWork tensor = tensor_work(c, tensor_flops);
  if (!tensor.counted.empty()) {
    k.flops += tensor.flops;
    k.has_flops = true;
    k.tensor_counted.insert(tensor.counted.begin(), tensor.counted.end());
  }
  if (!tensor.uncounted.empty()) k.tensor_uncounted.insert(tensor.uncounted);
  if (auto v = metric(c, {"smsp__inst_executed.sum", "sm__inst_executed.sum"})) {
    k.instructions += *v;
    k.has_instructions = true;
  }
  // The first two counters of a group (loads and stores, reads and writes) come together: one
  // without the other would count the missing one as 0.
  const auto check_pair = [&](const std::vector<const char*>& names) {
    if (names.size() < 2) return;
    const bool first = metric(c, {names[0]}).has_value(), second = metric(c, {names[1]}).has_value();
    if (first != second)
      throw InputError(std::string("metric '") + names[first ? 1 : 0] + "' is missing while '" + names[first ? 0 : 1] +
                       "' is there: collect both or neither");
  };
  for (std::size_t l = 0; l < levels().size(); ++l) {
    const Level& level = levels()[l];
    check_pair(level.metrics);
    double sum = 0;
    bool found = false;
    for (const char* name : level.metrics)
      if (auto v = metric(c, {name})) sum += *v, found = true;
    // Counted bytes before bytes turned back from a rate (--set roofline has dram__bytes.sum
    // only as a rate, beside its counted halves).
    if (!found && level.bytes_total != nullptr) {
      if (auto v = metric(counters, {level.bytes_total})) sum = *v / level.bytes_per_transaction, found = true;
    }
    if (!found) {
      check_pair(level.bytes_halves);
      for (const char* name : level.bytes_halves)
        if (auto v = metric(c, {name})) sum += *v / level.bytes_per_transaction, found = true;
    }
    if (!found && level.bytes_total != nullptr) {
      if (auto v = metric(c, {level.bytes_total})) sum = *v / level.bytes_per_transaction, found = true;
    }
    if (found) {
      k.transactions[l] += sum;
      k.has_level[l] = true;
    }
  }
  if (auto t = launch_seconds(c)) {
    k.seconds += *t;
  } else {
    k.has_time = false;
  }
}

// A record whose quotes do not close was cut inside a field.
bool quotes_close(const std::string& line) { return std::count(line.begin(), line.end(), '"') % 2 == 0; }

// `--print-summary per-kernel`: a row per (kernel, launch shape, metric) with the number of
// launches ("Invocations") and the metric's Minimum, Maximum and Average over them. A group of
// launches is one launch here, its counts the Average times the Invocations. A rate
// (.per_second, .per_cycle_elapsed) is kept only where it was the same for every launch, to
// within kSummaryRateSpread (ncu prints a few significant digits, so launches at one rate can show
// a Minimum and Maximum a rounding digit apart): the rate times the group's whole duration is
// then its count, within that fraction, since sum(r_i t_i) differs from mean(r) sum(t_i) by at
// most max|r_i - mean(r)| sum(t_i). Otherwise the average of the launches' rates does not give
// their total, and the counter counts as not collected.
constexpr double kSummaryRateSpread = 0.01;

std::vector<Launch> parse_summary_layout(const NcuTable& table, std::map<std::string, int>& uneven_rates) {
  const std::vector<std::string>& names = table.records[table.header];
  const auto column = [&](const char* name) { return header_column(names, name); };
  const std::size_t metric_col = *column("Metric Name"), invocations_col = *column("Invocations");
  const std::size_t min_col = *column("Minimum"), max_col = *column("Maximum"), avg_col = *column("Average");
  const auto unit_col = column("Metric Unit");
  const auto cc_col = column("CC");
  std::vector<std::optional<std::size_t>> shape_cols = {column("Process ID"), column("Block Size"), column("Grid Size"),
                                                        column("Device")};
  std::vector<Launch> out;
  std::map<std::string, std::size_t> index;  // kernel and launch shape -> out
  bool any_counter = false;
  for (std::size_t r = table.header + 1; r < table.records.size(); ++r) {
    const std::vector<std::string>& row = table.records[r];
    const std::size_t line = table.lines[r];
    const std::string kernel = trim(row[table.kernel_col]);
    if (kernel.empty()) continue;
    std::string key = kernel;
    for (const auto& c : shape_cols)
      if (c) key += "\n" + trim(row[*c]);
    auto [it, added] = index.emplace(key, out.size());
    if (added) out.push_back({kernel, {}});
    Counters& values = out[it->second].values;
    if (cc_col) values["CC"] = compute_capability(row[*cc_col], line);
    const std::string name = trim(row[metric_col]);
    if (!is_read_metric(name) || name == "CC") continue;
    any_counter = true;
    const std::optional<double> invocations = counter_value(row[invocations_col], 1.0, "Invocations", line);
    if (!invocations || !(*invocations >= 1))
      throw InputError("line " + std::to_string(line) + ", column 'Invocations': no number of launches");
    const double scale = column_scale(name, unit_col ? row[*unit_col] : std::string());
    const std::optional<double> average = counter_value(row[avg_col], scale, name, line);
    if (!average) continue;
    const bool rate = ends_with(name, ".per_second") || ends_with(name, ".per_cycle_elapsed");
    if (rate) {
      const std::optional<double> lo = counter_value(row[min_col], scale, name, line);
      const std::optional<double> hi = counter_value(row[max_col], scale, name, line);
      if (!lo || !hi || *hi - *lo > kSummaryRateSpread * std::fabs(*average)) {
        ++uneven_rates[name];
        continue;
      }
    }
    const double value = rate ? *average : *average * *invocations;
    if (auto [at, fresh] = values.emplace(name, value); !fresh && at->second != value)
      throw InputError("line " + std::to_string(line) + ": metric '" + name + "' appears twice for kernel '" + kernel +
                       "' with different values");
  }
  if (!out.empty() && !any_counter)
    throw InputError(
        "a --print-summary export of sections holds no counters: export with --page raw (ncu --csv --page raw "
        "--metrics from roofprobe points --ncu-metrics)");
  return out;
}

// The column of a header record that names the kernels; nullopt when the record is no header.
std::optional<std::size_t> kernel_name_column(const std::vector<std::string>& fields, const std::string& line) {
  if (!quotes_close(line)) return std::nullopt;
  for (std::size_t c = 0; c < fields.size(); ++c)
    if (trim(fields[c]) == "Kernel Name") return c;
  return std::nullopt;
}

// The tables of an export, each from its header on. ncu's own messages ("==PROF== ...") and the
// program's output before a header are not CSV records. A file may hold several tables, each
// with its header (and, in the raw layout, its units row): exports appended to one file, one
// table per profiled process. Each is read with its own columns and units; the lines between a
// table's last record and the next header are the next run's program output.
std::vector<NcuTable> ncu_tables(const std::string& text, const std::string& source) {
  struct Record {
    std::size_t line_no;
    std::string text;
    bool quotes_close;
    std::vector<std::string> fields;
    std::optional<std::size_t> kernel_col;  // set on a header
  };
  std::vector<Record> records;
  std::size_t line_no = 0;
  for (const std::string& line : lines_of(text)) {
    ++line_no;
    if (trim(line).empty() || line.rfind("==", 0) == 0) continue;
    std::vector<std::string> fields = split_csv_record(line);
    const std::optional<std::size_t> kernel_col = kernel_name_column(fields, line);
    records.push_back({line_no, line, quotes_close(line), std::move(fields), kernel_col});
  }
  std::vector<NcuTable> tables;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (!records[i].kernel_col) continue;  // text before the first header
    NcuTable table;
    table.kernel_col = *records[i].kernel_col;
    const std::size_t width = records[i].fields.size();
    std::size_t end = i + 1;  // the next header, or the end
    while (end < records.size() && !records[end].kernel_col) ++end;
    const auto fits = [&](const Record& r) { return r.fields.size() == width && r.quotes_close; };
    std::size_t last = i;  // the table's last record: before the next header, text may follow it
    for (std::size_t j = i + 1; j < end; ++j)
      if (fits(records[j])) last = j;
    // Nothing follows the last table, and ncu quotes every field: a misfit there, or one that
    // starts with a quote, is a torn row.
    if (end == records.size()) last = end - 1;
    for (std::size_t j = last + 1; j < end; ++j)
      if (trim(records[j].text).rfind('"', 0) == 0) last = j;
    for (std::size_t j = i; j <= last; ++j) {
      Record& r = records[j];
      if (j > i && !fits(r))
        throw InputError(source + ":" + std::to_string(r.line_no) + ": torn row (" +
                         (r.quotes_close ? "" : "a quote that does not close, ") + std::to_string(r.fields.size()) +
                         " of the header's " + std::to_string(width) + " fields): was the export cut short?");
      table.records.push_back(std::move(r.fields));
      table.lines.push_back(r.line_no);
    }
    tables.push_back(std::move(table));
    i = end - 1;
  }
  if (tables.empty())
    throw InputError(source +
                     ": not an Nsight Compute CSV export (no \"Kernel Name\" column; "
                     "export with ncu --csv --page raw)");
  return tables;
}

// Every kernel's totals, from either of ncu's layouts (raw: a metric per column; details: a row
// per metric); an error names the file.
std::vector<KernelTotals> kernel_totals(const std::vector<NcuTable>& tables, const std::string& source,
                                        double tensor_flops, std::vector<std::string>& notes) {
  std::vector<KernelTotals> kernels;
  std::map<std::string, int> uneven_rates;  // summary rates left out: metric -> launch groups
  try {
    std::vector<Launch> launches;
    for (const NcuTable& table : tables) {
      const std::vector<std::string>& names = table.records[table.header];
      const auto has = [&](const char* column) { return header_column(names, column).has_value(); };
      const bool details = has("Metric Name") && has("Metric Value");
      const bool summary =
          has("Metric Name") && has("Invocations") && has("Minimum") && has("Maximum") && has("Average");
      std::vector<Launch> of_table = summary   ? parse_summary_layout(table, uneven_rates)
                                     : details ? parse_details_layout(table)
                                               : parse_raw_layout(table);
      if (of_table.empty())
        throw InputError("no kernel launches under the header" +
                         (tables.size() > 1 ? " at line " + std::to_string(table.lines[table.header]) : std::string()));
      launches.insert(launches.end(), std::make_move_iterator(of_table.begin()),
                      std::make_move_iterator(of_table.end()));
    }

    // Launches of one kernel are summed, in the order the kernels first appear.
    std::map<std::string, std::size_t> index;
    for (const Launch& launch : launches) {
      auto [it, added] = index.emplace(launch.kernel, kernels.size());
      if (added) {
        kernels.emplace_back();
        kernels.back().kernel = launch.kernel;
      }
      add_launch(kernels[it->second], launch.values, tensor_flops);
    }
  } catch (const InputError& e) {
    throw InputError(source + ": " + e.what());
  }
  char spread[32];
  std::snprintf(spread, sizeof spread, "%g%%", 100 * kSummaryRateSpread);
  for (const auto& [metric, groups] : uneven_rates)
    notes.push_back("'" + metric + "' is not read in " + std::to_string(groups) + " launch group" +
                    (groups == 1 ? "" : "s") + " of the summary: it differs between their launches (Minimum and " +
                    "Maximum more than " + spread +
                    " of the Average apart), and an average rate does not give their total; export with --page raw");
  return kernels;
}

// The name each kernel is shown by: its base name, numbered "#1", "#2", ... in the order of
// first launch where several kernels share it (instances of one template); ncu's whole name
// with full_names.
std::vector<std::string> display_names(const std::vector<KernelTotals>& kernels, bool full_names) {
  std::vector<std::string> out;
  if (full_names) {
    for (const KernelTotals& k : kernels) out.push_back(k.kernel);
    return out;
  }
  std::map<std::string, int> sharing, numbered;
  for (const KernelTotals& k : kernels) ++sharing[kernel_base_name(k.kernel)];
  for (const KernelTotals& k : kernels) {
    const std::string base = kernel_base_name(k.kernel);
    out.push_back(sharing[base] > 1 ? base + " #" + std::to_string(++numbered[base]) : base);
  }
  return out;
}

// One point per kind (flop, instruction) and level the kernel has work and traffic for; a
// kernel without a time is skipped with a note.
void add_kernel_points(const KernelTotals& k, const std::string& name, const std::string& dram_level,
                       NcuConversion* out) {
  if (!k.has_time || !(k.seconds > 0)) {
    out->notes.push_back("skipped kernel '" + name +
                         "': no time (needs gpu__time_duration.sum, or sm__cycles_elapsed.avg and "
                         "sm__cycles_elapsed.avg.per_second)");
    return;
  }
  // A counter some launches have and others lack (n/a or empty there): the kinds of point made
  // from it are skipped, the others stay.
  const auto partial = [&](const std::function<bool(const std::string&)>& of_kind) -> std::string {
    for (const auto& [counter, with] : k.counter_launches)
      if (with < k.launches && of_kind(counter))
        return "'" + counter + "' in " + std::to_string(with) + " of its " + std::to_string(k.launches) + " launches";
    return "";
  };
  const auto is_flop_counter = [](const std::string& n) {
    return n.find("sass_thread_inst_executed_op_") != n.npos || n.find("tensor") != n.npos;
  };
  const auto is_instruction_counter = [](const std::string& n) {
    return n == "smsp__inst_executed.sum" || n == "sm__inst_executed.sum";
  };
  const auto is_level_counter = [](const Level& level, const std::string& n) {
    const auto named = [&](const char* m) { return m != nullptr && n == m; };
    return std::any_of(level.metrics.begin(), level.metrics.end(), named) || named(level.bytes_total) ||
           std::any_of(level.bytes_halves.begin(), level.bytes_halves.end(), named);
  };
  std::vector<std::string> flop_gaps(k.flop_gaps.begin(), k.flop_gaps.end());
  if (const std::string gap = partial(is_flop_counter); !gap.empty()) flop_gaps.push_back(gap);
  const std::string instruction_gap = partial(is_instruction_counter);
  std::vector<std::string> level_gaps;
  for (const Level& level : levels())
    level_gaps.push_back(partial([&](const std::string& n) { return is_level_counter(level, n); }));
  const auto level_name = [&](std::size_t l) { return levels()[l].name ? levels()[l].name : dram_level; };
  for (const std::string& gap : flop_gaps) out->notes.push_back("skipped kernel '" + name + "' FLOP points: " + gap);
  if (!instruction_gap.empty())
    out->notes.push_back("skipped kernel '" + name + "' instruction points: " + instruction_gap);
  for (std::size_t l = 0; l < levels().size(); ++l)
    if (!level_gaps[l].empty())
      out->notes.push_back("skipped kernel '" + name + "' " + level_name(l) + " points: " + level_gaps[l]);
  for (const char* kind : {"flop", "instruction"}) {
    const bool flop = std::string(kind) == "flop";
    const double work = flop ? k.flops : k.instructions;
    if (!(work > 0)) continue;
    if (flop ? !flop_gaps.empty() : !instruction_gap.empty()) continue;
    // Tensor work without a FLOP figure: its scalar FLOPs alone would put the point far too low
    // (add_tensor_notes names the kernel).
    if (flop && !k.tensor_uncounted.empty()) continue;
    for (std::size_t l = 0; l < levels().size(); ++l) {
      const double txn = k.transactions[l];
      if (!(txn > 0) || !level_gaps[l].empty()) continue;
      KernelPoint p;
      p.kernel = name;
      p.level = level_name(l);
      p.kind = kind;
      p.intensity = flop ? work / (txn * levels()[l].bytes_per_transaction) : work / txn;
      p.performance = work / k.seconds / 1e9;
      if (!std::isfinite(p.intensity) || !std::isfinite(p.performance)) {
        out->notes.push_back("skipped kernel '" + name + "' " + kind + " point at " + p.level +
                             ": its counts overflow a double");
        continue;
      }
      out->points.push_back(std::move(p));
    }
  }
}

// How tensor FLOPs were counted, one note per way (tensor_work writes them), and each kernel
// whose tensor work had no figure (it gets no FLOP point).
void add_tensor_notes(const std::vector<KernelTotals>& kernels, const std::vector<std::string>& names,
                      NcuConversion* out) {
  std::set<std::string> ways;
  for (const KernelTotals& k : kernels) ways.insert(k.tensor_counted.begin(), k.tensor_counted.end());
  out->notes.insert(out->notes.end(), ways.begin(), ways.end());
  for (std::size_t i = 0; i < kernels.size(); ++i)
    for (const std::string& u : kernels[i].tensor_uncounted) {
      if (u.rfind("counted by both ", 0) == 0)
        out->notes.push_back("kernel '" + names[i] + "': tensor ops " + u +
                             ", which overlap without one holding the other: no FLOP point for it");
      else
        out->notes.push_back("kernel '" + names[i] + "': tensor instructions " + u +
                             " have more than one shape there (so more than one FLOPs-per-instruction figure): no "
                             "FLOP point for it; collect the sm__ops_path_tensor_src_* totals (roofprobe points "
                             "--ncu-metrics --arch sm_XX lists them) or set --tensor-flops-per-inst");
    }
}

// A note for each kind of metric no kernel had, and for the tensor FLOPs assumed.
void add_metric_notes(const std::vector<KernelTotals>& kernels, const std::vector<std::string>& names,
                      const NcuOptions& options, NcuConversion* out) {
  bool any_flops = false, any_instructions = false, any_tensor = false;
  std::vector<bool> any_level(levels().size(), false);
  for (const KernelTotals& k : kernels) {
    any_flops |= k.has_flops;
    any_instructions |= k.has_instructions;
    any_tensor |= !k.tensor_counted.empty() || !k.tensor_uncounted.empty();
    for (std::size_t l = 0; l < levels().size(); ++l) any_level[l] = any_level[l] || k.has_level[l];
  }
  if (!any_flops)
    out->notes.push_back(
        "no FLOP metrics (smsp__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum, "
        "sm__inst_executed_pipe_tensor.sum): no flop points");
  if (!any_instructions) out->notes.push_back("no smsp__inst_executed.sum: no instruction points");
  if (any_tensor) add_tensor_notes(kernels, names, out);
  for (std::size_t l = 0; l < levels().size(); ++l)
    if (!any_level[l])
      out->notes.push_back(std::string("no ") + (levels()[l].name ? levels()[l].name : options.dram_level.c_str()) +
                           " metrics (" + levels()[l].metrics.front() +
                           (levels()[l].bytes_total ? std::string(" or ") + levels()[l].bytes_total : std::string()) +
                           ", ...): no " + (levels()[l].name ? levels()[l].name : options.dram_level.c_str()) +
                           " points");
}

}  // namespace

NcuConversion convert_ncu_csv(const std::string& text, const std::string& source, const NcuOptions& options) {
  if (!(options.tensor_flops_per_instruction >= 0) || !std::isfinite(options.tensor_flops_per_instruction))
    throw InputError("tensor FLOPs per instruction must be a non-negative number");
  if (trim(options.dram_level).empty()) throw InputError("the DRAM level needs a name");
  // The name is a field of the points file's lines: a line break or another control character
  // would end or corrupt the line that plot and export then read.
  if (std::any_of(options.dram_level.begin(), options.dram_level.end(),
                  [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; }))
    throw InputError("--dram-level: the level name holds a control character");

  const std::vector<NcuTable> tables = ncu_tables(text, source);
  NcuConversion out;
  const std::vector<KernelTotals> kernels =
      kernel_totals(tables, source, options.tensor_flops_per_instruction, out.notes);
  const std::vector<std::string> names = display_names(kernels, options.full_names);
  for (std::size_t i = 0; i < kernels.size(); ++i) add_kernel_points(kernels[i], names[i], options.dram_level, &out);
  add_metric_notes(kernels, names, options, &out);
  if (tables.size() > 1) {
    std::string at;
    for (const NcuTable& t : tables) at += (at.empty() ? "" : ", ") + std::to_string(t.lines[t.header]);
    out.notes.push_back(source + " holds " + std::to_string(tables.size()) + " tables (headers at lines " + at +
                        "), read as one: the launches of a kernel are summed across them");
  }
  if (out.points.empty())
    throw InputError(
        source + ": no kernel points could be computed (" +
        (out.notes.empty() ? std::string("no FLOPs or instructions with transactions") : out.notes.front()) + ")");
  return out;
}

}  // namespace roofprobe
