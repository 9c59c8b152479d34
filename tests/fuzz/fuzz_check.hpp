// What the fuzz targets hold an input reader to, besides "no crash, no sanitizer report":
// the only exception that may leave it is roofprobe::InputError, and its message is the one
// printable line that `roofprobe` prints after "error: ", naming the input first.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace roofprobe::fuzz {

// A finding: prints why, then aborts so libFuzzer saves the input as a crash artifact.
[[noreturn]] inline void finding(const std::string& why, const std::string& detail) {
  std::fprintf(stderr, "FUZZ FINDING: %s: %s\n", why.c_str(), detail.c_str());
  std::abort();
}

// An error message must name `source` first and be one line without control characters
// (one_line_message() escapes them), at most a few hundred bytes.
inline void check_message(const std::string& message, const std::string& source) {
  if (message.compare(0, source.size(), source) != 0) finding("message does not start with the file name", message);
  if (message.size() > 1024) finding("message longer than 1024 bytes", message.substr(0, 200));
  for (char c : message) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) finding("control character in the message", message);
  }
}

}  // namespace roofprobe::fuzz
