// Exporters, each checked against what its consumer reads: ERT's roofline.json layout, the NERSC
// plotting script's line parser, and the machine file as JSON (same structure as the YAML); AMD's
// roofline.csv in export_rocprof_test.cpp.
#include <gtest/gtest.h>

#include "tests/unit/export_test_support.hpp"
#include <yaml-cpp/yaml.h>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>
#include "driver/model/errors.hpp"
#include "driver/report/export.hpp"

namespace roofprobe {
namespace {

using namespace export_testing;

// ---- ert-json ------------------------------------------------------------------------------

TEST(ExportErtJson, HasErtsLayoutWithPeakFirstAndFastestLevelFirst) {
  const std::string text = export_ert_json(gpu_machine());
  const YAML::Node root = YAML::Load(text);
  ASSERT_TRUE(root["empirical"].IsMap());
  ASSERT_TRUE(root["spec"].IsMap());
  const YAML::Node emp = root["empirical"];
  EXPECT_TRUE(emp["metadata"].IsMap());
  for (const char* key : {"gflops", "gbytes"}) {
    EXPECT_TRUE(emp[key]["data"].IsSequence()) << key;
    EXPECT_TRUE(emp[key]["metadata"].IsMap()) << key;  // strict readers require it
    EXPECT_TRUE(root["spec"][key]["data"].IsSequence()) << key;
  }
  // ERT measures FP64 and its plot takes gflops data[0] as the peak: the FP64 FMA ceiling first
  // (not the tensor rate 14 times higher), then the rest highest first; gbytes data[0] is the
  // fastest roof.
  const auto gflops = pairs(emp["gflops"]["data"]);
  ASSERT_EQ(gflops.size(), 4u);
  EXPECT_EQ(gflops[0], (std::pair<std::string, double>{"FP64.FMA", 7000}));
  EXPECT_EQ(gflops[1], (std::pair<std::string, double>{"TENSOR.FP16.FP32", 100000}));
  for (std::size_t i = 2; i < gflops.size(); ++i) EXPECT_GE(gflops[i - 1].second, gflops[i].second);
  const auto gbytes = pairs(emp["gbytes"]["data"]);
  ASSERT_EQ(gbytes.size(), 4u);  // the spec HBM entry is not empirical
  EXPECT_EQ(gbytes[0].first, "L1");
  EXPECT_EQ(gbytes[1].first, "shared");
  EXPECT_EQ(gbytes[3], (std::pair<std::string, double>{"HBM", 830}));  // GB/s, not GiB/s
  // spec: the theoretical peaks and the spec-sheet bandwidth.
  const auto spec_gflops = pairs(root["spec"]["gflops"]["data"]);
  ASSERT_FALSE(spec_gflops.empty());
  EXPECT_EQ(spec_gflops[0], (std::pair<std::string, double>{"FP64.FMA", 7833.6}));
  const auto spec_gbytes = pairs(root["spec"]["gbytes"]["data"]);
  ASSERT_EQ(spec_gbytes.size(), 1u);
  EXPECT_EQ(spec_gbytes[0], (std::pair<std::string, double>{"HBM", 900}));
  EXPECT_EQ(emp["metadata"]["DEVICE"].as<std::string>(), "Test GPU");
  EXPECT_EQ(emp["metadata"]["HOSTNAME"].as<std::string>(), "node01");
}

TEST(ExportErtJson, NumbersAreFloatsLikePythonsJsonDump) {
  // ERT writes float(...) values; strict readers reject 900 where they expect a float.
  const std::string text = export_ert_json(gpu_machine());
  EXPECT_NE(text.find("\"HBM\",\n               830.0"), std::string::npos) << text;
  EXPECT_NE(text.find("900.0"), std::string::npos);
  // json.dump(indent=3): three spaces per level.
  EXPECT_EQ(text.rfind("{\n   \"empirical\": {\n      \"metadata\": {", 0), 0u) << text.substr(0, 80);
}

TEST(ExportErtJson, PublishedCountsAsMeasuredSpecDoesNot) {
  Machine m = gpu_machine();
  m.memory = {level("L2", 3000, "published"), level("HBM", 3350, "spec")};
  m.compute = {ceiling("FP64.FMA", 34000, 34000, "spec")};
  const YAML::Node root = YAML::Load(export_ert_json(m));
  const auto gbytes = pairs(root["empirical"]["gbytes"]["data"]);
  ASSERT_EQ(gbytes.size(), 1u);
  EXPECT_EQ(gbytes[0].first, "L2");
  EXPECT_EQ(root["empirical"]["gflops"]["data"].size(), 0u);
  EXPECT_EQ(pairs(root["spec"]["gbytes"]["data"]).at(0).second, 3350);
}

TEST(ExportJsonText, OddDeviceNamesAreEscaped) {
  Machine m = gpu_machine();
  m.device.name = std::string("GPU \"x\" \\ tab\there\nnew\x01 caf\xC3\xA9 bad\xFF end");
  for (const std::string& text : {export_ert_json(m), export_json(m)}) {
    // No raw control character inside strings: the only one in the text is the line break.
    for (char c : text) EXPECT_TRUE(static_cast<unsigned char>(c) >= 0x20 || c == '\n') << int(c);
    const YAML::Node root = YAML::Load(text);
    const std::string name = root["empirical"] ? root["empirical"]["metadata"]["DEVICE"].as<std::string>()
                                               : root["device"]["name"].as<std::string>();
    EXPECT_EQ(name, std::string("GPU \"x\" \\ tab\there\nnew\x01 caf\xC3\xA9 bad\xEF\xBF\xBD end"));
  }
  EXPECT_EQ(json::quote("a\"b\\c\n\x1f"), "\"a\\\"b\\\\c\\n\\u001f\"");
}

TEST(ExportJsonText, Numbers) {
  EXPECT_EQ(json::real(900), "900.0");
  EXPECT_EQ(json::real(0.1), "0.1");
  EXPECT_EQ(json::real(2996.77), "2996.77");
  EXPECT_EQ(json::real(0), "0.0");
  EXPECT_EQ(json::real(1e300), "1e+300");
  EXPECT_EQ(json::real(std::nan("")), "null");
  EXPECT_EQ(json::real(INFINITY), "null");
  EXPECT_EQ(json::Value::array().dump(3), "[]");
  EXPECT_EQ(json::Value::object().set("a", json::Value::integer(3)).dump(), "{\"a\": 3}");
}

// ---- json ----------------------------------------------------------------------------------

// Same keys in the same order, same nesting, same scalars (numbers within the YAML's 6 digits).
// What a YAML reader takes a scalar for: quoted ones (JSON strings) are strings; plain ones are
// resolved by the core schema, as PyYAML's and every YAML 1.2 reader's would be.
doc::ScalarType scalar_type(const YAML::Node& n) {
  return n.Tag() == "!" ? doc::ScalarType::String : doc::resolve_plain_scalar(n.Scalar());
}

// Key for key, in order, the same types and values (numbers to the YAML's 10 digits).
void expect_same(const YAML::Node& json, const YAML::Node& yaml, const std::string& where) {
  ASSERT_EQ(json.Type(), yaml.Type()) << where;
  if (yaml.IsMap()) {
    ASSERT_EQ(json.size(), yaml.size()) << where;
    auto j = json.begin();
    for (auto y = yaml.begin(); y != yaml.end(); ++y, ++j) {
      ASSERT_EQ(j->first.as<std::string>(), y->first.as<std::string>()) << where;
      expect_same(j->second, y->second, where + "." + y->first.as<std::string>());
    }
  } else if (yaml.IsSequence()) {
    ASSERT_EQ(json.size(), yaml.size()) << where;
    for (std::size_t i = 0; i < yaml.size(); ++i) expect_same(json[i], yaml[i], where + "[" + std::to_string(i) + "]");
  } else if (yaml.IsScalar()) {
    const doc::ScalarType type = scalar_type(yaml);
    // A real written with no fraction in YAML (1e+10 as 10000000000) is the same number.
    const auto numeric = [](doc::ScalarType t) { return t == doc::ScalarType::Integer || t == doc::ScalarType::Real; };
    if (numeric(type)) {
      ASSERT_TRUE(numeric(scalar_type(json))) << where << ": JSON " << json.Scalar() << " is not a number";
      const double a = json.as<double>(), b = yaml.as<double>();
      EXPECT_NEAR(a, b, 1e-9 * std::max(1.0, std::fabs(b))) << where;
    } else {
      EXPECT_EQ(static_cast<int>(scalar_type(json)), static_cast<int>(type)) << where << ": " << json.Scalar();
      EXPECT_EQ(json.Scalar(), yaml.Scalar()) << where;
    }
  }
}

TEST(ExportJson, IsTheMachineFileAsJsonEveryField) {
  Machine m = gpu_machine();
  m.missing = {"flops precision=fp16: not supported"};
  m.complete = false;
  m.device.caches = {{"L1", 131072, 80}, {"L2", 6291456, 1}};
  // Text a YAML reader takes for a number, a boolean, a null or a string: the JSON agrees.
  m.device.extra = {{"compute_capability", "7.0"},
                    {"ecc", "true"},
                    {"empty", ""},
                    {"version", "0.1.0"},
                    {"huge", "99999999999999999999"},
                    {"offset", "-3"},
                    {"hex", "0x10"},
                    {"tilde", "~"},
                    {"exp", "1e3"},
                    {"lead", "007"}};
  m.memory[0].params = {{"mode", "read"}};
  m.memory[0].by_series = {{"mode=copy", 9000}};
  m.memory[0].working_set_lo = 4096;
  m.memory[0].working_set_hi = 65536;
  m.compute[0].params = {{"flops_per_element", "1024"}};
  m.compute[0].citation = "a paper";
  InstructionCeiling w;
  w.measured_gips = 480.5;
  w.theoretical_gips = 489.6;
  w.clock_mhz = 1530;
  w.stats = {481, 480.5, 0.01, 7};
  w.probe = "instructions";
  m.warp_gips = w;
  m.predication = {{32, 480, 480}, {8, 470, 117.5}};
  m.global_walls = {{"stride-0", 4, 0, 1.0, 0.98, 120}, {"stride-8", 4, 0, 1.0 / 32, 0, 0}};
  m.shared_walls = {{"conflict-32", 0, 32, 1.0 / 32, 0.031, 10}};
  m.scaling = {{1, {{"HBM", 25.5}}}, {80, {{"HBM", 850}, {"FP64.FMA", 7600}}}};
  m.clocks = {{"fma", 1410, 1395, 1425, 12, "flops"}};

  const std::string text = export_json(m);
  expect_same(YAML::Load(text), YAML::Load(machine_to_yaml(m)), "");
  // Types a script relies on: counts are integers, flags booleans, rates numbers.
  EXPECT_NE(text.find("\"samples\": 40"), std::string::npos);
  EXPECT_NE(text.find("\"complete\": false"), std::string::npos);
  EXPECT_NE(text.find("\"compute_units\": 80"), std::string::npos);
  // Parameters are text in the model; what reads as a number in the YAML is a number here too.
  EXPECT_NE(text.find("\"flops_per_element\": 1024"), std::string::npos);
  EXPECT_NE(text.find("\"compute_capability\": 7.0"), std::string::npos);
  EXPECT_NE(text.find("\"mode\": \"read\""), std::string::npos);
  EXPECT_NE(text.find("\"clocks\": ["), std::string::npos);
}

// Golden: every reference machine file and the runs measured on real machines export to JSON
// that equals their YAML key for key (the JSON once dropped `clocks` and wrote "132" for 132).
TEST(ExportJson, EqualsTheYamlForEveryReferenceAndMeasuredFile) {
  const std::vector<std::string> files = shipped_machine_files();
  ASSERT_GE(files.size(), 19u);  // 9 references, the H100, Zen 4 and Xeon runs
  for (const std::string& f : files) {
    const Machine m = read_machine_file(f);
    expect_same(YAML::Load(export_json(m)), YAML::Load(machine_to_yaml(m)), f);
  }
}

TEST(ExportErtJson, ErtsOwnNamesOnRequest) {
  ExportSettings ert;
  ert.names = "ert";
  const YAML::Node root = YAML::Load(export_ert_json(gpu_machine(), ert));
  const auto gflops = pairs(root["empirical"]["gflops"]["data"]);
  const auto gbytes = pairs(root["empirical"]["gbytes"]["data"]);
  auto has = [](const std::vector<std::pair<std::string, double>>& list, const std::string& name) {
    return std::any_of(list.begin(), list.end(), [&](const auto& p) { return p.first == name; });
  };
  EXPECT_TRUE(has(gflops, "FP64 GFLOPs"));
  EXPECT_TRUE(has(gflops, "FP32 GFLOPs"));
  EXPECT_TRUE(has(gbytes, "DRAM"));  // ERT's name for the device memory
  EXPECT_FALSE(has(gbytes, "HBM"));
  EXPECT_TRUE(has(gbytes, "L1"));
  ExportSettings bad;
  bad.names = "likwid";
  EXPECT_THROW(export_ert_json(gpu_machine(), bad), InputError);
}

// Integer rates are not FLOPs: listed apart under "giops", out of the lists ERT's readers take
// data[0] of; --precision names the FMA peak that goes first.
TEST(ExportErtJson, IntegerOpsApartAndThePrecisionsPeakFirst) {
  Machine m = gpu_machine();
  m.compute.push_back(ceiling("TENSOR.INT8.INT32", 200000, 250000));
  m.compute.push_back(ceiling("INT32.FMA", 9000, 0));
  m.device.theoretical_gflops["TENSOR.INT8.INT32"] = 250000;
  ExportSettings ert;
  ert.names = "ert";
  const YAML::Node root = YAML::Load(export_ert_json(m, ert));
  for (const char* part : {"empirical", "spec"})
    for (const auto& [name, value] : pairs(root[part]["gflops"]["data"]))
      EXPECT_EQ(name.find("INT"), std::string::npos) << part << ": " << name;
  const auto giops = pairs(root["empirical"]["giops"]["data"]);
  EXPECT_EQ(giops,
            (std::vector<std::pair<std::string, double>>{{"TENSOR.INT8.INT32 GIOPs", 200000}, {"INT32 GIOPs", 9000}}));
  EXPECT_EQ(pairs(root["spec"]["giops"]["data"]).at(0).first, "TENSOR.INT8.INT32 GIOPs");
  EXPECT_EQ(pairs(root["empirical"]["gflops"]["data"]).at(0).first, "FP64 GFLOPs");

  ExportSettings fp32;
  fp32.precision = "fp32";
  EXPECT_EQ(pairs(YAML::Load(export_ert_json(m, fp32))["empirical"]["gflops"]["data"]).at(0).first, "FP32.FMA");
  // A precision the file has no FMA ceiling of: highest first, and a note saying what data[0] is.
  std::vector<std::string> notes;
  ExportSettings fp8;
  fp8.precision = "fp8";
  fp8.notes = &notes;
  EXPECT_EQ(pairs(YAML::Load(export_ert_json(m, fp8))["empirical"]["gflops"]["data"]).at(0).first, "TENSOR.FP16.FP32");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("no measured FP8.FMA ceiling"), std::string::npos) << notes[0];
}

// A GPU run records its memory's peak from bus width and clock: that is the spec figure.
TEST(ExportErtJson, SpecBandwidthFromTheMemoryPeak) {
  Machine m = gpu_machine();
  m.memory.pop_back();  // no spec-sheet HBM entry
  m.device.extra["memory_peak_gbs"] = "4814.3";
  m.device.extra["memory_peak_basis"] = "2 (double data rate) x 3201 MHz x 6016 bits / 8";
  const YAML::Node root = YAML::Load(export_ert_json(m));
  EXPECT_EQ(pairs(root["spec"]["gbytes"]["data"]), (std::vector<std::pair<std::string, double>>{{"HBM", 4814.3}}));
  EXPECT_NE(root["spec"]["gbytes"]["metadata"]["CITATION"]["HBM"].as<std::string>().find("6016 bits"),
            std::string::npos);
  // A spec-sheet entry, where the file has one, is the figure; the bus peak does not repeat it.
  Machine both = gpu_machine();
  both.device.extra["memory_peak_gbs"] = "4814.3";
  EXPECT_EQ(pairs(YAML::Load(export_ert_json(both))["spec"]["gbytes"]["data"]),
            (std::vector<std::pair<std::string, double>>{{"HBM", 900}}));
}

TEST(ExportErtJson, WarnsWhenNothingWasMeasured) {
  Machine spec_only = gpu_machine();
  spec_only.memory = {level("HBM", 900, "spec")};
  spec_only.compute.clear();
  std::vector<std::string> notes;
  ExportSettings settings;
  settings.notes = &notes;
  export_ert_json(spec_only, settings);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0].rfind("warning: ", 0), 0u) << notes[0];
  notes.clear();
  export_ert_json(gpu_machine(), settings);
  EXPECT_TRUE(notes.empty());
}

