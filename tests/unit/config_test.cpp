// Config parsing and validation: defaults, sweeps, and every kind of bad input naming
// file, line and key.
#include <gtest/gtest.h>

#include "driver/run/config.hpp"
#include "driver/model/errors.hpp"
#include "driver/model/units.hpp"

namespace roofprobe {
namespace {

std::string error_of(const std::string& yaml) {
  try {
    parse_config(yaml, "test.yaml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Config, EmbeddedDefaultAndQuickParse) {
  RunConfig def = load_embedded_config("default.yaml");
  RunConfig quick = load_embedded_config("quick.yaml");
  const BackendConfig* cpu = def.backend("cpu");
  ASSERT_NE(cpu, nullptr);
  ASSERT_EQ(cpu->probes.size(), 2u);
  // default: 4 KiB .. 1 GiB at 3 per octave = 18 octaves * 3 + 1 sizes
  for (const auto& p : cpu->probes)
    if (p.name == "bandwidth") {
      EXPECT_EQ(p.axes.at("working_set_bytes").size(), 55u);
      EXPECT_EQ(p.axes.at("working_set_bytes").front(), "4096");
      EXPECT_EQ(p.axes.at("working_set_bytes").back(), "1073741824");
    }
  EXPECT_LT(quick.measurement.timeout_seconds, def.measurement.timeout_seconds);
}

TEST(Config, OmittedAxesTakeProbeDefaults) {
  RunConfig c = parse_config("cpu:\n  probes:\n    flops:\n      precision: fp64\n", "t.yaml");
  const ProbeConfig& flops = c.backend("cpu")->probes.at(0);
  EXPECT_EQ(flops.axes.at("precision"), std::vector<std::string>{"fp64"});
  EXPECT_EQ(flops.axes.at("form"), (std::vector<std::string>{"fma", "nofma"}));
  EXPECT_EQ(flops.axis_line.at("precision"), 4);
  EXPECT_EQ(flops.axis_line.at("form"), 0);
}

TEST(Config, CudaDeviceIsKeptOnlyWhenGiven) {
  // `cuda.device` reaches the CUDA backend as ROOFPROBE_CUDA_DEVICE (run_backend); absent, the
  // environment's choice (or device 0) stands.
  const RunConfig given = parse_config("cuda:\n  device: 3\n  probes: {flops: {}}\n", "t.yaml");
  ASSERT_NE(given.backend("cuda"), nullptr);
  EXPECT_EQ(given.backend("cuda")->device, 3);
  const RunConfig absent = parse_config("cuda:\n  probes: {flops: {}}\n", "t.yaml");
  EXPECT_EQ(absent.backend("cuda")->device, -1);
  EXPECT_THROW(parse_config("cuda:\n  device: -2\n  probes: {flops: {}}\n", "t.yaml"), InputError);
}

TEST(Config, SizesAcceptUnits) {
  RunConfig c = parse_config("cpu:\n  probes:\n    bandwidth:\n      working_set_bytes: [4KiB, 1MiB, 2e6]\n", "t");
  EXPECT_EQ(c.backend("cpu")->probes.at(0).axes.at("working_set_bytes"),
            (std::vector<std::string>{"4096", "1048576", "2000000"}));
}

TEST(Config, GeometricSizesAreRoundedAndCoverTheRange) {
  auto sizes = geometric_sizes(4096, 65536, 2);
  EXPECT_EQ(sizes,
            (std::vector<std::string>{"4096", "5888", "8192", "11520", "16384", "23296", "32768", "46336", "65536"}));
}

// Every time and noise setting has a stated range: a setting outside it would make a point run
// for days (or never converge), and a launch longer than the range would delay a stop signal.
TEST(Config, TimeAndNoiseSettingsOutsideTheirRangeAreRefusedNamingKeyAndRange) {
  const auto measurement = [](const std::string& lines) {
    return error_of("measurement:\n" + lines + "cpu: {probes: {flops: {}}}");
  };
  EXPECT_EQ(measurement("  warmup_seconds: 1e6\n"),
            "test.yaml:2: measurement.warmup_seconds: out of range: 1e6 not in [0.0001, 10]");
  EXPECT_EQ(measurement("  target_launch_seconds: 1e6\n"),
            "test.yaml:2: measurement.target_launch_seconds: out of range: 1e6 not in [0.0001, 0.1]");
  EXPECT_EQ(measurement("  max_noise: 1e-6\n"),
            "test.yaml:2: measurement.max_noise: out of range: 1e-6 not in [0.001, 1]");
  EXPECT_EQ(measurement("  timeout_seconds: 1e308\n"),
            "test.yaml:2: measurement.timeout_seconds: out of range: 1e308 not in [0.001, 60]");
  EXPECT_EQ(measurement("  min_seconds: 0\n"),
            "test.yaml:2: measurement.min_seconds: out of range: 0 not in [0.001, 60]");
  // The shipped configs lie inside every range.
  for (const char* name : {"default.yaml", "quick.yaml"}) {
    const MeasurementSettings m = load_embedded_config(name).measurement;
    for (const SettingRange& range : kMeasurementRanges) {
      const std::string key = range.key;
      const double v = key == "warmup_seconds"    ? m.warmup_seconds
                       : key == "min_seconds"     ? m.min_seconds
                       : key == "max_noise"       ? m.max_noise
                       : key == "timeout_seconds" ? m.timeout_seconds
                                                  : m.target_launch_seconds;
      EXPECT_GE(v, range.min) << name << " " << key;
      EXPECT_LE(v, range.max) << name << " " << key;
    }
  }
}

TEST(Config, Errors) {
  EXPECT_EQ(error_of(""), "test.yaml: empty configuration");
  EXPECT_NE(error_of("cpu: [unclosed").find("test.yaml:1: malformed YAML"), std::string::npos);
  EXPECT_EQ(error_of("measurment: {}\ncpu: {probes: {flops: {}}}"),
            "test.yaml:1: measurment: unknown key (did you mean 'measurement'?)");
  EXPECT_EQ(error_of("cpu:\n  probes:\n    flops:\n      precison: fp64"),
            "test.yaml:4: cpu.probes.flops.precison: unknown key (did you mean 'precision'?)");
  EXPECT_EQ(error_of("cpu:\n  probes:\n    flop: {}"),
            "test.yaml:3: cpu.probes.flop: unknown key (did you mean 'flops'?)");
  EXPECT_EQ(error_of("measurement:\n  min_samples: lots\ncpu: {probes: {flops: {}}}"),
            "test.yaml:2: measurement.min_samples: expected a number, got 'lots'");
  EXPECT_EQ(error_of("measurement:\n  min_samples: 2.5\ncpu: {probes: {flops: {}}}"),
            "test.yaml:2: measurement.min_samples: expected an integer");
  EXPECT_EQ(error_of("measurement:\n  max_noise: -1\ncpu: {probes: {flops: {}}}"),
            "test.yaml:2: measurement.max_noise: out of range: -1 not in [0.001, 1]");
  EXPECT_EQ(error_of("cpu:\n  probes:\n    bandwidth:\n      working_set_bytes: 0"),
            "test.yaml:4: cpu.probes.bandwidth.working_set_bytes: size must be > 0");
  EXPECT_EQ(
      error_of("cpu:\n  probes:\n    bandwidth:\n      working_set_bytes: 12 parsecs"),
      "test.yaml:4: cpu.probes.bandwidth.working_set_bytes: malformed size '12 parsecs' (use e.g. 4096, 32KiB, 1GiB)");
  EXPECT_EQ(error_of("cpu:\n  probes:\n    bandwidth:\n      working_set_bytes: {min: 1GiB, max: 4KiB}"),
            "test.yaml:4: cpu.probes.bandwidth.working_set_bytes: min (1 GiB) > max (4 KiB)");
  EXPECT_EQ(error_of("cpu:\n  probes:\n    flops:\n      precision: fp128"),
            "test.yaml:4: cpu.probes.flops.precision: 'fp128' is not one of the choices (did you mean 'fp32'?)");
  EXPECT_EQ(error_of("cpu:\n  probes:\n    bandwidth:\n      mode: stream"),
            "test.yaml:4: cpu.probes.bandwidth.mode: 'stream' is not one of the choices (valid: read, rmw, copy, "
            "write, write_nt)");
  EXPECT_EQ(error_of("cpu:\n  probes:\n    flops:\n      precision: [fp64, fp64]"),
            "test.yaml:4: cpu.probes.flops.precision: value 'fp64' listed twice");
  EXPECT_EQ(error_of("cpu:\n  threads: 1\n"), "test.yaml:2: cpu.probes: missing (list the probes to run)");
  EXPECT_EQ(error_of("measurement:\n  min_seconds: 2\n  timeout_seconds: 1\ncpu: {probes: {flops: {}}}"),
            "test.yaml:3: measurement.timeout_seconds: must be >= min_seconds");
  EXPECT_EQ(error_of("- a\n- b"), "test.yaml:1: the configuration must be a mapping (measurement:, cpu:, cuda:)");
}

// Aliases are YAML, and a config may use them; but an alias inside its own anchor loads as a
// cyclic graph, and nested aliases expand exponentially. Both are refused from the event stream
// before anything walks the tree (the fuzzer found the cycle: 5 s under ASan, 359 bytes).
TEST(Config, AliasesAreReadButCyclesAndBombsAreRefused) {
  RunConfig c =
      parse_config("measurement: {min_seconds: &s 0.5, warmup_seconds: *s}\ncpu: {probes: {flops: {}}}\n", "t.yaml");
  EXPECT_EQ(c.measurement.warmup_seconds, 0.5);
  EXPECT_EQ(error_of("cpu:\n  probes: &p\n    flops: {precision: *p}\n"),
            "test.yaml:3: an alias refers to a node it is inside (a cycle)");
  // a0 holds 10 scalars, each aK ten aliases of a(K-1): a5 alone expands to 1,111,111 nodes.
  std::string bomb = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int k = 1; k <= 6; ++k) {
    const std::string alias = "*a" + std::to_string(k - 1);
    bomb += "a" + std::to_string(k) + ": &a" + std::to_string(k) + " [" + alias;
    for (int i = 1; i < 10; ++i) bomb += ", " + alias;
    bomb += "]\n";
  }
  EXPECT_EQ(error_of(bomb + "cpu: {probes: {flops: {}}}\n"),
            "test.yaml:6: aliases expand the document to more than 1000000 nodes");
}

// yaml-cpp keeps one of two equal keys silently; the checker follows keys and values through
// flow and block mappings, and a collection in a key position is a key (what follows is its value).
TEST(Config, DuplicateKeysNameBothLines) {
  EXPECT_EQ(error_of("cpu:\n  threads: 1\n  probes: {flops: {}, flops: {}}\n"),
            "test.yaml:3: flops: written twice in one mapping (first on line 3)");
  EXPECT_EQ(error_of("cpu:\n  ? [a]\n  : probes\n  probes: {flops: {}}\n  probes: {}\n"),
            "test.yaml:5: probes: written twice in one mapping (first on line 4)");
  // A key written through an alias of a scalar is that scalar.
  EXPECT_EQ(error_of("a: &k threads\ncpu:\n  threads: 1\n  *k : 2\n  probes: {flops: {}}\n"),
            "test.yaml:4: threads: written twice in one mapping (first on line 3)");
  EXPECT_EQ(error_of("cpu:\n  probes:\n    flops: {precision: fp64}\n    bandwidth: {mode: read}\n"
                     "  threads: 1\n  threads: 2\n"),
            "test.yaml:6: threads: written twice in one mapping (first on line 5)");
}

// `probes: all` runs every probe of the backend at its defaults; `all: {}` in a mapping adds the
// probes it does not list, after those it lists (with their axes as written).
TEST(Config, AllProbesRunsEveryRegisteredProbe) {
  const RunConfig every = parse_config("cpu: {probes: all}\n", "t.yaml");
  std::vector<std::string> names;
  for (const ProbeConfig& p : every.backend("cpu")->probes) names.push_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"bandwidth", "flops"}));
  const RunConfig rest = parse_config("cpu:\n  probes:\n    all: {}\n    flops: {precision: fp32}\n", "t.yaml");
  const std::vector<ProbeConfig>& probes = rest.backend("cpu")->probes;
  ASSERT_EQ(probes.size(), 2u);
  EXPECT_EQ(probes[0].name, "flops");
  EXPECT_EQ(probes[0].axes.at("precision"), std::vector<std::string>{"fp32"});
  EXPECT_EQ(probes[1].name, "bandwidth");
  EXPECT_EQ(probes[1].axes.at("working_set_bytes").size(),
            every.backend("cpu")->probes[0].axes.at("working_set_bytes").size());
  // A probe written with no value at all takes its defaults, as `{}` does.
  const RunConfig bare = parse_config("cpu:\n  probes:\n    flops:\n", "t.yaml");
  EXPECT_EQ(bare.backend("cpu")->probes.at(0).axes.at("precision"),
            every.backend("cpu")->probes.at(1).axes.at("precision"));
  EXPECT_EQ(error_of("cpu: {probes: every}\n"), "test.yaml:1: cpu.probes: expected a mapping of probe: axes, or 'all'");
  EXPECT_EQ(error_of("cpu: {probes: {all: {precision: fp64}}}\n"),
            "test.yaml:1: cpu.probes.all: takes no axes: write 'all: {}' and list a probe to set its axes");
}

