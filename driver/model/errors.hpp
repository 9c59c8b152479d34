// Errors the CLI turns into one line "error: ..." and a non-zero exit.
#pragma once

#include <cstddef>
#include <cstdio>
#include <stdexcept>
#include <string>

namespace roofprobe {

// An error message made safe to print as the one line "error: ...": control characters and
// bytes that are not UTF-8 (a binary file's contents quoted back, a key holding "\n") become
// \xNN, and a message longer than `max_bytes` (a megabyte-long key) is cut with "...".
inline std::string one_line_message(const std::string& s, std::size_t max_bytes = 512) {
  std::string out;
  std::size_t i = 0;
  while (i < s.size() && out.size() < max_bytes) {
    const auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size() && c >= 0x20 && c != 0x7f && c != 0xc0 && c != 0xc1 && c < 0xf5;
    for (std::size_t k = 1; ok && k < len; ++k) ok = (static_cast<unsigned char>(s[i + k]) >> 6) == 2;
    if (ok && c == 0xc2) ok = static_cast<unsigned char>(s[i + 1]) >= 0xa0;  // C1 controls
    if (ok) {
      out.append(s, i, len);
      i += len;
    } else {
      char hex[5];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
      ++i;
    }
  }
  if (i < s.size()) out += "...";
  return out;
}

// Bad user input (config, files, arguments). The message already names file:line:key.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A measurement that cannot be trusted (verification failure, device error).
class MeasurementError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace roofprobe