// ---- nersc ---------------------------------------------------------------------------------

// Reads the text the way plot_roofline_hierarchical.py does: a line is taken for every key it
// contains (substring match), values split on whitespace, names split on single quotes.
struct NerscFile {
  std::vector<double> memroofs, comproofs;
  std::vector<std::string> mem_names, comp_names;
  int other_key_lines = 0;  // AI_HBM, AI_L2, AI_L1, FLOPS, labels: the script needs each once
  int point_values = 0;     // values on those lines (kernels x 5)
};

NerscFile parse_like_nersc(const std::string& text) {
  NerscFile f;
  std::istringstream in(text);
  std::string line;
  auto numbers = [](const std::string& l) {
    std::istringstream words(l);
    std::string w;
    words >> w;  // the key
    std::vector<double> out;
    while (words >> w) out.push_back(std::stod(w));  // float(a): throws on a non-number
    return out;
  };
  auto names = [](const std::string& l) {
    std::vector<std::string> parts;
    std::string cur;
    for (char c : l) {
      if (c == '\'') {
        parts.push_back(cur);
        cur.clear();
      } else {
        cur += c;
      }
    }
    parts.push_back(cur);
    std::vector<std::string> kept;
    for (const auto& p : parts)
      if (p != " " && !p.empty()) kept.push_back(p);
    kept.erase(kept.begin());  // the key
    return kept;
  };
  while (std::getline(in, line)) {
    if (line.find("memroofs") != std::string::npos) f.memroofs = numbers(line);
    if (line.find("mem_roof_names") != std::string::npos) f.mem_names = names(line);
    if (line.find("comproofs") != std::string::npos) f.comproofs = numbers(line);
    if (line.find("comp_roof_names") != std::string::npos) f.comp_names = names(line);
    for (const char* other : {"AI_HBM", "AI_L2", "AI_L1", "FLOPS", "labels"})
      if (line.find(other) != std::string::npos) {
        ++f.other_key_lines;
        f.point_values += other == std::string("labels") ? static_cast<int>(names(line).size())
                                                         : static_cast<int>(numbers(line).size());
      }
  }
  return f;
}

