// A device's settable power limit (roofprobe run --power-caps): the ceilings move under a cap, so
// the run re-measures some of them under each limit the user names. The limit is a machine-wide
// setting that outlives the process, so a backend only offers the control and the run (driver/
// session/power_caps.hpp) decides when to set it and restores it on every exit it can catch.
#pragma once

#include <stdexcept>
#include <string>

namespace roofprobe {

// The limits the device accepts, watts, inclusive.
struct PowerLimitRange {
  double min_w = 0;
  double max_w = 0;
};

// Why the device refused to read or change its limit.
class PowerLimitError : public std::runtime_error {
 public:
  enum class Cause {
    no_permission,  // the driver lets only root (the administrator) change the limit
    not_supported,  // the device or driver has no settable limit
    failed,         // any other refusal (the text says which)
  };
  PowerLimitError(Cause cause, const std::string& what) : std::runtime_error(what), cause_(cause) {}
  Cause cause() const { return cause_; }

 private:
  Cause cause_;
};

// One device's power limit. Every call may throw PowerLimitError.
class PowerLimitControl {
 public:
  virtual ~PowerLimitControl() = default;
  virtual PowerLimitRange constraints() = 0;
  // The limit the user (or the administrator) set, watts: what a run restores.
  virtual double current_w() = 0;
  virtual void set_w(double watts) = 0;
  // Fails with no_permission, before anything is measured, where the user may not change the
  // limit; it leaves the limit as it is.
  virtual void check_permission() = 0;
  // The shell command that sets the limit back to `watts` by hand (after a SIGKILL).
  virtual std::string restore_command(double watts) const = 0;
};

}  // namespace roofprobe
