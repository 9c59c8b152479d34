// libFuzzer target: the machine-file reader and validator (read_machine_text and
// validate_machine_text, the code behind read_machine_file, `roofprobe validate`, plot, export,
// compare and run --resume) on arbitrary bytes.
//
// Acceptable outcomes: a Machine, or roofprobe::InputError with a one-line message that names
// the file. Findings: any other exception (it escapes, std::terminate aborts), a crash, a
// sanitizer report, an input slower than -timeout, or a check below: what the reader accepts
// the writer must write as a file the reader accepts again, unchanged on a second round trip.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "driver/model/errors.hpp"
#include "driver/model/machine.hpp"
#include "tests/fuzz/fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace roofprobe;
  const std::string source = "fuzz-machine.yaml";
  const std::string text(reinterpret_cast<const char*>(data), size);

  bool readable = false;
  Machine machine;
  try {
    machine = read_machine_text(text, source);
    readable = true;
  } catch (const InputError& e) {
    fuzz::check_message(e.what(), source);
  }

  const std::vector<std::string> problems = validate_machine_text(text, source);
  for (const std::string& p : problems) fuzz::check_message(p, source);
  if (!readable && problems.empty()) fuzz::finding("validate accepts what read rejects", text.substr(0, 200));

  if (readable) {
    const std::string written = machine_to_yaml(machine);
    try {
      const std::string again = machine_to_yaml(read_machine_text(written, "written.yaml"));
      if (again != written) fuzz::finding("second write differs from the first", written + "\n---\n" + again);
    } catch (const InputError& e) {
      fuzz::finding("the reader rejects what the writer wrote", std::string(e.what()) + "\n" + written);
    }
  }
  return 0;
}
