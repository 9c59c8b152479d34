// Whether a sweep.csv and the run.yaml, feeds.yaml and machine.yaml beside it are one run's whole
// data, before `roofprobe fit` publishes anything from them. A machine file fitted from a sweep of
// two devices, of another run, or from one still being written would look complete and be wrong.
#pragma once

#include <string>
#include <vector>

#include "driver/model/machine.hpp"
#include "driver/model/sweep.hpp"

namespace roofprobe {

// The device kind a backend's rows measure (run.yaml's device.kind): cuda -> gpu, cpu -> cpu.
std::string kind_of_backend(const std::string& backend);

// The files a run directory holds beside its sweep.csv (any may be absent: a copied sweep).
struct RunRecord {
  const Machine* run_header = nullptr;        // run.yaml
  const std::string* feeds_run_id = nullptr;  // feeds.yaml's run_id ("" when it has none)
  const Machine* run_machine = nullptr;       // machine.yaml the run wrote
  bool writer_holds_lock = false;             // a roofprobe run is writing this directory now
};

struct RunRecordFindings {
  std::vector<std::string> gaps;     // for missing:; any gap makes the machine file incomplete
  std::vector<std::string> carried;  // the finished run's own gaps, for missing: as the run listed them
  std::vector<std::string> notes;    // for stderr ("note: ...")
  // Set when run.yaml records a sustained phase (sustained_seconds above 0) and the sweep has all
  // its planned points but no row of that phase or the energy phase after it: the gap to name
  // when the fit finds a ceiling the phase would have looped (the run may have had none).
  std::string sustained_gap;
};

// Refuses (InputError, one line naming the sweep) rows of two backends or of two MPI ranks, rows
// of another backend than run.yaml's, and a run.yaml / feeds.yaml / machine.yaml of another run
// (their run ids differ). Drops the rows of a point the sweep ends inside (fewer rows than its
// point_samples) and names it under gaps, as it does planned points absent from the sweep and a
// writer that still holds the run's lock. Files written before run ids get a note, not a refusal.
RunRecordFindings check_run_record(const std::string& sweep_path, std::vector<Sample>& samples,
                                   const RunRecord& record);

}  // namespace roofprobe