TEST(Config, MissingFileAndDirectory) {
  EXPECT_THROW(load_config_file("/nonexistent/roofprobe.yaml"), InputError);
  try {
    load_config_file("/tmp");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "/tmp: is a directory, expected a config");
  }
}

TEST(Units, ParseAndFormat) {
  EXPECT_EQ(*parse_bytes("4KiB"), 4096);
  EXPECT_EQ(*parse_bytes("1.5 MiB"), 1.5 * 1048576);
  EXPECT_EQ(*parse_bytes("64KB"), 64000);
  EXPECT_EQ(*parse_bytes("1e6"), 1e6);
  EXPECT_FALSE(parse_bytes("KiB").has_value());
  EXPECT_FALSE(parse_bytes("4 KiBs").has_value());
  EXPECT_EQ(format_bytes(4096), "4 KiB");
  EXPECT_EQ(format_bytes(1.5 * 1048576), "1.5 MiB");
  EXPECT_EQ(format_bytes(1073741824), "1 GiB");
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(1020.0 * 1048576 + 1000), "1020 MiB");  // never "1.02e+03 MiB"
  EXPECT_EQ(format_bytes(999.7 * 1024), "1000 KiB");
  EXPECT_EQ(format_rate_g(182.34, "B/s"), "182 GB/s");
  EXPECT_EQ(format_rate_g(3412, "B/s"), "3.41 TB/s");
  EXPECT_EQ(format_rate_g(9.87, "FLOP/s"), "9.87 GFLOP/s");
  EXPECT_EQ(format_rate_g(999.6, "B/s"), "1 TB/s");
  EXPECT_EQ(format_rate_g(0, "B/s"), "0 GB/s");
  EXPECT_EQ(edit_distance("precison", "precision"), 1u);
}

TEST(Params, RoundTripAndTypedAccess) {
  Params p{{"mode", "read"}, {"working_set_bytes", "4096"}};
  EXPECT_EQ(params_to_string(p), "mode=read;working_set_bytes=4096");
  EXPECT_EQ(params_from_string(params_to_string(p)), p);
  EXPECT_EQ(param_int(p, "working_set_bytes"), 4096);
  EXPECT_THROW(param_int(p, "mode"), std::invalid_argument);
  EXPECT_THROW(param_int(p, "absent"), std::invalid_argument);
  EXPECT_THROW(params_from_string("novalue"), std::invalid_argument);
}

}  // namespace
}  // namespace roofprobe
