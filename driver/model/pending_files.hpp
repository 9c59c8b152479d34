// Files roofprobe writes under a temporary name before it renames them into place, removed if a
// signal ends the process first: an interrupted command leaves what was there before, and no
// part of what it was writing.
#pragma once

#include <sys/types.h>

#include <string>

namespace roofprobe {

// While alive, `path` is removed if SIGINT, SIGTERM or SIGHUP ends the process, after `child`
// (when not 0: the process writing it, such as gnuplot) is ended and reaped. At most 16 at once;
// past that, for an empty path, or for a path longer than 4095 bytes, nothing is registered.
class PendingFile {
 public:
  explicit PendingFile(const std::string& path, pid_t child = 0);
  ~PendingFile();
  // The process writing it, once started (register the file before the fork, with the ending
  // signals blocked until this is set, so that no signal finds the child unnamed).
  void set_child(pid_t child);
  // The child was reaped: its process id is no longer its to signal.
  void child_ended();
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

 private:
  int slot_ = -1;
};

// Removes every pending file now. Async-signal-safe: a signal handler's last act before the
// process ends.
void remove_pending_files() noexcept;

// For the commands a signal ends at once (all but run, which stops between points): SIGINT,
// SIGTERM and SIGHUP remove the pending files, then end the process as the signal would have.
void remove_pending_files_on_signals();

}  // namespace roofprobe
