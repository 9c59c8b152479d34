// Machine files the exporter tests share (tests/unit/export_test.cpp, export_rocprof_test.cpp).
#pragma once

#include <yaml-cpp/yaml.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include "driver/model/errors.hpp"
#include "driver/report/export.hpp"

namespace roofprobe::export_testing {

inline MemoryLevel level(const std::string& name, double gbs, const std::string& source = "empirical") {
  MemoryLevel l;
  l.level = name;
  l.gbs = gbs;
  l.gtxn_s = gbs / 32;
  l.source = source;
  l.probe = "bandwidth";
  if (source == "empirical") l.stats = {gbs * 1.04, gbs, 0.08, 40};
  return l;
}

inline ComputeCeiling ceiling(const std::string& name, double gflops, double theoretical,
                              const std::string& source = "empirical") {
  ComputeCeiling c;
  c.name = name;
  c.gflops = gflops;
  c.theoretical_gflops = theoretical;
  c.fraction_of_theoretical = theoretical > 0 ? gflops / theoretical : 0;
  c.source = source;
  c.probe = "flops";
  if (source == "empirical") c.stats = {gflops * 1.01, gflops, 0.02, 9};
  return c;
}

// A measured GPU whose memory list is deliberately not in bandwidth order (shared before L1).
inline Machine gpu_machine() {
  Machine m;
  m.provenance = {{"tool", "roofprobe"}, {"version", "0.1.0"}, {"host", "node01"}};
  m.device.kind = "gpu";
  m.device.backend = "cuda";
  m.device.name = "Test GPU";
  m.device.vendor = "NVIDIA";
  m.device.compute_units = 80;
  m.device.compute_unit_name = "multiprocessors";
  m.device.memory_name = "HBM";
  m.device.clock_measured_mhz = 1530;
  m.device.theoretical_gflops = {{"FP64.FMA", 7833.6}, {"FP32.FMA", 15667.2}};
  m.device.theoretical_basis = {{"FP64.FMA", "80 SMs x 32 x 2 x 1.53 GHz"}};
  m.memory = {level("shared", 12000), level("L1", 13500), level("L2", 2900), level("HBM", 830),
              level("HBM", 900, "spec")};
  m.memory.back().citation = "datasheet";
  m.compute = {ceiling("FP64.FMA", 7000, 7833.6), ceiling("FP32.FMA", 14000, 15667.2),
               ceiling("FP64.noFMA", 3500, 3916.8), ceiling("TENSOR.FP16.FP32", 100000, 125000)};
  m.compute.back().instructions_gips = 195.3;
  m.compute.back().flops_per_instruction = 512;
  return m;
}

// Every machine file the project ships: the reference files and the machine files of the runs
// measured on real hardware (their golden exports below).
inline std::vector<std::string> shipped_machine_files() {
  const std::string root = ROOFPROBE_SOURCE_DIR;
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(root + "/results/reference"))
    if (e.path().extension() == ".yaml") files.push_back(e.path().string());
  for (const auto& e : std::filesystem::recursive_directory_iterator(root + "/results/measured"))
    if (e.path().filename() == "machine.yaml" && e.path().string().find("/before-fixes/") == std::string::npos)
      files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

inline std::vector<std::pair<std::string, double>> pairs(const YAML::Node& data) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& item : data) {
    EXPECT_TRUE(item.IsSequence());
    EXPECT_EQ(item.size(), 2u);
    out.emplace_back(item[0].as<std::string>(), item[1].as<double>());
  }
  return out;
}

}  // namespace roofprobe::export_testing
