// libFuzzer target: the run-config loader, parse_config(text, source), on arbitrary bytes.
//
// Acceptable outcomes: a RunConfig, or roofprobe::InputError with a one-line message that names
// the file. Findings: any other exception (it escapes, std::terminate aborts), a crash, an
// AddressSanitizer/UndefinedBehaviorSanitizer/LeakSanitizer report, an input taking longer than
// -timeout, or a check below. The probes parse_config validates against are the CPU ones,
// linked in as in the roofprobe binary.
#include <cstddef>
#include <cstdint>
#include <string>

#include "driver/run/config.hpp"
#include "driver/model/errors.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace roofprobe;
  const std::string source = "fuzz.yaml";
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    RunConfig config = parse_config(text, source);
    // An accepted config is a plan the engine can run: a backend, and every axis of every probe
    // with at least one value.
    if (config.backends.empty()) fuzz::finding("accepted a config without a backend", text.substr(0, 200));
    for (const BackendConfig& backend : config.backends)
      for (const ProbeConfig& probe : backend.probes)
        for (const auto& [axis, values] : probe.axes)
          if (values.empty()) fuzz::finding("accepted an empty axis", probe.name + "." + axis);
    if (config.text != text || config.source != source) fuzz::finding("text or source not recorded", source);
  } catch (const InputError& e) {
    fuzz::check_message(e.what(), source);
  }
  return 0;
}
