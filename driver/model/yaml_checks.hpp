// Checks yaml-cpp does not make: it loads a mapping with a key written twice and lookups then
// return one of them silently, so a typo-free but duplicated setting would win or lose unseen.
#pragma once

#include <yaml-cpp/yaml.h>

#include <string>

namespace roofprobe {

// Throws InputError "NAME:LINE: KEY: written twice in one mapping (first on line N)" for the first
// mapping that has a scalar key twice. Walks at most a bounded number of nodes (aliases can make
// a small document a huge graph: other checks refuse those).
void reject_duplicate_keys(const YAML::Node& root, const std::string& name);

}  // namespace roofprobe
