// A progress bar with ETA on stderr, for sweeps that take minutes. Silent when disabled
// (--quiet) or when stderr is not a terminal, so logs and CI output stay clean.
#pragma once

#include <chrono>
#include <string>

namespace roofprobe {

class Progress {
 public:
  Progress(int total, bool enabled);
  void update(int done, const std::string& label);  // redraws the line
  void finish();                                    // clears the line
  bool enabled() const { return enabled_; }
  // "[#####.....]  45/160  0:12 elapsed, ETA 0:42  label" (exposed for tests)
  static std::string render(int done, int total, double elapsed, const std::string& label, int width);

 private:
  int total_;
  bool enabled_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace roofprobe
