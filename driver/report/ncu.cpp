// points --ncu-csv: an Nsight Compute export (ncu --csv --page raw) -> kernel points: per kernel,
// its FLOPs, warp instructions and bytes at each level, over all its launches.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
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

// A metric value as ncu prints it: "1,234,567.5", "n/a", "". Thousands separators dropped. A
// number written in another locale ("27.595.520", "1.234,5", "0,5") is an error: dropping the
// separators would read it 1000x off, and skipping it would lose the counter without a word.
std::optional<double> ncu_number(const std::string& text) {
  const std::string raw = trim(text);
  if (raw.empty() || lower(raw) == "n/a") return std::nullopt;
  static const std::regex c_locale(R"([-+]?([0-9]{1,3}(,[0-9]{3})+|[0-9]+)(\.[0-9]*)?([eE][-+]?[0-9]+)?)");
  static const std::regex numberish(R"([-+]?[0-9][0-9.,' \xC2\xA0]*)");
  if (!std::regex_match(raw, c_locale)) {
    if (std::regex_match(raw, numberish))
      throw InputError("value '" + raw +
                       "' is written in a locale with other separators than '1,234.5'; "
                       "export again with LC_ALL=C (LC_ALL=C ncu --csv ... or LC_ALL=C ncu --import ... --csv)");
    return strict_number(raw);  // "inf", "nan" and the like: read as the C library reads them
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
  static const std::set<std::string> counts = {"byte", "sector",      "request",  "inst",      "cycle",
                                               "warp", "thread",      "block",    "wavefront", "transaction",
                                               "bit",  "instruction", "register", "context",   "count"};
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

// A metric value in base units, or an error naming the metric when its unit is unknown or the
// value is negative (every counter the points are made of counts something).
double scaled_value(double value, const std::string& unit, const std::string& metric_name) {
  const std::optional<double> scale = unit_scale(unit);
  if (!scale)
    throw InputError("metric '" + trim(metric_name) + "' has unit '" + trim(unit) +
                     "', which is not one of Nsight Compute's (a count, a time or a rate)");
  if (value < 0) throw InputError("metric '" + trim(metric_name) + "' is negative (" + number_text(value) + ")");
  return value * *scale;
}

using Counters = std::map<std::string, double>;  // metric name -> value in base units

struct Launch {
  std::string kernel;
  Counters values;
};

// One row per launch with a metric per column; the row under the header holds the units.
std::vector<Launch> parse_raw_layout(const std::vector<std::vector<std::string>>& records, std::size_t header,
                                     std::size_t kernel_col) {
  const std::vector<std::string>& names = records[header];
  std::vector<std::string> units(names.size());
  bool have_units = false;
  std::vector<Launch> out;
  for (std::size_t r = header + 1; r < records.size(); ++r) {
    const std::vector<std::string>& row = records[r];
    if (row.size() <= kernel_col) continue;
    if (trim(row[kernel_col]).empty()) {  // the units row
      if (out.empty())
        for (std::size_t c = 0; c < row.size() && c < units.size(); ++c) units[c] = row[c];
      have_units = true;
      continue;
    }
    if (!have_units)
      throw InputError(
          "no units row under the header (ncu --csv --page raw prints one: without it 'usecond' and "
          "'Ksector' values would be read as seconds and sectors)");
    Launch launch;
    launch.kernel = trim(row[kernel_col]);
    for (std::size_t c = 0; c < row.size() && c < names.size(); ++c) {
      if (c == kernel_col) continue;
      if (auto v = ncu_number(row[c])) launch.values[trim(names[c])] = scaled_value(*v, units[c], names[c]);
    }
    out.push_back(std::move(launch));
  }
  return out;
}

// One row per (launch, metric): "ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value".
std::vector<Launch> parse_details_layout(const std::vector<std::vector<std::string>>& records, std::size_t header,
                                         std::size_t kernel_col) {
  const std::vector<std::string>& names = records[header];
  auto column = [&](const char* name) -> std::optional<std::size_t> {
    for (std::size_t c = 0; c < names.size(); ++c)
      if (trim(names[c]) == name) return c;
    return std::nullopt;
  };
  const auto id_col = column("ID");
  const std::size_t metric_col = *column("Metric Name"), value_col = *column("Metric Value");
  const auto unit_col = column("Metric Unit");
  const auto cc_col = column("CC");  // the compute capability, which tensor FLOPs depend on
  std::vector<Launch> out;
  std::map<std::string, std::size_t> index;  // launch id (or kernel name) -> out
  for (std::size_t r = header + 1; r < records.size(); ++r) {
    const std::vector<std::string>& row = records[r];
    if (row.size() <= std::max({kernel_col, metric_col, value_col})) continue;
    const std::string kernel = trim(row[kernel_col]);
    if (kernel.empty()) continue;
    const std::string id = id_col && *id_col < row.size() ? trim(row[*id_col]) : kernel;
    auto [it, added] = index.emplace(id + "\n" + kernel, out.size());
    if (added) out.push_back({kernel, {}});
    if (cc_col && *cc_col < row.size())
      if (auto cc = ncu_number(row[*cc_col])) out[it->second].values["CC"] = *cc;
    const std::string unit = unit_col && *unit_col < row.size() ? row[*unit_col] : std::string();
    if (auto v = ncu_number(row[value_col]))
      out[it->second].values[trim(row[metric_col])] = scaled_value(*v, unit, row[metric_col]);
  }
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

// "void ns::k<float, 2>(float const*, int)" -> "ns::k<float, 2>": no return type, no arguments.
std::string short_kernel_name(const std::string& full) {
  std::string name = trim(full);
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      if (name[i] == '(' && --depth == 0) {
        if (i > 0) name = trim(name.substr(0, i));
        break;
      }
    }
  }
  if (name.rfind("void ", 0) == 0) name = trim(name.substr(5));
  return name.empty() ? trim(full) : name;
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

// Nsight Compute's roofline sections collect rates, not counts: `X.per_second` and
// `X.per_cycle_elapsed`. With the launch's duration (and its elapsed cycles) they are counts
// again; a count the launch has is never replaced.
Counters with_counts_from_rates(const Counters& c) {
  Counters out = c;
  std::optional<double> seconds;
  if (auto t = metric(c, {"gpu__time_duration.sum"}); t && *t > 0) seconds = *t;
  std::optional<double> cycles = metric(c, {"sm__cycles_elapsed.avg"});
  if (!cycles && seconds)
    if (auto rate = metric(c, {"sm__cycles_elapsed.avg.per_second"})) cycles = *rate * *seconds;
  const auto strip = [](const std::string& name, const std::string& suffix) -> std::optional<std::string> {
    if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
      return name.substr(0, name.size() - suffix.size());
    return std::nullopt;
  };
  for (const auto& [name, value] : c) {
    if (auto base = strip(name, ".per_second"); base && seconds && c.count(*base) == 0) out[*base] = value * *seconds;
    if (auto base = strip(name, ".per_cycle_elapsed"); base && cycles && c.count(*base) == 0)
      out[*base] = value * *cycles;
  }
  return out;
}

struct KernelTotals {
  std::string kernel;
  double flops = 0, instructions = 0, seconds = 0;
  bool has_flops = false, has_instructions = false, has_time = true;
  std::set<std::string> tensor_counted, tensor_uncounted;  // how its tensor FLOPs were counted (or not)
  std::vector<double> transactions = std::vector<double>(levels().size(), 0.0);
  std::vector<bool> has_level = std::vector<bool>(levels().size(), false);
};

void add_launch(KernelTotals& k, const Counters& counters, double tensor_flops) {
  const Counters c = with_counts_from_rates(counters);
  for (const char* p : {"d", "f", "h"}) {
    for (const char* op : {"add", "mul", "fma"}) {
      const std::string tail = std::string("sass_thread_inst_executed_op_") + p + op + "_pred_on.sum";
      const std::string smsp = "smsp__" + tail, sm = "sm__" + tail;
      if (auto v = metric(c, {smsp.c_str(), sm.c_str()})) {
        k.flops += (std::string(op) == "fma" ? 2 : 1) * *v;
        k.has_flops = true;
      }
    }
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
    if (!found && level.bytes_total != nullptr) {
      if (auto v = metric(c, {level.bytes_total})) sum = *v / level.bytes_per_transaction, found = true;
    }
    if (!found) {
      check_pair(level.bytes_halves);
      for (const char* name : level.bytes_halves)
        if (auto v = metric(c, {name})) sum += *v / level.bytes_per_transaction, found = true;
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

// The CSV records from the header on, and where the header and its "Kernel Name" column are.
struct NcuTable {
  std::vector<std::vector<std::string>> records;
  std::size_t header = 0;
  std::size_t kernel_col = 0;
};

NcuTable ncu_table(const std::string& text, const std::string& source) {
  // Records; ncu's own messages ("==PROF== ...") and the program's output are not CSV records.
  NcuTable table;
  std::optional<std::size_t> header;
  for (const std::string& line : lines_of(text)) {
    if (trim(line).empty() || line.rfind("==", 0) == 0) continue;
    std::vector<std::string> fields = split_csv_record(line);
    if (!header) {
      for (std::size_t c = 0; c < fields.size(); ++c)
        if (trim(fields[c]) == "Kernel Name") {
          header = table.records.size();
          table.kernel_col = c;
        }
      if (!header) continue;  // text before the header
    }
    table.records.push_back(std::move(fields));
  }
  if (!header)
    throw InputError(source +
                     ": not an Nsight Compute CSV export (no \"Kernel Name\" column; "
                     "export with ncu --csv --page raw)");
  table.header = *header;
  return table;
}

// Every kernel's totals, from either of ncu's layouts (raw: a metric per column; details: a row
// per metric); an error names the file.
std::vector<KernelTotals> kernel_totals(const NcuTable& table, const std::string& source, double tensor_flops) {
  const std::vector<std::string>& names = table.records[table.header];
  const bool details =
      std::any_of(names.begin(), names.end(), [](const std::string& n) { return trim(n) == "Metric Name"; }) &&
      std::any_of(names.begin(), names.end(), [](const std::string& n) { return trim(n) == "Metric Value"; });
  std::vector<KernelTotals> kernels;
  try {
    const std::vector<Launch> launches = details ? parse_details_layout(table.records, table.header, table.kernel_col)
                                                 : parse_raw_layout(table.records, table.header, table.kernel_col);
    if (launches.empty()) throw InputError("no kernel launches under the header");

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
  return kernels;
}

// The name each kernel is shown by: short names where they stay unique.
std::vector<std::string> display_names(const std::vector<KernelTotals>& kernels, bool full_names) {
  std::map<std::string, std::set<std::string>> by_short;
  for (const KernelTotals& k : kernels) by_short[short_kernel_name(k.kernel)].insert(k.kernel);
  std::vector<std::string> out;
  for (const KernelTotals& k : kernels) {
    const std::string s = short_kernel_name(k.kernel);
    out.push_back(full_names || by_short[s].size() > 1 ? k.kernel : s);
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
  for (const char* kind : {"flop", "instruction"}) {
    const bool flop = std::string(kind) == "flop";
    const double work = flop ? k.flops : k.instructions;
    if (!(work > 0)) continue;
    // Tensor work without a FLOP figure: its scalar FLOPs alone would put the point far too low
    // (add_tensor_notes names the kernel).
    if (flop && !k.tensor_uncounted.empty()) continue;
    for (std::size_t l = 0; l < levels().size(); ++l) {
      const double txn = k.transactions[l];
      if (!(txn > 0)) continue;
      KernelPoint p;
      p.kernel = name;
      p.level = levels()[l].name ? levels()[l].name : dram_level;
      p.kind = kind;
      p.intensity = flop ? work / (txn * levels()[l].bytes_per_transaction) : work / txn;
      p.performance = work / k.seconds / 1e9;
      out->points.push_back(std::move(p));
    }
  }
}

// How tensor FLOPs were counted, one note per way (tensor_work writes them), and each kernel
// whose tensor work had no figure (it gets no FLOP point).
void add_tensor_notes(const std::vector<KernelTotals>& kernels, NcuConversion* out) {
  std::set<std::string> ways;
  for (const KernelTotals& k : kernels) ways.insert(k.tensor_counted.begin(), k.tensor_counted.end());
  out->notes.insert(out->notes.end(), ways.begin(), ways.end());
  for (const KernelTotals& k : kernels)
    for (const std::string& u : k.tensor_uncounted)
      out->notes.push_back("kernel '" + short_kernel_name(k.kernel) + "': tensor instructions " + u +
                           " have more than one shape there (so more than one FLOPs-per-instruction figure): no FLOP "
                           "point for it; collect sm__ops_path_tensor_src_* (README) or set --tensor-flops-per-inst");
}

// A note for each kind of metric no kernel had, and for the tensor FLOPs assumed.
void add_metric_notes(const std::vector<KernelTotals>& kernels, const NcuOptions& options, NcuConversion* out) {
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
  if (any_tensor) add_tensor_notes(kernels, out);
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

  const std::vector<KernelTotals> kernels =
      kernel_totals(ncu_table(text, source), source, options.tensor_flops_per_instruction);
  const std::vector<std::string> names = display_names(kernels, options.full_names);
  NcuConversion out;
  for (std::size_t i = 0; i < kernels.size(); ++i) add_kernel_points(kernels[i], names[i], options.dram_level, &out);
  add_metric_notes(kernels, options, &out);
  if (out.points.empty())
    throw InputError(
        source + ": no kernel points could be computed (" +
        (out.notes.empty() ? std::string("no FLOPs or instructions with transactions") : out.notes.front()) + ")");
  return out;
}

}  // namespace roofprobe
