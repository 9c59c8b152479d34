// Label text and label placement shared by the views.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "driver/model/units.hpp"
#include "plot/plot.hpp"

namespace roofprobe {
namespace plot_detail {

bool finite_positive(double v) { return std::isfinite(v) && v > 0; }

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

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

}  // namespace plot_detail
}  // namespace roofprobe
