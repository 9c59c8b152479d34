// One ordered document tree, written as YAML or as JSON: the machine file is built once
// (machine_document) and both `machine.yaml` and `export --format json` are printed from it, so
// the two cannot drift (the JSON once lacked `clocks` and wrote `"132"` for a number).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace roofprobe::doc {

// A JSON string literal: quotes, backslashes and control characters escaped, valid UTF-8 kept,
// invalid bytes replaced by U+FFFD so any JSON parser accepts the result.
std::string quote(const std::string& text);
// `text` with every byte that does not begin valid UTF-8 replaced by U+FFFD, as the writers write
// it: a reader that takes the same bytes holds the strings the writer will write back.
std::string valid_utf8(const std::string& text);
// A JSON number for a measured quantity: the shortest text that reads back to the same double,
// always with a '.' or an exponent (Python's json writes floats that way, and strict readers such
// as pydantic's do not take 900 for a float); null when not finite.
std::string real(double value);

// What a YAML reader (core schema) makes of a plain scalar: a string, an integer, a real, a
// boolean or null. Text values (below) and the golden tests of the exports use it.
enum class ScalarType { String, Integer, Real, Bool, Null };
ScalarType resolve_plain_scalar(const std::string& text);

class Value {
 public:
  enum class Kind { Null, Bool, Integer, Real, String, Text, Array, Object };
  Value() = default;
  static Value null() { return Value(); }
  static Value boolean(bool b);
  static Value integer(long long i);
  static Value number(double d);
  static Value string(std::string s);  // always a string
  // A free-form value kept as text (provenance, device extras, probe parameters): written as is in
  // YAML, and in JSON as what a YAML reader would take it for (`132` a number, `fp64` a string).
  static Value text(std::string s);
  static Value array();
  static Value object();

  Value& push(Value v);                         // arrays
  Value& set(const std::string& key, Value v);  // objects; appends (keys are not deduplicated)
  // Written on one line in YAML ({a: 1, b: 2}, [1, 2]); JSON is unaffected.
  Value& flow() {
    flow_ = true;
    return *this;
  }

  Kind kind() const { return kind_; }
  bool is_flow() const { return flow_; }
  bool as_bool() const { return bool_; }
  long long as_integer() const { return int_; }
  double as_real() const { return real_; }
  const std::string& as_text() const { return text_; }
  const std::vector<std::pair<std::string, Value>>& items() const { return items_; }  // arrays: keys empty
  std::size_t size() const { return items_.size(); }

  // JSON. indent 0: one line; otherwise pretty-printed with that many spaces per level.
  std::string dump(int indent = 0) const;

 private:
  void write(std::string& out, int indent, int depth) const;
  Kind kind_ = Kind::Null;
  bool flow_ = false;
  bool bool_ = false;
  long long int_ = 0;
  double real_ = 0;
  std::string text_;
  std::vector<std::pair<std::string, Value>> items_;
};

// YAML (yaml-cpp's emitter; reals with 10 significant digits, which keeps byte sizes up to 1e10
// exact). Ends with a newline.
std::string to_yaml(const Value& root);

}  // namespace roofprobe::doc
