// Machine file: YAML round trip, atomic write, reader errors, validation; sweep.csv round trip.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <utility>
#include <vector>

#include "driver/model/errors.hpp"
#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"

namespace roofprobe {
namespace {

namespace fs = std::filesystem;

std::string temp_dir() {
  std::string dir = fs::temp_directory_path() / ("roofprobe_machine_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  return dir;
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

Machine sample_machine() {
  Machine m;
  m.provenance = {{"tool", "roofprobe"}, {"command", "roofprobe run --quick"}};
  m.missing = {"flops precision=fp16: not supported"};
  m.device.kind = "cpu";
  m.device.backend = "cpu";
  m.device.name = "Test CPU \"quoted\": yes";
  m.device.compute_units = 2;
  m.device.compute_unit_name = "cores";
  m.device.threads = 2;
  m.device.caches = {{"L1", 32768, 2}, {"L2", 524288, 2}, {"L3", 33554432, 1}};
  m.device.memory_bytes = 1ull << 34;
  m.device.clock_measured_mhz = 2450.5;
  m.device.extra = {{"simd", "AVX2"}};
  m.device.theoretical_gflops = {{"FP64.FMA", 78.4}};
  m.device.theoretical_basis = {{"FP64.FMA", "2 cores x 4 lanes x 2 pipes x 2 x 2.45 GHz"}};
  MemoryLevel l1;
  l1.level = "L1";
  l1.gbs = 250.25;
  l1.gtxn_s = 250.25 / 32;
  l1.bytes_per_clk_per_unit = 51.1;
  l1.working_set_lo = 4096;
  l1.working_set_hi = 49152;
  l1.stats = {260, 250.25, 0.03, 40};
  l1.probe = "bandwidth";
  l1.params = {{"mode", "read"}};
  l1.by_series = {{"mode=copy", 120.5}};
  MemoryLevel dram = l1;
  dram.level = "DRAM";
  dram.gbs = 18.5;
  m.memory = {l1, dram};
  ComputeCeiling c;
  c.name = "FP64.FMA";
  c.gflops = 75.5;
  c.gflops_ci95 = {75.1, 75.9};
  c.theoretical_gflops = 78.4;
  c.fraction_of_theoretical = 75.5 / 78.4;
  c.clock_mhz = 2450.5;
  c.stats = {76, 75.5, 0.01, 12};
  c.probe = "flops";
  c.params = {{"flops_per_element", "1024"}};
  m.compute = {c};
  return m;
}

TEST(MachineFile, RoundTripKeepsEveryField) {
  std::string path = temp_dir() + "/machine.yaml";
  Machine m = sample_machine();
  write_machine_file(m, path);
  Machine r = read_machine_file(path);
  EXPECT_EQ(r.schema, kMachineSchema);
  EXPECT_TRUE(r.complete);
  EXPECT_EQ(r.missing, m.missing);
  EXPECT_EQ(r.provenance, m.provenance);
  EXPECT_EQ(r.device.name, m.device.name);
  ASSERT_EQ(r.device.caches.size(), 3u);
  EXPECT_EQ(r.device.caches[2].bytes, 33554432u);
  EXPECT_EQ(r.device.caches[0].instances, 2);
  EXPECT_DOUBLE_EQ(r.device.clock_measured_mhz, 2450.5);
  EXPECT_DOUBLE_EQ(r.device.theoretical_gflops.at("FP64.FMA"), 78.4);
  ASSERT_EQ(r.memory.size(), 2u);
  EXPECT_EQ(r.memory[0].level, "L1");
  EXPECT_DOUBLE_EQ(r.memory[0].gbs, 250.25);
  EXPECT_DOUBLE_EQ(r.memory[0].bytes_per_clk_per_unit, 51.1);
  EXPECT_DOUBLE_EQ(r.memory[0].working_set_hi, 49152);
  EXPECT_EQ(r.memory[0].stats.samples, 40);
  EXPECT_DOUBLE_EQ(r.memory[0].by_series.at("mode=copy"), 120.5);
  ASSERT_EQ(r.compute.size(), 1u);
  EXPECT_DOUBLE_EQ(r.compute[0].gflops, 75.5);
  EXPECT_DOUBLE_EQ(r.compute[0].gflops_ci95.lo, 75.1);
  EXPECT_DOUBLE_EQ(r.compute[0].gflops_ci95.hi, 75.9);
  EXPECT_EQ(r.compute[0].params.at("flops_per_element"), "1024");
  EXPECT_TRUE(validate_machine_file(path).empty());
  // Written atomically: no temp file left beside it.
  for (const auto& entry : fs::directory_iterator(fs::path(path).parent_path()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp"), std::string::npos) << entry.path();
}

// A YAML 1.1 reader (PyYAML) reads `on` as true and `0000:00:06.0` as the number 6.0: such text
// is written quoted, and read back as the same text.
TEST(MachineFile, TextThatAYamlReaderWouldTakeForANumberIsQuoted) {
  Machine m = sample_machine();
  m.device.extra = {
      {"ecc", "on"}, {"pci_bus_id", "0000:00:06.0"}, {"persistence", "Off"}, {"clock", "1980"}, {"007", "n"}};
  const std::string yaml = machine_to_yaml(m);
  EXPECT_NE(yaml.find("\"007\": \"n\""), std::string::npos) << yaml;  // keys as well
  EXPECT_NE(yaml.find("ecc: \"on\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("pci_bus_id: \"0000:00:06.0\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("persistence: \"Off\""), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("clock: 1980"), std::string::npos) << yaml;  // a number in text stays a number
  std::string path = temp_dir() + "/quoted.yaml";
  write_machine_file(m, path);
  const Machine r = read_machine_file(path);
  EXPECT_EQ(r.device.extra, m.device.extra);
}

// Text with a control character is written quoted and escaped, and bytes that are not UTF-8 as
// U+FFFD: a device name ending in "\xff\r" (a machine file the fuzzer made) was written plain,
// and the reader took its carriage return for part of the line break.
TEST(MachineFile, ControlCharactersAndBytesThatAreNotUtf8SurviveARoundTrip) {
  Machine m = sample_machine();
  m.device.name = "NVIDIA V100 SXM2 1\xff\xff\xff\r";
  m.device.extra = {{"note\r", "tab\there"}, {"bad\xc3", "\x80"}};
  const std::string first = machine_to_yaml(m);
  const Machine r = read_machine_text(first, "first.yaml");
  EXPECT_EQ(r.device.name, "NVIDIA V100 SXM2 1\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\r");
  EXPECT_EQ(r.device.extra.at("note\r"), "tab\there");
  EXPECT_EQ(r.device.extra.at("bad\xEF\xBF\xBD"), "\xEF\xBF\xBD");
  EXPECT_EQ(machine_to_yaml(r), first) << "a second write is the first";
}

TEST(MachineFile, RoundTripsInstructionRooflineSections) {
  std::string path = temp_dir() + "/gpu.yaml";
  Machine m = sample_machine();
  m.device.kind = "gpu";
  ComputeCeiling tensor;
  tensor.name = "TENSOR.FP16.FP32";
  tensor.gflops = 125000;
  tensor.instructions_gips = 244;
  tensor.flops_per_instruction = 512;
  m.compute.push_back(tensor);
  InstructionCeiling w;
  w.measured_gips = 480.5;
  w.theoretical_gips = 489.6;
  w.clock_mhz = 1530;
  m.warp_gips = w;
  m.predication = {{32, 480, 480}, {8, 470, 117.5}};
  m.global_walls = {{"stride-0", 4, 0, 1.0, 0.98, 120}, {"stride-8", 4, 0, 1.0 / 32, 0, 0}};
  m.shared_walls = {{"conflict-32", 0, 32, 1.0 / 32, 0.031, 10}};
  m.scaling = {{1, {{"HBM", 25.5}}}, {80, {{"HBM", 850}, {"FP64.FMA", 7600}}}};
  write_machine_file(m, path);
  Machine r = read_machine_file(path);
  ASSERT_EQ(r.compute.size(), 2u);
  EXPECT_DOUBLE_EQ(r.compute[1].flops_per_instruction, 512);
  EXPECT_DOUBLE_EQ(r.compute[1].instructions_gips, 244);
  ASSERT_TRUE(r.warp_gips.has_value());
  EXPECT_DOUBLE_EQ(r.warp_gips->theoretical_gips, 489.6);
  ASSERT_EQ(r.predication.size(), 2u);
  EXPECT_DOUBLE_EQ(r.predication[1].thread_gips, 117.5);
  ASSERT_EQ(r.global_walls.size(), 2u);
  EXPECT_DOUBLE_EQ(r.global_walls[1].instruction_intensity, 1.0 / 32);
  EXPECT_EQ(r.shared_walls.at(0).conflict_degree, 32);
  ASSERT_EQ(r.scaling.size(), 2u);
  EXPECT_DOUBLE_EQ(r.scaling[1].ceilings.at("FP64.FMA"), 7600);
  EXPECT_NE(machine_to_yaml(r).find("bytes_per_clk_per_sm"), std::string::npos);
}

TEST(MachineFile, UnitsAreDeclared) {
  std::string yaml = machine_to_yaml(sample_machine());
  EXPECT_NE(yaml.find("bandwidth: GB/s (1e9 bytes/s)"), std::string::npos);
  EXPECT_NE(yaml.find("bytes_per_clk_per_core: 51.1"), std::string::npos);
  EXPECT_NE(yaml.find("transaction_bytes: 32"), std::string::npos);
}

TEST(MachineFile, ReaderErrorsNameFileLineAndKey) {
  std::string dir = temp_dir();
  std::string good = machine_to_yaml(sample_machine());
  auto error_for = [&](const std::string& text) {
    write(dir + "/m.yaml", text);
    try {
      read_machine_file(dir + "/m.yaml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_EQ(error_for(""), dir + "/m.yaml: empty file, expected a machine file");
  EXPECT_EQ(
      error_for("schema: roofprobe.machine/9\n"),
      dir + "/m.yaml:1: schema: unsupported schema 'roofprobe.machine/9' (this roofprobe reads roofprobe.machine/1)");
  std::string bad_gbs = good;
  bad_gbs.replace(bad_gbs.find("gbs: 250.25"), 11, "gbs: fast");
  EXPECT_NE(error_for(bad_gbs).find("memory[0].gbs: expected a number, got 'fast'"), std::string::npos);
  std::string nan = good;
  nan.replace(nan.find("gflops: 75.5"), 12, "gflops: .nan");
  EXPECT_NE(error_for(nan).find("compute[0].gflops: not a finite number"), std::string::npos);
  EXPECT_THROW(read_machine_file(dir), InputError);
  EXPECT_THROW(read_machine_file(dir + "/absent.yaml"), InputError);
}

TEST(MachineFile, ValidateFlagsNonPositiveRates) {
  std::string path = temp_dir() + "/neg.yaml";
  Machine m = sample_machine();
  m.memory[1].gbs = 0;
  write_machine_file(m, path);
  auto problems = validate_machine_file(path);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("memory[1] (DRAM).gbs: must be > 0"), std::string::npos);
}

// What `validate` passed and readers then misread: a negative count (compare printed "-"), a
// fractional count (2.5 read as 2), a negative working set, a nameless level or ceiling, and
// rates in other units than the schema's (compare and export took MB/s for GB/s).
TEST(MachineFile, ValidateRefusesWhatReadersWouldMisread) {
  const auto problems_of = [](const std::function<void(std::string&)>& edit) {
    std::string text = machine_to_yaml(sample_machine());
    edit(text);
    return ::testing::PrintToString(validate_machine_text(text, "m.yaml"));
  };
  const auto replace = [](std::string& text, const std::string& from, const std::string& to) {
    const std::size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    text.replace(at, from.size(), to);
  };
  EXPECT_EQ(problems_of([](std::string&) {}), "{}");
  EXPECT_NE(problems_of([&](std::string& t) {
              replace(t, "bandwidth: GB/s (1e9 bytes/s)", "bandwidth: MB/s");
            }).find("units.bandwidth: 'MB/s', but machine files are in 'GB/s (1e9 bytes/s)'"),
            std::string::npos);
  Machine m = sample_machine();
  m.device.compute_units = -3;
  EXPECT_NE(::testing::PrintToString(validate_machine_text(machine_to_yaml(m), "m.yaml"))
                .find("device.compute_units: negative"),
            std::string::npos);
  m = sample_machine();
  m.memory[0].working_set_lo = -4096;
  m.memory[0].working_set_hi = 8192;
  m.compute[0].name = "";
  const std::string both = ::testing::PrintToString(validate_machine_text(machine_to_yaml(m), "m.yaml"));
  EXPECT_NE(both.find("memory[0] (L1).working_set_bytes: negative"), std::string::npos) << both;
  EXPECT_NE(both.find("compute[0] ().name: empty"), std::string::npos) << both;
  m = sample_machine();
  m.device.compute_units = 80;
  const std::string fraction = problems_of([&](std::string& t) {
    t = machine_to_yaml(m);
    replace(t, "compute_units: 80", "compute_units: 2.5");
  });
  EXPECT_NE(fraction.find("device.compute_units: expected a whole number"), std::string::npos) << fraction;
}

// A name read from the file is quoted back escaped: a control character in a level's name (a fuzz
// finding) must not reach the terminal or split the one-line error.
// Two levels of one name and source: readers look levels up by name, and export kept the first
// of two L1s and said the file had no L2.
TEST(MachineFile, ValidateRefusesTwoFiguresOfOneNameAndSource) {
  Machine m = sample_machine();
  m.memory[1].level = m.memory[0].level;
  const auto problems = validate_machine_text(machine_to_yaml(m), "m.yaml");
  ASSERT_EQ(problems.size(), 1u) << ::testing::PrintToString(problems);
  EXPECT_EQ(problems[0], "m.yaml: memory[1] (L1): a second empirical level of that name");
  m = sample_machine();
  m.memory[1].level = m.memory[0].level;
  m.memory[1].source = "spec";  // a measured and a spec figure of one level: both are its
  EXPECT_TRUE(validate_machine_text(machine_to_yaml(m), "m.yaml").empty());
}

TEST(MachineFile, ProblemsAndWarningsQuoteNamesAsOnePrintableLine) {
  std::string path = temp_dir() + "/control.yaml";
  Machine m = sample_machine();
  m.memory[1].level = "D\x18RAM";
  m.memory[1].gbs = 400;  // faster than L1: a physical warning that quotes the name
  m.memory[1].source = "empir\x7f";
  write_machine_file(m, path);
  const auto problems = validate_machine_file(path);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("memory[1] (D\\x18RAM).source: expected empirical"), std::string::npos) << problems[0];
  m.memory[1].source = "empirical";
  write_machine_file(m, path);
  const auto warnings = physical_warnings(path, read_machine_file(path));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("memory[1] (D\\x18RAM): 400 GB/s"), std::string::npos) << warnings[0];
}

TEST(MachineFile, PhysicalWarnings) {
  std::string path = temp_dir() + "/phys.yaml";
  Machine m = sample_machine();
  write_machine_file(m, path);
  EXPECT_TRUE(physical_warnings(path, read_machine_file(path)).empty());
  m.memory[1].gbs = 400;     // DRAM faster than L1
  m.compute[0].gflops = 90;  // above 78.4 theoretical
  write_machine_file(m, path);
  auto warnings = physical_warnings(path, read_machine_file(path));
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_NE(warnings[0].find("memory[1] (DRAM): 400 GB/s is faster than the nearer memory[0] (L1)"), std::string::npos)
      << warnings[0];
  EXPECT_NE(warnings[1].find("compute[0] (FP64.FMA).gflops: 90 is above theoretical_gflops 78.4"), std::string::npos)
      << warnings[1];
  std::string text = machine_to_yaml(sample_machine());
  text.replace(text.find("bandwidth: GB/s"), 9, "bw");  // units.bandwidth renamed away
  write(path, text);
  warnings = physical_warnings(path, read_machine_file(path));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("units.bandwidth: missing"), std::string::npos) << warnings[0];
}

TEST(MachineFile, PhysicalWarningsOnGpuSections) {
  std::string path = temp_dir() + "/gpu_phys.yaml";
  Machine m = sample_machine();
  // Shared memory faster than L1 is no inversion: they are the same SRAM array.
  MemoryLevel shared = m.memory[0];
  shared.level = "shared";
  shared.gbs = m.memory[0].gbs * 1.2;
  m.memory.insert(m.memory.begin() + 1, shared);
  InstructionCeiling w;
  w.measured_gips = 500;
  w.theoretical_gips = 480;
  m.warp_gips = w;
  write_machine_file(m, path);
  auto warnings = physical_warnings(path, read_machine_file(path));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("instructions.warp_gips.measured: 500 is above theoretical 480"), std::string::npos)
      << warnings[0];
}

// A size or a work count is written whole: 1073741824 bytes, not 1.07374182e+09 (which reads
// back as 1073741820, 4 bytes off the size in the point's parameters).
TEST(SweepCsv, SizesAndCountsAreWrittenWhole) {
  Sample s;
  s.backend = "cpu";
  s.probe = "bandwidth";
  s.params = {{"working_set_bytes", "1073741824"}};
  s.working_set_bytes = 1073741824;
  s.bytes = 324783833088;
  s.flops = 1.5;  // not whole: as any rate, 9 significant digits
  s.seconds = 0.0123456789012;
  const std::string row = sweep_csv_row(s);
  EXPECT_NE(row.find(",1073741824,0.0123456789,324783833088,1.5,"), std::string::npos) << row;
}

TEST(SweepCsv, RoundTripAndTornLastLine) {
  std::string path = temp_dir() + "/sweep.csv";
  fs::remove(path);
  Sample s;
  s.backend = "cpu";
  s.probe = "bandwidth";
  s.point = 2;
  s.sample = 1;
  s.params = {{"mode", "read"}, {"working_set_bytes", "4096"}};
  s.working_set_bytes = 4096;
  s.seconds = 0.0125;
  s.bytes = 1e9;
  s.gbs = 80;
  s.transactions = 3.125e7;
  s.gtxn_s = 2.5;
  s.warp_instructions = 6.25e6;
  s.shared_wavefronts = 1.5625e7;
  s.gips = 0.5;
  s.shared_gtxn_s = 1.25;
  s.clock_mhz = 2400;
  s.point_samples = 3;
  s.flags = "noisy";
  s.power_w = 412.5;
  s.throttle = "sw-power+hw-thermal";
  {
    SweepWriter w(path);
    w.append_point({s, s});
  }
  {
    SweepWriter w(path);  // reopening appends, no second header
    w.append_point({s});
  }
  auto rows = read_sweep_csv(path);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].params, s.params);
  EXPECT_DOUBLE_EQ(rows[2].gbs, 80);
  EXPECT_DOUBLE_EQ(rows[1].seconds, 0.0125);
  EXPECT_EQ(rows[1].point_samples, 3);
  EXPECT_EQ(rows[1].flags, "noisy");
  EXPECT_DOUBLE_EQ(rows[1].warp_instructions, 6.25e6);
  EXPECT_DOUBLE_EQ(rows[1].shared_wavefronts, 1.5625e7);
  EXPECT_DOUBLE_EQ(rows[1].metric("gips"), 0.5);
  EXPECT_DOUBLE_EQ(rows[1].metric("shared_gtxn_s"), 1.25);
  EXPECT_DOUBLE_EQ(rows[1].metric("clock_mhz"), 2400);
  EXPECT_DOUBLE_EQ(rows[1].power_w, 412.5);
  EXPECT_EQ(rows[1].throttle, "sw-power+hw-thermal");
  // A torn last line (killed mid-write) is dropped, a torn line elsewhere is an error.
  std::ofstream(path, std::ios::app) << "0,cpu,bandwidth,3,0,mode=read";
  EXPECT_EQ(read_sweep_csv(path).size(), 3u);
  {
    // A torn line that parses (its last field cut short) is dropped too: a sustained window of
    // FP64.FMA cut to one of "FP64." would be a ceiling of its own.
    Sample window = s;
    window.phase = "sustained:FP64.FMA";
    const std::string whole = sweep_csv_header() + "\n" + sweep_csv_row(s) + "\n" + sweep_csv_row(window);
    write(path + ".cut", whole.substr(0, whole.size() - 3));
    EXPECT_EQ(read_sweep_csv(path + ".cut").size(), 1u);
    write(path + ".cut", whole + "\n");
    EXPECT_EQ(read_sweep_csv(path + ".cut").size(), 2u);
  }
  std::ofstream(path, std::ios::app) << "\n" << sweep_csv_row(s) << "\n";
  try {
    read_sweep_csv(path);
    FAIL() << "torn middle line accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sweep.csv:5: expected 26 fields"), std::string::npos) << e.what();
  }
  // Through a spreadsheet or a Windows editor: a byte order mark and CRLF line ends.
  write(path, "\xEF\xBB\xBF" + sweep_csv_header() + "\r\n" + sweep_csv_row(s) + "\r\n" + sweep_csv_row(s) + "\r\n");
  const std::vector<Sample> crlf = read_sweep_csv(path);
  ASSERT_EQ(crlf.size(), 2u);
  EXPECT_EQ(crlf[1].flags, "noisy");
  EXPECT_EQ(crlf[1].phase, "");
  // A rate that is not its count over the seconds was edited (a gbs 1000x its bytes' rate
  // published L1 at 611 TB/s); a rate with no count behind it likewise.
  for (const auto& [edit, why] : std::vector<std::pair<std::function<void(Sample&)>, std::string>>{
           {[](Sample& x) { x.gbs *= 1000; }, "gbs 80000 is not bytes / seconds / 1e9 (80)"},
           {[](Sample& x) { x.flops = 0, x.gflops = 5; }, "gflops 5 is not flops / seconds / 1e9 (0)"},
           {[](Sample& x) { x.gips = 0; }, "gips 0 is not warp_instructions / seconds / 1e9 (0.5)"}}) {
    Sample edited = s;
    edit(edited);
    write(path, sweep_csv_header() + "\n" + sweep_csv_row(edited) + "\n");
    try {
      read_sweep_csv(path);
      ADD_FAILURE() << why << ": accepted";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("sweep.csv:2: malformed field: " + why), std::string::npos) << e.what();
    }
  }
}

