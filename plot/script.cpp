// Pieces of gnuplot script every view uses: terminal, frame, tics, colours.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "driver/model/errors.hpp"
#include "plot/plot.hpp"

namespace roofprobe {
namespace plot_detail {

double LogAxis::to_px(double v) const {
  return (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) * px;
}

double LogAxis::from_px(double p) const {
  return std::pow(10.0, std::log10(lo) + p / px * (std::log10(hi) - std::log10(lo)));
}

double LogAxis::px_per_decade() const { return px / (std::log10(hi) - std::log10(lo)); }

namespace {

// Base font size per terminal, chosen so text covers the same fraction of the canvas on all of
// them (measured: pngcairo draws 12 pt digits 10 px wide; svg sizes are px; the pdf is 8 in wide).
double base_font_pt(const std::string& format) {
  if (format == "svg") return 16;
  if (format == "pdf") return 10.6;
  return 12;
}

std::string terminal_line(const std::string& format) {
  const std::string font = "font 'sans," + num(base_font_pt(format)) + "'";
  if (format == "png") return "set terminal pngcairo size 1280,860 " + font + " noenhanced background '#ffffff'";
  if (format == "svg") return "set terminal svg size 1280,860 fixed " + font + " noenhanced background '#ffffff'";
  if (format == "pdf") return "set terminal pdfcairo size 8in,5.375in " + font + " noenhanced";
  throw InputError("unknown plot format '" + format + "' (use png, svg or pdf)");
}

// Plain numbers read best up to 1000; beyond, an exponent ("1e4", "2e6", never "2e+06") keeps
// the tick labels of one axis alike.
std::string tick_number(double v) {
  if (v >= 1e4 && v < 1e5) {
    const double e = std::floor(std::log10(v) + 1e-9);
    return compact_number(v / std::pow(10.0, e)) + "e" + std::to_string(int(e));
  }
  return compact_number(v);
}

void append_tic(std::string& list, const std::string& label, double at, bool major) {
  if (!list.empty()) list += ", ";
  list += gnuplot_string(label) + " " + num(at) + (major ? " 0" : " 1");
}

}  // namespace

std::string view_title(const std::string& what, const Machine& machine) {
  std::string name = machine.device.name;
  const std::size_t room = 90 > what.size() + 3 ? 90 - what.size() - 3 : 0;  // 90 chars at 15 pt
  if (name.size() > room) {
    std::size_t cut = room > 3 ? room - 3 : 0;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;  // UTF-8
    name = name.substr(0, cut) + "...";
  }
  return name.empty() ? what : what + " - " + name;
}

std::string script_preamble(const std::string& view, const std::string& format, const Frame& frame,
                            const std::string& title) {
  const double font = base_font_pt(format);
  std::string s;
  // one_line: a newline in a name would end the comment, and gnuplot would run the rest.
  s += "# roofprobe '" + one_line(view) + "' view, generated from a machine file. Re-run: gnuplot " + one_line(view) +
       ".gp\n";
  s += terminal_line(format) + "\n";
  s += "if (!exists(\"outfile\")) outfile = " + gnuplot_string(view + "." + format) + "\n";
  s += "set output outfile\n";
  s += "set encoding utf8\n";
  s += "set termoption noenhanced\n";
  s += "set lmargin at screen " + num(frame.left) + "\n";
  s += "set rmargin at screen " + num(frame.right) + "\n";
  s += "set bmargin at screen " + num(frame.bottom) + "\n";
  s += "set tmargin at screen " + num(frame.top) + "\n";
  // The title is a label at a fixed place so views can use the top margin for annotations.
  s += "set label " + gnuplot_string(title) + " at screen 0.5, screen 0.965 center font '," + num(font * 1.25) + "'\n";
  s += "set border lw 1\n";
  s += "set grid xtics ytics lc rgb '#e4e4e4' lw 1 dt 1 back\n";
  s += "set style textbox opaque fc rgb '#ffffff' noborder margins 1,1\n";
  s += "set tics front\n";
  // A line with both ends outside the range (a slow roof that enters at the bottom and leaves at
  // the right) is still drawn where it crosses the plot.
  s += "set clip two\n";
  return s;
}

std::string range_command(const std::string& axis, double lo, double hi) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "set %srange [%.9g:%.9g]\n", axis.c_str(), lo * (1 - 1e-6), hi * (1 + 1e-6));
  return buf;
}

