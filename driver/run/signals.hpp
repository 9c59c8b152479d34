// SIGINT and SIGTERM (Slurm sends SIGTERM before the wall-time kill) ask a run to stop between
// points: what was measured is fitted and written, marked incomplete, instead of being lost.
#pragma once

namespace roofprobe {

void install_stop_handlers();
// The signal that asked to stop (SIGINT, SIGTERM), or 0.
int stop_requested();
const char* signal_name(int signal);

}  // namespace roofprobe
