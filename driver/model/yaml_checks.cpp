#include "driver/model/yaml_checks.hpp"

#include <map>
#include <utility>
#include <vector>

#include "driver/model/errors.hpp"

namespace roofprobe {

void reject_duplicate_keys(const YAML::Node& root, const std::string& name) {
  constexpr std::size_t kMaxVisits = 200000;  // far above any real config or machine file
  std::vector<YAML::Node> stack{root};
  std::size_t visits = 0;
  while (!stack.empty() && ++visits < kMaxVisits) {
    const YAML::Node node = stack.back();
    stack.pop_back();
    if (node.IsMap()) {
      std::map<std::string, int> first_line;
      for (const auto& kv : node) {
        if (kv.first.IsScalar()) {
          const int line = kv.first.Mark().line + 1;
          const auto [it, inserted] = first_line.emplace(kv.first.Scalar(), line);
          if (!inserted)
            throw InputError(name + ":" + std::to_string(line) + ": " + kv.first.Scalar() +
                             ": written twice in one mapping (first on line " + std::to_string(it->second) + ")");
        }
        stack.push_back(kv.second);
      }
    } else if (node.IsSequence()) {
      for (const auto& item : node) stack.push_back(item);
    }
  }
}

}  // namespace roofprobe
