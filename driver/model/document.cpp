// The document tree (document.hpp): JSON text (escaping, numbers) and YAML through yaml-cpp.
#include "driver/model/document.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>

namespace roofprobe::doc {

namespace {

// Length of the valid UTF-8 sequence starting at s[i], or 0 when the bytes there are not one.
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = byte(i);
  std::size_t n = 0;
  unsigned int code = 0, min = 0;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2, code = c & 0x1F, min = 0x80;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3, code = c & 0x0F, min = 0x800;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4, code = c & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

std::string quote(const std::string& text) {
  std::string out = "\"";
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        default:
          if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
          } else {
            out += static_cast<char>(c);
          }
      }
      ++i;
      continue;
    }
    const std::size_t n = utf8_length(text, i);
    if (n == 0) {
      out += "\\ufffd";  // not UTF-8: a replacement character rather than an unreadable file
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out + "\"";
}

std::string real(double value) {
  if (!std::isfinite(value)) return "null";
  if (value == 0) return "0.0";  // also -0.0
  // Shortest round trip; plain digits (no exponent) for the range rates and sizes live in.
  char buf[64];
  const double a = std::fabs(value);
  const auto result = a >= 1e-6 && a < 1e15 ? std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed)
                                            : std::to_chars(buf, buf + sizeof buf, value);
  std::string text(buf, result.ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = Kind::Bool;
  v.bool_ = b;
  return v;
}

Value Value::integer(long long i) {
  Value v;
  v.kind_ = Kind::Integer;
  v.int_ = i;
  return v;
}

Value Value::number(double d) {
  Value v;
  v.kind_ = Kind::Real;
  v.real_ = d;
  return v;
}

Value Value::string(std::string s) {
  Value v;
  v.kind_ = Kind::String;
  v.text_ = std::move(s);
  return v;
}

Value Value::text(std::string s) {
  Value v;
  v.kind_ = Kind::Text;
  v.text_ = std::move(s);
  return v;
}

Value Value::array() {
  Value v;
  v.kind_ = Kind::Array;
  return v;
}

Value Value::object() {
  Value v;
  v.kind_ = Kind::Object;
  return v;
}

Value& Value::push(Value v) {
  items_.emplace_back(std::string(), std::move(v));
  return *this;
}

Value& Value::set(const std::string& key, Value v) {
  items_.emplace_back(key, std::move(v));
  return *this;
}

std::string Value::dump(int indent) const {
  std::string out;
  write(out, indent, 0);
  return out;
}

void Value::write(std::string& out, int indent, int depth) const {
  switch (kind_) {
    case Kind::Null:
      out += "null";
      return;
    case Kind::Bool:
      out += bool_ ? "true" : "false";
      return;
    case Kind::Integer:
      out += std::to_string(int_);
      return;
    case Kind::Real:
      out += real(real_);
      return;
    case Kind::String:
      out += quote(text_);
      return;
    case Kind::Text:
      switch (resolve_plain_scalar(text_)) {
        case ScalarType::Integer:
          out += std::to_string(std::strtoll(text_.c_str(), nullptr, 10));
          return;
        case ScalarType::Real:
          out += real(std::strtod(text_.c_str(), nullptr));
          return;
        case ScalarType::Bool:
          out += text_[0] == 't' || text_[0] == 'T' ? "true" : "false";
          return;
        // yaml-cpp quotes a null-like string ("~", "null"): a reader of the YAML gets the text.
        case ScalarType::Null:
        case ScalarType::String:
          out += quote(text_);
          return;
      }
      return;
    case Kind::Array:
    case Kind::Object:
      break;
  }
  const bool object = kind_ == Kind::Object;
  out += object ? '{' : '[';
  if (items_.empty()) {
    out += object ? '}' : ']';
    return;
  }
  const std::string inner = indent > 0 ? "\n" + std::string(std::size_t(indent) * (depth + 1), ' ') : "";
  const std::string outer = indent > 0 ? "\n" + std::string(std::size_t(indent) * depth, ' ') : "";
  for (std::size_t i = 0; i < items_.size(); ++i) {
    if (i > 0) out += indent > 0 ? "," : ", ";
    out += inner;
    if (object) out += quote(items_[i].first) + ": ";
    items_[i].second.write(out, indent, depth + 1);
  }
  out += outer;
  out += object ? '}' : ']';
}

