// Checks yaml-cpp does not make. It loads a mapping with a key written twice, and lookups then
// return one of them silently, so a duplicated setting would win or lose unseen. It also loads an
// alias inside its own anchor (`a: &s {b: *s}`) as a cyclic graph, and nested aliases as a graph
// that expands exponentially: any later walk of the tree then runs forever.
#pragma once

#include <string>

namespace roofprobe {

// Reads the first document of `text` as a stream of parser events, so its cost is linear in the
// text whatever the aliases do, and throws InputError naming NAME:LINE for the first of:
//   - a mapping with a scalar key twice ("written twice in one mapping (first on line N)");
//   - an alias used inside the node it names (a cycle);
//   - aliases that expand the document to more than kMaxExpandedYamlNodes nodes.
// Call it on text YAML::Load accepted, before anything walks the loaded tree.
void check_yaml_document(const std::string& text, const std::string& name);

// Far above any real config (~100 nodes) or machine file (~10^4 for a large fleet).
inline constexpr long long kMaxExpandedYamlNodes = 1000000;

}  // namespace roofprobe