// The script's conventions a file must meet, beyond parsing: the memory roofs in its L1, L2, HBM
// order (its colours and the AI_* point lines are fixed by position), the first compute roof an
// FMA peak (it ends every memory roof there: a tensor roof first put the elbows off its axes),
// and point lines of one length each.
void expect_script_conventions(const NerscFile& f, const std::string& type, const std::string& where) {
  ASSERT_EQ(f.memroofs.size(), f.mem_names.size()) << where;
  ASSERT_EQ(f.comproofs.size(), f.comp_names.size()) << where;
  ASSERT_FALSE(f.memroofs.empty()) << where;
  ASSERT_FALSE(f.comproofs.empty()) << where;
  EXPECT_EQ(f.comp_names[0].substr(0, type.size() + 4), type + ".FMA") << where;
  int last_slot = -1;
  for (const std::string& name : f.mem_names) {
    const int slot = name.rfind("L1", 0) == 0 ? 0 : name.rfind("L2", 0) == 0 ? 1 : 2;
    EXPECT_GT(slot, last_slot) << where << ": " << name << " out of the script's L1, L2, HBM order";
    EXPECT_EQ(name.rfind("shared", 0), std::string::npos) << where << ": the script has no shared roof";
    last_slot = slot;
  }
  for (double v : f.memroofs) EXPECT_GT(v, 0) << where;
  for (double v : f.comproofs) EXPECT_GT(v, 0) << where;
}

