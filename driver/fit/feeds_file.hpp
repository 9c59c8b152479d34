// feeds.yaml: how each probe's samples become levels and ceilings (the probes' FeedSpecs, see
// kernels/contract/probe.hpp), written by `run` beside sweep.csv. `fit` reads it, so a recorded
// sweep is re-fitted the way it was declared even by a build without the probes that measured it
// (a GPU sweep fitted on a laptop built without CUDA).
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "kernels/contract/probe.hpp"

namespace roofprobe {

// (backend, probe name) -> the probe's feeds, in declaration order.
using FeedTable = std::map<std::pair<std::string, std::string>, std::vector<FeedSpec>>;

// The feeds of every probe this build registered for `backend` (every backend when empty).
FeedTable registered_feeds(const std::string& backend = {});

// `run_id`: the run the file belongs to (run.yaml's provenance run_id); empty: none written.
std::string feeds_to_yaml(const FeedTable& feeds, const std::string& run_id = std::string());
// Throws InputError "FILE: ..." for a file that is not a feeds file of this schema. `run_id`, when
// given, receives the file's run_id ("" for a file written before run ids).
FeedTable read_feeds_file(const std::string& path, std::string* run_id = nullptr);

}  // namespace roofprobe
