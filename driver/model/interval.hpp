// A 95% confidence interval, as the machine file stores it beside a fitted value.
#pragma once

namespace roofprobe {

// Both bounds 0 when the fit could not give one (a level resting on too few samples, a singular
// covariance).
struct Interval {
  double lo = 0, hi = 0;
  bool known() const { return hi > 0; }
};

}  // namespace roofprobe
