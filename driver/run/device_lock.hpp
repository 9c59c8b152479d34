// One lock per device, shared by every roofprobe process of every user on the node: two runs on
// one device would each measure about half of every ceiling and publish it as the device's. A
// GPU is named by its UUID, the CPU by the host. The lock is a file lock (flock) in a fixed
// world-writable directory, /tmp/roofprobe-locks (ROOFPROBE_LOCK_DIR overrides it), sticky like
// /tmp; each lock file (mode 0666) records who holds it: pid, user, start time and run directory.
// The kernel releases the lock when its holder exits, however it exits.
#pragma once

#include <functional>
#include <string>

#include "kernels/contract/probe.hpp"

namespace roofprobe {

// The lock directory: ROOFPROBE_LOCK_DIR, else /tmp/roofprobe-locks.
std::string device_lock_directory();

// The lock's file name for a device: "gpu-<UUID>", else "gpu-<host>-<cuda_device>" for a GPU whose
// UUID is unknown, "cpu-<host>" for the CPU; made safe as a file name.
std::string device_lock_name(const DeviceInfo& device, const std::string& host);

// Who holds a lock, as its file records it.
struct LockHolder {
  long pid = 0;
  std::string user, started, run;
  double held_seconds = 0;       // since `started`
  std::string describe() const;  // "run results/x (pid 4242, user ana, for 35 s)"
};

struct DeviceLockOptions {
  bool wait = true;  // false (--no-wait): refuse at once, naming the run in the way
  std::string run;   // this run's directory, recorded for whoever waits
  // Asked between tries while waiting; true gives up (a stop signal): InputError.
  std::function<bool()> give_up = [] { return false; };
  // One line each time the wait is reported (at its start, then every `report_every` seconds).
  std::function<void(const std::string&)> report;
  double report_every = 30;
};

class DeviceLock {
 public:
  // Takes the lock of `name` (device_lock_name) in device_lock_directory(). Throws InputError:
  // with wait false when another process holds it (naming it), when the wait is given up, or
  // when the directory or file cannot be used safely.
  DeviceLock(const std::string& name, const std::string& what, const DeviceLockOptions& options);
  ~DeviceLock();  // closing the file releases the lock
  DeviceLock(const DeviceLock&) = delete;
  DeviceLock& operator=(const DeviceLock&) = delete;
  const std::string& path() const { return path_; }
  double waited_seconds() const { return waited_; }

 private:
  int fd_ = -1;
  std::string path_;
  double waited_ = 0;
};

// The holder recorded in a lock file, if a process holds that lock now.
bool device_lock_holder(const std::string& name, LockHolder* holder);

}  // namespace roofprobe