TEST(ExportNersc, ParsesAsTheNerscScriptReadsIt) {
  const std::string text = export_nersc(gpu_machine());
  const NerscFile f = parse_like_nersc(text);
  EXPECT_EQ(f.memroofs, (std::vector<double>{13500, 2900, 830}));
  EXPECT_EQ(f.mem_names, (std::vector<std::string>{"L1", "L2", "HBM"}));
  EXPECT_EQ(f.comproofs, (std::vector<double>{7000, 3500}));  // FP64: FMA first
  EXPECT_EQ(f.comp_names, (std::vector<std::string>{"FP64.FMA", "FP64.noFMA"}));
  EXPECT_EQ(f.other_key_lines, 5);  // present, empty: the script reads them unconditionally
  EXPECT_EQ(f.point_values, 0);
  expect_script_conventions(f, "FP64", "gpu_machine");
  EXPECT_NE(text.find("# not drawn (the script has L1, L2 and HBM roofs only): shared\n"), std::string::npos) << text;
  EXPECT_NE(text.find("# other precisions in the machine file (export --precision): fp32 fp16\n"), std::string::npos)
      << text;
}

// The script draws fixed V100 axes and needs Python 2: the file says so, with the axes that hold
// this file's roofs (every ridge with the first roof inside x, which the script needs).
TEST(ExportNersc, SaysWhatTheScriptNeedsAndWhichAxesToSet) {
  std::vector<std::string> notes;
  ExportSettings settings;
  settings.notes = &notes;
  const std::string text = export_nersc(gpu_machine(), settings);
  EXPECT_NE(text.find("# the script runs under Python 2 only and draws fixed V100 axes"), std::string::npos);
  // Ridges with L1 (13500): 7000/13500 = 0.52, 3500/13500 = 0.26; of every roof with the FMA
  // peak: 0.52, 2.4, 8.4. y: 3500 / 30 down to 100, 7000 x 2 up to 20000.
  EXPECT_NE(text.find("\n# xmin = -1, xmax = 2, ymin = 100, ymax = 20000\n"), std::string::npos) << text;
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("Python 2"), std::string::npos);
  EXPECT_NE(notes[0].find("xmin = -1, xmax = 2, ymin = 100, ymax = 20000"), std::string::npos);
  const NerscFile f = parse_like_nersc(text);
  EXPECT_EQ(f.other_key_lines, 5);  // no comment line holds a key the script would take
  for (double roof : f.comproofs) {
    EXPECT_GT(roof / f.memroofs[0], 0.1);
    EXPECT_LT(roof / f.memroofs[0], 100);
  }
  for (double roof : f.memroofs) EXPECT_LT(f.comproofs[0] / roof, 100);
}

