// Label text and label placement shared by the views.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>

#include "driver/model/units.hpp"
#include "plot/plot.hpp"

namespace roofprobe {
namespace plot_detail {

namespace {

// Rounds to three significant digits first, so a value that prints as "1000" in one prefix
// moves to the next one ("999.6 GB/s" -> "1 TB/s", not "1000 GB/s").
double round_to_3_significant(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const double magnitude = std::pow(10.0, std::floor(std::log10(std::fabs(v))) - 2);
  return std::round(v / magnitude) * magnitude;
}

}  // namespace

std::string format_bandwidth(double gbs) {
  return format_rate_g(gbs, "B/s");  // rounds to 3 significant digits before the prefix
}

std::string format_compute(double gflops) { return format_rate_g(gflops, "FLOP/s"); }

std::string format_ceiling(const std::string& name, double g) {
  const bool integer = name.rfind("INT", 0) == 0 || name.find(".INT") != std::string::npos;
  return format_rate_g(g, integer ? "OP/s" : "FLOP/s");
}

std::string format_size(double bytes) { return format_bytes(bytes); }

namespace {
std::string g_units(double v, const char* unit) {
  const double r = round_to_3_significant(v);
  char buf[64];
  if (std::fabs(r) >= 100 || r == 0)
    std::snprintf(buf, sizeof buf, "%.0f %s", std::round(v), unit);
  else
    std::snprintf(buf, sizeof buf, "%.3g %s", r, unit);
  return buf;
}
}  // namespace

std::string sourced_name(const std::string& name, const std::string& source) {
  return source.empty() || source == "empirical" ? name : name + " (" + source + ")";
}

std::string format_gips(double gips) { return g_units(gips, "GIPS"); }
std::string format_gtxn(double gtxn_s) { return g_units(gtxn_s, "GTXN/s"); }

std::string one_line(const std::string& text) {
  std::string out = text;
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';  // a newline ends a command
  return out;
}

std::string gnuplot_string(const std::string& text) {
  // Single quotes: gnuplot expands no backslash escapes inside them; a quote is written twice.
  // Together with `noenhanced` text, underscores, carets and braces print as themselves.
  std::string out = "'";
  for (char c : one_line(text)) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::vector<double> spread_apart(const std::vector<double>& wanted, double min_gap) {
  const std::size_t n = wanted.size();
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return wanted[a] < wanted[b]; });

  // Blocks of labels packed at exactly min_gap. A block's best start is the mean of
  // (wanted_k - k * gap) over its members; two blocks that would overlap become one. This is
  // the pool-adjacent-violators solution of the least-squares placement.
  struct Block {
    std::size_t first;  // index into `order`
    std::size_t count;
    double sum;  // sum over members of wanted - k * gap
    double start() const { return sum / double(count); }
  };
  std::vector<Block> blocks;
  for (std::size_t i = 0; i < n; ++i) {
    blocks.push_back({i, 1, wanted[order[i]]});
    while (blocks.size() > 1) {
      Block& prev = blocks[blocks.size() - 2];
      const Block& last = blocks.back();
      if (prev.start() + double(prev.count) * min_gap <= last.start()) break;
      prev.sum += last.sum - double(last.count) * double(prev.count) * min_gap;
      prev.count += last.count;
      blocks.pop_back();
    }
  }

  std::vector<double> placed(n);
  for (const Block& b : blocks)
    for (std::size_t k = 0; k < b.count; ++k) placed[order[b.first + k]] = b.start() + double(k) * min_gap;
  return placed;
}

std::vector<double> push_apart_upward(const std::vector<double>& wanted, double min_gap) {
  std::vector<std::size_t> order(wanted.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return wanted[a] < wanted[b]; });
  std::vector<double> placed(wanted.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    double at = wanted[order[k]];
    if (k > 0) at = std::max(at, placed[order[k - 1]] + min_gap);
    placed[order[k]] = at;
  }
  return placed;
}

std::string compact_number(double v) {
  if (v == 0 || !std::isfinite(v)) return num(v);
  const double r = round_to_3_significant(v);
  const double magnitude = std::fabs(r);
  char buf[40];
  if (magnitude >= 1e5 || magnitude < 1e-3) {
    int exponent = int(std::floor(std::log10(magnitude) + 1e-9));
    double mantissa = r / std::pow(10.0, exponent);
    std::snprintf(buf, sizeof buf, "%.3ge%d", mantissa, exponent);
  } else {
    std::snprintf(buf, sizeof buf, "%.6g", r);
  }
  return buf;
}

