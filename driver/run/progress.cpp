#include "driver/run/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace roofprobe {

namespace {
std::string clock_text(double seconds) {
  int s = static_cast<int>(seconds + 0.5);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%d:%02d", s / 60, s % 60);
  return buf;
}
}  // namespace

Progress::Progress(int total, bool enabled)
    : total_(total), enabled_(enabled && isatty(STDERR_FILENO)), start_(std::chrono::steady_clock::now()) {}

std::string Progress::render(int done, int total, double elapsed, const std::string& label, int width) {
  int filled = total > 0 ? width * done / total : width;
  std::string bar(static_cast<std::size_t>(filled), '#');
  bar.append(static_cast<std::size_t>(width - filled), '.');
  char counts[64];
  std::snprintf(counts, sizeof counts, "%*d/%d", static_cast<int>(std::to_string(total).size()), done, total);
  std::string eta = done > 0 ? clock_text(elapsed / done * (total - done)) : "?";
  return "[" + bar + "] " + counts + "  " + clock_text(elapsed) + " elapsed, ETA " + eta + "  " + label;
}

void Progress::update(int done, const std::string& label) {
  if (!enabled_) return;
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string line = render(done, total_, elapsed, label, 30);
  if (line.size() > 118) line.resize(118);
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

void Progress::finish() {
  if (!enabled_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace roofprobe
