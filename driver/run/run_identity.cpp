#include "driver/run/run_identity.hpp"

#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <ctime>

namespace roofprobe {

std::string utc_now(const char* strftime_format) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, strftime_format, &tm);
  return buf;
}

std::string utc_now_milliseconds() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  std::tm tm{};
  gmtime_r(&now.tv_sec, &tm);
  char buf[64];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof buf - n, ".%03dZ", static_cast<int>(now.tv_nsec / 1000000));
  return buf;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown-host";
  return buf;
}

std::string slug(const std::string& text, const std::string& fallback) {
  std::string out;
  for (char c : text) {
    bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    if (keep)
      out += c;
    else if (!out.empty() && out.back() != '-')
      out += '-';
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  // A leading dot would make "." or ".." (a directory above results/) or a hidden name.
  const std::size_t first = out.find_first_not_of(".-");
  out = first == std::string::npos ? std::string() : out.substr(first);
  return out.empty() ? fallback : out;
}

}  // namespace roofprobe
