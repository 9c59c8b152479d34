// SIGINT and SIGTERM (Slurm sends SIGTERM before the wall-time kill) ask a run to stop between
// points: what was measured is fitted and written, marked incomplete, instead of being lost.
#pragma once

namespace roofprobe {

void install_stop_handlers();
// The signal that asked to stop (SIGINT, SIGTERM), or 0.
int stop_requested();
const char* signal_name(int signal);

// A second signal normally ends the run at once. While something must be undone before the
// process ends (a power limit the run set: driver/session/power_caps.hpp), hold_second_signal(true)
// makes it wait: the run stops within a second anyway, and hold_second_signal(false), once that
// is undone, ends the process with the held signal.
void hold_second_signal(bool hold);

}  // namespace roofprobe