std::vector<std::vector<std::size_t>> close_groups(const std::vector<double>& rates, double tolerance) {
  std::vector<std::vector<std::size_t>> groups;
  for (std::size_t i = 0; i < rates.size(); ++i) {
    auto near = std::find_if(groups.begin(), groups.end(), [&](const std::vector<std::size_t>& g) {
      const double first = rates[g.front()];
      return first > 0 && rates[i] > 0 && std::fabs(rates[i] / first - 1) <= tolerance;
    });
    if (near == groups.end())
      groups.push_back({i});
    else
      near->push_back(i);
  }
  return groups;
}

std::string merged_label(const std::vector<std::string>& labels) {
  if (labels.size() == 1) return labels.front();
  struct Part {
    std::string name, number, unit;
  };
  std::vector<Part> parts;
  bool same_unit = true;
  for (const std::string& label : labels) {
    const std::size_t colon = label.rfind(": ");
    const std::string name = colon == std::string::npos ? label : label.substr(0, colon);
    const std::string value = colon == std::string::npos ? std::string() : label.substr(colon + 2);
    const std::size_t space = value.find(' ');
    parts.push_back(
        {name, value.substr(0, space), space == std::string::npos ? std::string() : value.substr(space + 1)});
    same_unit = same_unit && !parts.back().unit.empty() && parts.back().unit == parts.front().unit;
  }
  std::string out;
  for (const Part& p : parts) {
    if (!out.empty()) out += " / ";
    out += same_unit ? p.name + " " + p.number : p.name + ": " + p.number + (p.unit.empty() ? "" : " " + p.unit);
  }
  return same_unit ? out + " " + parts.front().unit : out;
}

namespace {

// `text` without what is inside balanced `open`...`close` pairs (the brackets go too).
std::string without_bracketed(const std::string& text, char open, char close) {
  std::string out;
  int depth = 0;
  for (char c : text) {
    if (c == open) {
      ++depth;
    } else if (c == close && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out += c;
    }
  }
  return depth == 0 ? out : text;  // unbalanced: not a C++ name, left alone
}

void erase_all(std::string& text, const std::string& what) {
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at)) text.erase(at, what.size());
}

// "void at::native::<unnamed>::kernel<float, 4>(int, float*)" -> "kernel".
std::string base_name(std::string name) {
  erase_all(name, "(anonymous namespace)::");
  erase_all(name, "<unnamed>::");
  std::string base = without_bracketed(without_bracketed(name, '<', '>'), '(', ')');
  while (!base.empty() && std::isspace(static_cast<unsigned char>(base.back()))) base.pop_back();
  const std::size_t space = base.rfind(' ');  // a return type before the name
  if (space != std::string::npos) base = base.substr(space + 1);
  const std::size_t scope = base.rfind("::");
  if (scope != std::string::npos && scope + 2 < base.size()) base = base.substr(scope + 2);
  return base.empty() ? name : base;
}

// `text` cut in the middle to `max_chars` ("distribution_el...stride_kernel"): names of one
// family of kernels share their start and often differ at the end.
std::string cut_to(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  const std::size_t room = max_chars > 3 ? max_chars - 3 : 0;
  std::size_t head = room - room * 2 / 5, tail = text.size() - room * 2 / 5;
  auto continuation = [&](std::size_t at) { return (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80; };
  while (head > 0 && continuation(head)) --head;  // UTF-8: never cut inside a character
  while (tail < text.size() && continuation(tail)) ++tail;
  return text.substr(0, head) + "..." + text.substr(tail);
}

}  // namespace

std::vector<std::string> display_names(const std::vector<std::string>& names, std::size_t max_chars) {
  const std::size_t room = max_chars > 4 ? max_chars - 4 : max_chars;  // for a " #12" suffix
  std::vector<std::string> bases, out;
  for (const std::string& name : names) {
    const std::string text = one_line(name);
    bases.push_back(text.size() <= max_chars ? text : base_name(text));
    out.push_back(cut_to(bases.back(), max_chars));
  }
  std::map<std::string, int> seen, numbered;
  for (const std::string& s : out) ++seen[s];
  for (std::size_t i = 0; i < out.size(); ++i)
    if (seen[out[i]] > 1) out[i] = cut_to(bases[i], room) + " #" + std::to_string(++numbered[out[i]]);
  return out;
}

}  // namespace plot_detail
}  // namespace roofprobe