// FMA and noFMA by default; the fma_mix points (MIX1 within a percent of FMA: their labels print
// over each other) only with --mix, and even then none within 5% of a drawn roof.
TEST(ExportNersc, MixRoofsOnRequestAndNoTwoRoofsWithinFivePercent) {
  Machine m = gpu_machine();
  for (const auto& [a, gf] : std::vector<std::pair<std::string, double>>{
           {"0", 3510}, {"0.25", 4380}, {"0.5", 5250}, {"0.75", 6130}, {"1", 7040}})
    m.compute.push_back(ceiling("FP64.MIX" + a, gf, 0));
  m.compute.push_back(ceiling("TENSOR.FP64.FP64", 7020, 0));  // m8n8k4 on an H100: the FMA rate
  const std::string plain = export_nersc(m);
  EXPECT_EQ(parse_like_nersc(plain).comp_names, (std::vector<std::string>{"FP64.FMA", "FP64.noFMA"})) << plain;
  EXPECT_NE(plain.find("# not drawn, the FMA-mix points (export --mix): FP64.MIX0 FP64.MIX0.25 FP64.MIX0.5 "
                       "FP64.MIX0.75 FP64.MIX1\n"),
            std::string::npos)
      << plain;
  EXPECT_NE(plain.find("# not drawn, within 5% of a drawn roof (their values would print over each other): "
                       "TENSOR.FP64.FP64 7020\n"),
            std::string::npos)
      << plain;
  ExportSettings mix;
  mix.mix = true;
  const NerscFile f = parse_like_nersc(export_nersc(m, mix));
  EXPECT_EQ(f.comp_names,
            (std::vector<std::string>{"FP64.FMA", "FP64.noFMA", "FP64.MIX0.75", "FP64.MIX0.5", "FP64.MIX0.25"}));
  for (std::size_t i = 0; i < f.comproofs.size(); ++i)
    for (std::size_t j = i + 1; j < f.comproofs.size(); ++j)
      EXPECT_GT(std::fabs(f.comproofs[i] / f.comproofs[j] - 1), 0.05) << f.comp_names[i] << " " << f.comp_names[j];
  expect_script_conventions(f, "FP64", "mix");
}