ScalarType resolve_plain_scalar(const std::string& text) {
  // The YAML 1.2 core schema's tags for plain scalars (the JSON schema's numbers and more).
  static const std::regex null_re("null|Null|NULL|~");
  static const std::regex bool_re("true|True|TRUE|false|False|FALSE");
  static const std::regex int_re("[-+]?[0-9]+");
  static const std::regex real_re("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (std::regex_match(text, null_re)) return ScalarType::Null;
  if (std::regex_match(text, bool_re)) return ScalarType::Bool;
  if (std::regex_match(text, int_re)) {
    // Beyond 64 bits a reader keeps it exact only as text: a real here, like Python's json.
    errno = 0;
    std::strtoll(text.c_str(), nullptr, 10);
    return errno == ERANGE ? ScalarType::Real : ScalarType::Integer;
  }
  if (std::regex_match(text, real_re)) return ScalarType::Real;
  return ScalarType::String;
}

// `text` with every byte that does not begin valid UTF-8 replaced by U+FFFD: yaml-cpp writes
// such bytes as they are, in a scalar it may leave unquoted, and a reader then takes the line
// apart differently (a trailing carriage return after them read as part of a line break).
std::string valid_utf8(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    const std::size_t n = c < 0x80 ? 1 : utf8_length(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(text, i, n);
      i += n;
    }
  }
  return out;
}

namespace {

// Plain scalars that YAML 1.2 reads as text but a YAML 1.1 reader (PyYAML, the usual reader of a
// machine file) reads as something else: the booleans yes/no/on/off/y/n in their three cases,
// and sexagesimal numbers (a PCI bus id, 0000:00:06.0, would read as 6.0).
bool misread_by_yaml_1_1(const std::string& text) {
  static const std::regex bool_11("y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF");
  static const std::regex base_60("[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+(\\.[0-9_]*)?");
  return std::regex_match(text, bool_11) || std::regex_match(text, base_60);
}

bool has_control(const std::string& text) {
  return std::any_of(text.begin(), text.end(), [](char ch) {
    const unsigned char c = static_cast<unsigned char>(ch);
    return c < 0x20 || c == 0x7F;
  });
}

// A string scalar, double-quoted (so escaped) where `quoted` or where it holds a control character.
void emit_text(YAML::Emitter& out, const std::string& raw, bool quoted) {
  const std::string text = valid_utf8(raw);
  if (quoted || has_control(text)) out << YAML::DoubleQuoted;
  out << text;
}

// A string that a YAML reader would take for a number, a boolean or null is quoted: it stays a
// string.
void emit_string(YAML::Emitter& out, const std::string& text) {
  emit_text(out, text, resolve_plain_scalar(text) != ScalarType::String || misread_by_yaml_1_1(text));
}

void emit(YAML::Emitter& out, const Value& v) {
  switch (v.kind()) {
    case Value::Kind::Null:
      out << YAML::Null;
      return;
    case Value::Kind::Bool:
      out << v.as_bool();
      return;
    case Value::Kind::Integer:
      out << v.as_integer();
      return;
    case Value::Kind::Real:
      out << v.as_real();
      return;
    case Value::Kind::String:
      emit_string(out, v.as_text());
      return;
    case Value::Kind::Text:
      emit_text(out, v.as_text(),
                resolve_plain_scalar(v.as_text()) == ScalarType::String && misread_by_yaml_1_1(v.as_text()));
      return;
    case Value::Kind::Array:
      if (v.is_flow()) out << YAML::Flow;
      out << YAML::BeginSeq;
      for (const auto& item : v.items()) emit(out, item.second);
      out << YAML::EndSeq;
      return;
    case Value::Kind::Object:
      if (v.is_flow()) out << YAML::Flow;
      out << YAML::BeginMap;
      for (const auto& [key, item] : v.items()) {
        out << YAML::Key;
        emit_string(out, key);  // a host named 001 or no is a key too
        out << YAML::Value;
        emit(out, item);
      }
      out << YAML::EndMap;
      return;
  }
}

}  // namespace

std::string to_yaml(const Value& root) {
  YAML::Emitter out;
  out.SetDoublePrecision(10);
  emit(out, root);
  return std::string(out.c_str()) + "\n";
}

}  // namespace roofprobe::doc
