#include "driver/model/pending_files.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>

namespace roofprobe {

namespace {

// Fixed storage: a signal handler may neither allocate nor take a lock. A slot is filled, then
// marked used; a handler reads only slots marked used.
struct Slot {
  char path[4096];
  volatile pid_t child;
  volatile std::sig_atomic_t used;
};
constexpr int kSlots = 16;
Slot g_slots[kSlots];

extern "C" void on_ending_signal(int signal) {
  remove_pending_files();
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

}  // namespace

PendingFile::PendingFile(const std::string& path, pid_t child) {
  if (path.empty() || path.size() >= sizeof g_slots[0].path) return;
  for (int i = 0; i < kSlots; ++i) {
    if (g_slots[i].used != 0) continue;
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].child = child;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    g_slots[i].used = 1;
    slot_ = i;
    return;
  }
}

void PendingFile::set_child(pid_t child) {
  if (slot_ >= 0) g_slots[slot_].child = child;
}

void PendingFile::child_ended() {
  if (slot_ >= 0) g_slots[slot_].child = 0;
}

PendingFile::~PendingFile() {
  if (slot_ >= 0) g_slots[slot_].used = 0;
}

void remove_pending_files() noexcept {
  for (Slot& slot : g_slots) {
    if (slot.used == 0) continue;
    std::atomic_signal_fence(std::memory_order_seq_cst);
    if (slot.child > 0) {
      // The child may hold the file open and go on writing it: it ends first.
      ::kill(slot.child, SIGKILL);
      int status = 0;
      while (::waitpid(slot.child, &status, 0) < 0 && errno == EINTR) {
      }
    }
    ::unlink(slot.path);
    slot.used = 0;
  }
}

void remove_pending_files_on_signals() {
  struct sigaction action {};
  action.sa_handler = on_ending_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    // A signal the caller's parent set to be ignored (nohup) stays ignored.
    if (::sigaction(signal, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    ::sigaction(signal, &action, nullptr);
  }
}

}  // namespace roofprobe