TEST(ExportNersc, PrecisionPicksTheCeilingsFmaFirst) {
  ExportSettings fp16;
  fp16.precision = "fp16";
  Machine m = gpu_machine();
  m.compute.push_back(ceiling("FP16.FMA", 28000, 31000));
  const NerscFile f = parse_like_nersc(export_nersc(m, fp16));
  // The tensor roof is higher, but the FMA peak comes first.
  EXPECT_EQ(f.comp_names, (std::vector<std::string>{"FP16.FMA", "TENSOR.FP16.FP32"}));
  expect_script_conventions(f, "FP16", "fp16");
  ExportSettings int4;
  int4.precision = "int4";
  EXPECT_THROW(export_nersc(m, int4), InputError);
}

TEST(ExportNersc, EveryReferenceAndMeasuredFileMeetsTheScriptsConventions) {
  int files = 0;
  for (const std::string& path : shipped_machine_files()) {
    const NerscFile f = parse_like_nersc(export_nersc(read_machine_file(path)));
    EXPECT_EQ(f.other_key_lines, 5) << path;
    EXPECT_EQ(f.point_values, 0) << path;
    expect_script_conventions(f, "FP64", path);
    ++files;
  }
  EXPECT_GE(files, 11);
}

TEST(ExportNersc, PointsBecomeTheScriptsKernelLines) {
  ExportSettings with_points;
  with_points.points = {{"dgemm", "L1", 4.0, 6500}, {"dgemm", "L2", 12.5, 6500},
                        {"dgemm", "HBM", 40, 6500}, {"stream", "L1", 0.05, 40},
                        {"stream", "L2", 0.08, 40}, {"stream", "HBM", 0.083, 40},
                        {"only_l1", "L1", 1, 10},   {"warps", "L1", 2, 300, "instruction"}};
  const std::string text = export_nersc(gpu_machine(), with_points);
  const NerscFile f = parse_like_nersc(text);
  expect_script_conventions(f, "FP64", "points");
  EXPECT_EQ(f.other_key_lines, 5) << text;  // AI_L1, AI_L2, AI_HBM, FLOPS, labels: one line each
  EXPECT_EQ(f.point_values, 10) << text;    // two kernels
  EXPECT_NE(text.find("AI_L1 4 0.05\n"), std::string::npos) << text;
  EXPECT_NE(text.find("AI_L2 12.5 0.08\n"), std::string::npos) << text;
  EXPECT_NE(text.find("AI_HBM 40 0.083\n"), std::string::npos) << text;
  EXPECT_NE(text.find("FLOPS 6500 40\n"), std::string::npos) << text;
  EXPECT_NE(text.find("labels 'dgemm' 'stream'\n"), std::string::npos) << text;
  EXPECT_NE(text.find("not plotted: only_l1"), std::string::npos) << text;  // a kernel needs all three
  // Without an L2 roof the points cannot be placed: refused, not shifted.
  Machine no_l2 = gpu_machine();
  no_l2.memory.erase(no_l2.memory.begin() + 2);
  EXPECT_THROW(export_nersc(no_l2, with_points), InputError);
}

