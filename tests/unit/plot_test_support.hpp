// What the plot tests share: small machine files and sweeps, and readers of the scripts and data
// files the views write (tests/unit/plot_test.cpp, plot_gpu_test.cpp).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <tuple>
#include "driver/model/errors.hpp"
#include "plot/plot.hpp"
#include "temp_dir.hpp"

namespace roofprobe::plot_testing {

namespace fs = std::filesystem;
using plot_detail::format_bandwidth;
using plot_detail::format_compute;
using plot_detail::format_size;

inline constexpr double KiB = 1024.0, MiB = KiB * 1024, GiB = MiB * 1024;

inline MemoryLevel level(const std::string& name, double gbs, double lo, double hi) {
  MemoryLevel l;
  l.level = name;
  l.gbs = gbs;
  l.working_set_lo = lo;
  l.working_set_hi = hi;
  l.probe = "bandwidth";
  return l;
}

inline ComputeCeiling ceiling(const std::string& name, double gflops, double theoretical = 0) {
  ComputeCeiling c;
  c.name = name;
  c.gflops = gflops;
  c.theoretical_gflops = theoretical;
  c.probe = "flops";
  return c;
}

// A two-core CPU: private L1 and L2, one shared L3, DRAM.
inline Machine cpu_machine() {
  Machine m;
  m.device.backend = "cpu";
  m.device.kind = "cpu";
  m.device.name = "Test CPU 2-core";
  m.device.caches = {
      {"L1", std::uint64_t(32 * KiB), 2}, {"L2", std::uint64_t(512 * KiB), 2}, {"L3", std::uint64_t(32 * MiB), 1}};
  m.memory = {level("L1", 412.0, 4 * KiB, 48 * KiB), level("L2", 182.4, 128 * KiB, 768 * KiB),
              level("L3", 96.43, 2 * MiB, 24 * MiB), level("DRAM", 21.27, 128 * MiB, 1 * GiB)};
  m.compute = {ceiling("FP64.FMA", 98.26, 105.6), ceiling("FP64.noFMA", 49.6, 52.8), ceiling("FP32.FMA", 196.1, 211.2),
               ceiling("FP32.noFMA", 99.1, 105.6)};
  return m;
}

// Bandwidth samples with a step per cache level, two modes, five noisy samples per size, plus
// FLOP-probe samples that carry a working set and must not be drawn.
inline std::vector<Sample> bandwidth_samples(int* memory_count = nullptr) {
  std::vector<Sample> out;
  unsigned noise = 12345;
  int memory = 0;
  for (double ws = 4 * KiB; ws <= 1 * GiB; ws *= std::pow(2.0, 0.5)) {
    const double base = ws <= 64 * KiB ? 410 : ws <= 1 * MiB ? 180 : ws <= 32 * MiB ? 95 : 21;
    for (const char* mode : {"read", "write"}) {
      for (int k = 0; k < 5; ++k) {
        noise = noise * 1103515245u + 12345u;
        Sample s;
        s.probe = "bandwidth";
        s.params = {{"mode", mode}, {"working_set_bytes", std::to_string(std::llround(ws))}};
        s.working_set_bytes = std::round(ws);
        s.gbs = base * (mode[0] == 'w' ? 0.6 : 1.0) * (0.95 + 0.1 * ((noise >> 16) % 1000) / 1000.0);
        out.push_back(s);
        ++memory;
      }
    }
  }
  Sample flops;
  flops.probe = "flops";
  flops.params = {{"precision", "fp64"}, {"working_set_bytes", "16384"}};
  flops.working_set_bytes = 16384;
  flops.flops = 1e9;
  flops.gbs = 5;
  flops.gflops = 90;
  out.push_back(flops);
  if (memory_count) *memory_count = memory;
  return out;
}

inline PlotScript view(const std::vector<PlotScript>& scripts, const std::string& name) {
  for (const PlotScript& s : scripts)
    if (s.view == name) return s;
  throw std::runtime_error("no view " + name);
}

inline const std::string& data_file(const PlotScript& s, const std::string& name) {
  for (const auto& [file, text] : s.data_files)
    if (file == name) return text;
  throw std::runtime_error("no data file " + name);
}

inline std::vector<PlotScript> build(const Machine& m, const std::vector<Sample>& samples = {},
                                     std::vector<std::string>* skipped = nullptr) {
  PlotOptions options;
  options.out_dir = "unused";
  return build_plot_scripts(m, samples, options, skipped);
}

inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Data blocks of a gnuplot data file: rows of numbers, blocks separated by blank lines.
inline std::vector<std::vector<std::pair<double, double>>> blocks(const std::string& text) {
  std::vector<std::vector<std::pair<double, double>>> out;
  std::istringstream in(text);
  std::string line;
  bool in_block = false;
  while (std::getline(in, line)) {
    if (line.empty()) {
      in_block = false;
      continue;
    }
    if (line[0] == '#') continue;
    if (!in_block) out.emplace_back();
    in_block = true;
    std::istringstream row(line);
    double x = 0, y = 0;
    row >> x >> y;
    out.back().push_back({x, y});
  }
  return out;
}

// The "at first|screen X, first Y" position of the label whose text starts with `text`.
inline std::pair<double, double> label_position(const std::string& script, const std::string& text) {
  const std::regex re("set label '" + text + "[^']*' at (?:first|screen) ([-0-9.e+]+), first ([-0-9.e+]+)");
  std::smatch m;
  if (!std::regex_search(script, m, re)) throw std::runtime_error("no label " + text);
  return {std::stod(m[1]), std::stod(m[2])};
}

// The labelled ticks of "set <axis>tics (...)": their texts, in order.
inline std::vector<std::string> tick_labels(const std::string& script, const std::string& axis) {
  std::smatch line;
  if (!std::regex_search(script, line, std::regex("set " + axis + "tics \\(([^\n]*)\\)\n")))
    throw std::runtime_error("no " + axis + "tics");
  std::vector<std::string> out;
  const std::string list = line[1];
  const std::regex label("'([^']+)' [-0-9.e+]+ 0");
  for (auto it = std::sregex_iterator(list.begin(), list.end(), label); it != std::sregex_iterator(); ++it)
    out.push_back((*it)[1]);
  return out;
}

// Sets an environment variable for one test and puts the old value back.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    ::setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

inline std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace roofprobe::plot_testing
