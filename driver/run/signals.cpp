#include "driver/run/signals.hpp"

#include <csignal>

#include "driver/model/pending_files.hpp"

namespace roofprobe {

namespace {
volatile std::sig_atomic_t g_stop_signal = 0;
volatile std::sig_atomic_t g_hold_second = 0;
volatile std::sig_atomic_t g_held_signal = 0;

extern "C" void on_stop_signal(int signal) {
  // A second signal while stopping means "now": restore the default and re-raise (once the run
  // has undone what it must, while held).
  if (g_stop_signal != 0 && g_hold_second != 0) {
    g_held_signal = signal;
    return;
  }
  if (g_stop_signal != 0) {
    remove_pending_files();
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  g_stop_signal = signal;
}
}  // namespace

void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int stop_requested() { return static_cast<int>(g_stop_signal); }

void hold_second_signal(bool hold) {
  g_hold_second = hold ? 1 : 0;
  if (!hold && g_held_signal != 0) {
    const int signal = static_cast<int>(g_held_signal);
    remove_pending_files();
    std::signal(signal, SIG_DFL);
    std::raise(signal);
  }
}

const char* signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    default:
      return "signal";
  }
}

}  // namespace roofprobe
