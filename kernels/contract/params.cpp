// Typed access to a point's parameters (kept as canonical text, see probe.hpp).
#include <cerrno>
#include <cstdlib>
#include <stdexcept>

#include "kernels/contract/probe.hpp"

namespace roofprobe {

namespace {
const std::string& lookup(const Params& p, const std::string& axis) {
  auto it = p.find(axis);
  if (it == p.end()) throw std::invalid_argument("parameter '" + axis + "' is not set");
  return it->second;
}
}  // namespace

std::int64_t param_int(const Params& p, const std::string& axis) {
  const std::string& text = lookup(p, axis);
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0')
    throw std::invalid_argument("parameter '" + axis + "' is not an integer: '" + text + "'");
  return v;
}

double param_real(const Params& p, const std::string& axis) {
  const std::string& text = lookup(p, axis);
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0')
    throw std::invalid_argument("parameter '" + axis + "' is not a number: '" + text + "'");
  return v;
}

const std::string& param_text(const Params& p, const std::string& axis) { return lookup(p, axis); }

std::string params_to_string(const Params& p) {
  std::string out;
  for (const auto& [k, v] : p) {
    if (!out.empty()) out += ';';
    out += k;
    out += '=';
    out += v;
  }
  return out;
}

Params params_from_string(const std::string& text) {
  Params p;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(';', pos);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(pos, end - pos);
    std::size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("malformed parameter '" + item + "' (expected axis=value)");
    p[item.substr(0, eq)] = item.substr(eq + 1);
    pos = end + 1;
  }
  return p;
}

}  // namespace roofprobe
