#include "driver/fit/run_record.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include "driver/model/errors.hpp"
#include "driver/model/units.hpp"

namespace roofprobe {

std::string kind_of_backend(const std::string& backend) { return backend == "cuda" ? "gpu" : backend; }

RunRecordFindings check_run_record(const std::string& sweep_path, std::vector<Sample>& samples,
                                   const RunRecord& record) {
  RunRecordFindings out;
  std::set<std::string> backends;
  std::set<int> ranks;
  for (const Sample& s : samples) {
    backends.insert(s.backend);
    ranks.insert(s.rank);
  }
  if (backends.size() > 1)
    throw InputError(sweep_path + ": rows of two backends (" + *backends.begin() + " and " + *backends.rbegin() +
                     "): a sweep holds one device's run; fit each run's own sweep.csv");
  if (ranks.size() > 1)
    throw InputError(sweep_path + ": rows of two MPI ranks (" + std::to_string(*ranks.begin()) + " and " +
                     std::to_string(*ranks.rbegin()) +
                     "): a sweep holds one device's run; fit each rank's own DIR/rank-R/sweep.csv");
  const std::string backend = backends.empty() ? std::string() : *backends.begin();
  // Each sample of a run is one row: a row twice is two runs' rows in one file, or one file
  // appended to itself, and fitted as they are it would double the samples and narrow every
  // interval.
  std::set<std::tuple<std::string, int, int>> seen;
  for (const Sample& s : samples)
    if (!seen.insert({s.phase, s.point, s.sample}).second)
      throw InputError(sweep_path + ": point " + std::to_string(s.point) + " sample " + std::to_string(s.sample) +
                       (s.phase.empty() ? std::string() : " of phase " + s.phase) +
                       " is in it twice: rows of two runs, or a file appended to itself; a sweep holds each "
                       "sample of one run once");

  const std::string run_id = provenance_of(record.run_header, "run_id");
  if (record.run_header != nullptr) {
    const std::string recorded = provenance_of(record.run_header, "backend");
    const std::string kind = record.run_header->device.kind;
    // The device kind follows from the backend (a cpu run is of a cpu): a run.yaml that says
    // otherwise was edited, and its kind would rename the levels and units the fit gives.
    if (!recorded.empty() && !kind.empty() && kind != kind_of_backend(recorded))
      throw InputError(sweep_path + ": run.yaml beside it is a " + recorded + " run of a device of kind '" + kind +
                       "' (a " + recorded + " run measures a " + kind_of_backend(recorded) +
                       "): the record was edited");
    if ((!recorded.empty() && recorded != backend) ||
        (recorded.empty() && !kind.empty() && kind != kind_of_backend(backend)))
      throw InputError(sweep_path + ": its rows are of the " + backend + " backend, but run.yaml beside it is a " +
                       (recorded.empty() ? kind : recorded) + " run of '" + record.run_header->device.name +
                       "': the sweep belongs to another run");
    if (run_id.empty()) out.notes.push_back("run.yaml has no run id (written by an older roofprobe): not checked");
  }
  if (record.feeds_run_id != nullptr && !record.feeds_run_id->empty() && !run_id.empty() &&
      *record.feeds_run_id != run_id)
    throw InputError(sweep_path + ": feeds.yaml beside it is of run " + *record.feeds_run_id + ", run.yaml of run " +
                     run_id + ": the files belong to two runs");
  const std::string machine_id = provenance_of(record.run_machine, "run_id");
  const bool same_run_machine = record.run_machine != nullptr && !run_id.empty() && machine_id == run_id;

  // A point the sweep ends inside: fewer rows than its point_samples. The sweep's samples of a
  // point and each phase's windows of it are counted apart.
  using PhasePoint = std::pair<std::string, int>;
  std::map<PhasePoint, std::pair<int, int>> rows;  // (phase, point) -> (rows, point_samples)
  std::map<PhasePoint, std::string> labels;
  for (const Sample& s : samples) {
    auto& r = rows[{s.phase, s.point}];
    ++r.first;
    r.second = std::max(r.second, s.point_samples);
    labels.emplace(PhasePoint{s.phase, s.point},
                   s.probe + " " + params_to_string(s.params) + (s.phase.empty() ? "" : " (" + s.phase + ")"));
  }
  std::set<PhasePoint> torn;
  for (const auto& [key, r] : rows)
    if (r.second > 0 && r.first < r.second) {
      torn.insert(key);
      out.gaps.push_back(labels[key] + ": the sweep ends inside this point (" + std::to_string(r.first) + " of " +
                         std::to_string(r.second) + " samples); its samples are not fitted");
    }
  if (!torn.empty()) {
    std::vector<Sample> whole;
    for (Sample& s : samples)
      if (!torn.count({s.phase, s.point})) whole.push_back(std::move(s));
    samples = std::move(whole);
  }

  // Points measured beside another process's load (flagged by the run): named, never clean
  // (the run's own machine.yaml names them already when its gaps carry over, below).
  const bool carry_over = same_run_machine && !provenance_of(record.run_machine, "finished").empty();
  if (!carry_over)
    for (const std::string& gap : foreign_load_gaps(samples)) out.gaps.push_back(gap);
  if (record.writer_holds_lock)
    out.gaps.push_back(
        "the run is still being written (a roofprobe process holds its lock): fitted from the "
        "sweep as it was");
  // Planned points absent from the sweep: the run ended early, unless the run's own finished
  // machine.yaml accounts for them (failures, points that did not fit), in which case its
  // completeness and its gaps carry over.
  const std::string planned_text = provenance_of(record.run_header, "planned_points");
  if (carry_over) {
    if (!record.run_machine->complete)
      out.gaps.push_back("the run that wrote this sweep was incomplete (its machine.yaml says complete: false)");
    // The run's own gaps (failures, skipped points, the sustained phase's), not the notes of its
    // fit, which this fit writes afresh: the run counts them (provenance run_gaps); a file from
    // before that count carries every entry.
    std::size_t own = record.run_machine->missing.size();
    const std::string counted = provenance_of(record.run_machine, "run_gaps");
    if (!counted.empty()) own = std::min<std::size_t>(own, std::strtoul(counted.c_str(), nullptr, 10));
    out.carried.assign(record.run_machine->missing.begin(), record.run_machine->missing.begin() + own);
  } else if (!planned_text.empty()) {
    // The plan's points are the sweep's own (no phase); the phases' windows are counted apart.
    const long planned = std::strtol(planned_text.c_str(), nullptr, 10);
    long measured = 0;
    bool any_phase = false;  // the sustained phase's rows, or the energy phase's after it
    for (const auto& [key, r] : rows) {
      measured += key.first.empty() && !torn.count(key) ? 1 : 0;
      any_phase |= !key.first.empty();
    }
    if (measured < planned)
      out.gaps.push_back(std::to_string(planned - measured) + " of " + std::to_string(planned) +
                         " planned points are not in the sweep (the run ended early, or has not finished)");
    if (measured > planned)
      throw InputError(sweep_path + ": " + std::to_string(measured) + " points, but run.yaml beside it planned " +
                       std::to_string(planned) + ": the sweep is not that run's");
    const std::string sustained_text = provenance_of(record.run_header, "sustained_seconds");
    if (measured >= planned && !any_phase && std::strtod(sustained_text.c_str(), nullptr) > 0)
      out.sustained_gap = "the sustained phase (run.yaml: sustained_seconds " + sustained_text +
                          ") has no rows in the sweep: the run ended before it, or has not finished; no sustained "
                          "figure";
  } else if (record.run_header != nullptr) {
    out.notes.push_back("run.yaml does not say how many points were planned: the sweep's length is not checked");
  }
  return out;
}

}  // namespace roofprobe