namespace {

// Every view's axes pass here: extreme but valid values must give an error, not a loop over
// billions of tics (or an int overflow).
void check_axis_span(const std::string& axis, double lo, double hi) {
  constexpr double kMaxDecades = 60;
  if (!(lo > 0) || !(hi >= lo) || !std::isfinite(hi) || !(std::log10(hi / lo) <= kMaxDecades))
    throw InputError("plot: the " + axis + " axis would span " + num(lo) + " to " + num(hi) +
                     ", beyond a readable plot (more than 60 decades)");
}

}  // namespace

std::string log2_tics(const std::string& axis, double lo, double hi, std::string (*label)(double)) {
  check_axis_span(axis, lo, hi);
  const int first = int(std::ceil(std::log2(lo) - 1e-9));
  const int last = int(std::floor(std::log2(hi) + 1e-9));
  int step = 1;
  for (int candidate : {1, 2, 5, 10, 20}) {
    step = candidate;
    if ((last - first) / candidate + 1 <= 12) break;
  }
  std::string list;
  for (int e = first; e <= last; ++e) {
    const bool major = ((e % step) + step) % step == 0;
    append_tic(list, major ? label(std::ldexp(1.0, e)) : "", std::ldexp(1.0, e), major);
  }
  return "set " + axis + "tics (" + list + ")\n";
}

std::string log10_tics(const std::string& axis, double lo, double hi) {
  check_axis_span(axis, lo, hi);
  const int first = int(std::floor(std::log10(lo) + 1e-9));
  const int last = int(std::ceil(std::log10(hi) - 1e-9));
  std::vector<double> values;
  for (int e = first; e <= last; ++e)
    for (int m = 1; m <= 9; ++m) {
      const double v = m * std::pow(10.0, e);
      if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) values.push_back(v);
    }
  // Label decades; add 2 and 5 on short ranges, and every multiple when even that leaves
  // fewer than three labels (a range inside one decade).
  auto mantissa = [](double v) { return int(std::lround(v / std::pow(10.0, std::floor(std::log10(v) + 1e-9)))); };
  auto labelled_with = [&](bool two_five, bool all) {
    std::vector<bool> major;
    for (double v : values) {
      const int m = mantissa(v);
      major.push_back(all || m == 1 || (two_five && (m == 2 || m == 5)));
    }
    return major;
  };
  std::vector<bool> major = labelled_with(last - first <= 3, false);
  if (std::count(major.begin(), major.end(), true) < 3) major = labelled_with(true, false);
  if (std::count(major.begin(), major.end(), true) < 3) major = labelled_with(true, true);
  std::string list;
  for (std::size_t i = 0; i < values.size(); ++i)
    append_tic(list, major[i] ? tick_number(values[i]) : "", values[i], major[i]);
  return "set " + axis + "tics (" + list + ")\n";
}

KeyLayout key_layout(const std::vector<std::string>& titles, const Frame& frame) {
  KeyLayout out;
  if (titles.empty()) return out;
  std::size_t widest = 0;
  for (const std::string& t : titles) widest = std::max(widest, t.size());
  // gnuplot's column: the widest title, the sample (samplen 2) and the gaps around them.
  const double column_px = (double(widest) + 9) * Frame::kCharPx;
  // gnuplot fits the columns of a key into the plot area's width, wherever the key is placed.
  out.columns = std::max(1, std::min(int(titles.size()), int(frame.width_px() / column_px)));
  out.rows = (int(titles.size()) + out.columns - 1) / out.columns;
  return out;
}

double frame_bottom_for_key(int rows, int note_rows) {
  // Tic labels and the axis label take ~64 px under the plot area, each key row 22 px, each
  // note line 20 px.
  return std::max(0.11, (12 + rows * 22.0 + note_rows * 20.0 + 64) / Frame::kHeightPx);
}

std::string key_command(const KeyLayout& layout) {
  if (layout.rows == 0) return "unset key\n";
  return "set key at screen 0.5, screen 0.012 center bottom horizontal maxcols " + std::to_string(layout.columns) +
         " samplen 2 spacing 1.1\n";
}

double pow2_floor(double v) { return std::ldexp(1.0, int(std::floor(std::log2(v) + 1e-9))); }
double pow2_ceil(double v) { return std::ldexp(1.0, int(std::ceil(std::log2(v) - 1e-9))); }

std::string series_colour(std::size_t i) {
  // Okabe-Ito colours without the yellow (too light on white).
  static const char* colours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"};
  return colours[i % (sizeof colours / sizeof colours[0])];
}

std::string translucent(const std::string& colour, double opacity) {
  // gnuplot reads the leading byte of #AARRGGBB as transparency (00 = opaque).
  const int alpha = std::clamp(int(std::lround((1 - opacity) * 255)), 0, 255);
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02X", alpha);
  return buf + colour.substr(1);
}

}  // namespace plot_detail
}  // namespace roofprobe
