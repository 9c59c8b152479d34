#include "driver/model/yaml_checks.hpp"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "driver/model/errors.hpp"

namespace roofprobe {
namespace {

// One open sequence or mapping, with what its checks need.
struct OpenNode {
  bool is_map = false;
  bool next_is_key = true;              // a mapping's children alternate key, value
  YAML::anchor_t anchor = 0;            // 0: not anchored
  long long expanded_nodes = 1;         // itself plus its children, aliases expanded
  std::map<std::string, int> key_line;  // scalar key -> the line it is first written on
  YAML::Mark mark;                      // where it starts
};

class DocumentChecker : public YAML::EventHandler {
 public:
  explicit DocumentChecker(std::string name) : name_(std::move(name)) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override { leaf(mark, anchor, nullptr, 1); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor, const std::string& value) override {
    if (anchor != 0) anchored_scalar_[anchor] = value;
    leaf(mark, anchor, &value, 1);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    for (const OpenNode& open : open_)
      if (open.anchor == anchor) fail(mark, "an alias refers to a node it is inside (a cycle)");
    const auto size = anchored_size_.find(anchor);
    // An alias of a scalar used as a key is that scalar as a key: `*k: 2` repeats `x:` when k is x.
    const auto scalar = anchored_scalar_.find(anchor);
    leaf(mark, 0, scalar == anchored_scalar_.end() ? nullptr : &scalar->second,
         size == anchored_size_.end() ? 1 : size->second);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    open(mark, anchor, false);
  }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    open(mark, anchor, true);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapEnd() override { close(); }

 private:
  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& what) const {
    throw InputError(name_ + ":" + std::to_string(mark.line + 1) + ": " + what);
  }

  // A new child of the innermost open node takes the next position: in a mapping, keys and
  // values alternate, and its scalar keys must differ.
  void take_position(const YAML::Mark& mark, const std::string* scalar) {
    if (open_.empty() || !open_.back().is_map) return;
    OpenNode& parent = open_.back();
    const bool is_key = parent.next_is_key;
    parent.next_is_key = !parent.next_is_key;
    if (!is_key || scalar == nullptr) return;
    const auto [first, inserted] = parent.key_line.emplace(*scalar, mark.line + 1);
    if (!inserted)
      fail(mark, *scalar + ": written twice in one mapping (first on line " + std::to_string(first->second) + ")");
  }

  // A finished child adds its expanded size to the innermost open node.
  void add_size(const YAML::Mark& mark, long long size) {
    if (open_.empty()) return;
    OpenNode& parent = open_.back();
    parent.expanded_nodes += size;
    if (parent.expanded_nodes > kMaxExpandedYamlNodes)
      fail(mark, "aliases expand the document to more than " + std::to_string(kMaxExpandedYamlNodes) + " nodes");
  }

  void leaf(const YAML::Mark& mark, YAML::anchor_t anchor, const std::string* scalar, long long size) {
    if (anchor != 0) anchored_size_[anchor] = size;
    take_position(mark, scalar);
    add_size(mark, size);
  }

  void open(const YAML::Mark& mark, YAML::anchor_t anchor, bool is_map) {
    take_position(mark, nullptr);
    OpenNode node;
    node.is_map = is_map;
    node.anchor = anchor;
    node.mark = mark;
    open_.push_back(std::move(node));
  }

  void close() {
    const OpenNode done = std::move(open_.back());
    open_.pop_back();
    if (done.anchor != 0) anchored_size_[done.anchor] = done.expanded_nodes;
    add_size(done.mark, done.expanded_nodes);
  }

  std::string name_;
  std::vector<OpenNode> open_;
  std::map<YAML::anchor_t, long long> anchored_size_;
  std::map<YAML::anchor_t, std::string> anchored_scalar_;  // anchors of scalars: their text
};

}  // namespace

void check_yaml_document(const std::string& text, const std::string& name) {
  std::istringstream stream(text);
  YAML::Parser parser(stream);
  DocumentChecker checker(name);
  parser.HandleNextDocument(checker);
}

}  // namespace roofprobe