TEST(ExportNersc, OddNamesCannotBreakTheParser) {
  Machine m = gpu_machine();
  m.device.name = "FLOPS labels 'quoted' #1";
  m.memory = {level("L2 'far'", 5000), level("DRAM", 100, "spec")};
  m.device.memory_name = "DRAM";
  m.compute = {ceiling("FP64.FMA", 1000, 0), ceiling("FP64.AI_L1", 500, 0)};
  const std::string text = export_nersc(m);
  const NerscFile f = parse_like_nersc(text);
  EXPECT_EQ(f.other_key_lines, 5) << text;  // only the five (empty) kernel lines
  EXPECT_EQ(f.point_values, 0) << text;
  ASSERT_EQ(f.mem_names.size(), 1u) << text;
  EXPECT_EQ(f.mem_names[0], "DRAM (spec)");  // a spec-sheet value says so
  EXPECT_NE(text.find("# not drawn (the script has L1, L2 and HBM roofs only): L2 _far_"), std::string::npos) << text;
  ASSERT_EQ(f.comp_names.size(), 2u);
  EXPECT_EQ(f.comp_names[1], "FP64.A_I_L1");
  EXPECT_EQ(f.comproofs, (std::vector<double>{1000, 500}));
}

TEST(ExportNersc, NeedsARoofAndACeiling) {
  Machine m = gpu_machine();
  m.compute.clear();
  EXPECT_THROW(export_nersc(m), InputError);
  m = gpu_machine();
  m.memory.clear();
  EXPECT_THROW(export_machine(m, "nersc"), InputError);
}