// A sweep written before power_w and throttle were recorded (as the older runs under
// results/measured/ are) is read alike, those two empty; it cannot be resumed by this version.
TEST(SweepCsv, ASweepWithoutTelemetryColumnsIsRead) {
  const std::string path = temp_dir() + "/sweep_before_telemetry.csv";
  write(path,
        "rank,backend,probe,point,sample,params,working_set_bytes,seconds,bytes,flops,transactions,"
        "warp_instructions,shared_wavefronts,gbs,gflops,gtxn_s,gips,shared_gtxn_s,clock_mhz,point_samples,flags\n"
        "0,cuda,flops,0,0,precision=fp64,4096,1,0,2e12,0,0,0,0,2000,0,0,0,1755,1,\n");
  const std::vector<Sample> rows = read_sweep_csv(path);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].gflops, 2000);
  EXPECT_DOUBLE_EQ(rows[0].clock_mhz, 1755);
  EXPECT_EQ(rows[0].power_w, 0);
  EXPECT_EQ(rows[0].throttle, "");
  EXPECT_THROW(prepare_sweep_for_resume(path), InputError);
}

TEST(SweepCsv, ResumeKeepsWholePointsAndCutsPartialOnes) {
  std::string path = temp_dir() + "/resume.csv";
  auto write_points = [&](int last_point_rows_written) {
    fs::remove(path);
    SweepWriter w(path);
    for (int point = 0; point < 3; ++point) {
      std::vector<Sample> rows;
      for (int i = 0; i < 4; ++i) {
        Sample s;
        s.backend = "cpu";
        s.probe = "bandwidth";
        s.point = point;
        s.sample = i;
        s.params = {{"mode", "read"}};
        s.point_samples = 4;
        if (point < 2 || i < last_point_rows_written) rows.push_back(s);
      }
      w.append_point(rows);
    }
  };
  write_points(4);
  EXPECT_EQ(prepare_sweep_for_resume(path).size(), 12u) << "a whole last point is kept";
  write_points(2);
  EXPECT_EQ(prepare_sweep_for_resume(path).size(), 8u) << "a partial last point is dropped";
  write_points(4);
  std::ofstream(path, std::ios::app) << "0,cpu,bandwidth,3,0,mo";
  auto kept = prepare_sweep_for_resume(path);
  EXPECT_EQ(kept.size(), 12u) << "a torn line is cut, the whole point before it kept";
  SweepWriter(path).append_point({kept.front()});
  EXPECT_EQ(read_sweep_csv(path).size(), 13u) << "appending after the cut yields well-formed rows";
}

TEST(SweepCsv, ResumeRefusesAnotherVersionsFileWithoutCuttingIt) {
  const std::string path = temp_dir() + "/old_sweep.csv";
  // The 17-column header of roofprobe before warp instructions and wavefronts were recorded.
  const std::string old =
      "rank,backend,probe,point,sample,params,working_set_bytes,seconds,bytes,flops,transactions,gbs,gflops,"
      "gtxn_s,clock_mhz,point_samples,flags\n0,cpu,bandwidth,0,0,mode=read,4096,1,1,0,1,1,0,1,3000,1,\n";
  write(path, old);
  EXPECT_THROW(prepare_sweep_for_resume(path), InputError);
  std::ifstream in(path);
  const std::string after((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(after, old) << "nothing may be cut from a file that is refused";
}

}  // namespace
}  // namespace roofprobe