// ---- dispatch ------------------------------------------------------------------------------

TEST(Export, UnknownFormatNamesTheValidOnes) {
  try {
    export_machine(gpu_machine(), "xml");
    FAIL() << "no error";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'xml'"), std::string::npos);
    for (const std::string& f : export_formats()) EXPECT_NE(what.find(f), std::string::npos) << f;
    EXPECT_EQ(what.find('\n'), std::string::npos);
  }
  for (const std::string& f : export_formats()) EXPECT_FALSE(export_machine(gpu_machine(), f).empty()) << f;
}

TEST(Export, BestValuePerLevelPrefersMeasurements) {
  Machine m;
  m.memory = {level("HBM", 900, "spec"), level("L2", 3000, "published"), level("HBM", 830, "published"),
              level("HBM", 845)};
  const auto best = best_memory_levels(m);
  ASSERT_EQ(best.size(), 2u);
  EXPECT_EQ(best[0]->level, "HBM");
  EXPECT_EQ(best[0]->gbs, 845);  // empirical beats published beats spec
  EXPECT_EQ(best[1]->level, "L2");
  EXPECT_EQ(spec_bandwidth(m, "HBM"), 900);
  EXPECT_EQ(spec_bandwidth(m, "L2"), 0);
}

}  // namespace
}  // namespace roofprobe
