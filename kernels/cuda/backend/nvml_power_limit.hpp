// The GPU's power limit through NVML, as plain C++ over an API object so host tests drive it with
// a fake NVML (tests/unit/power_caps_test.cpp) and no test ever reaches the real
// nvmlDeviceSetPowerManagementLimit. NVML counts the limit in milliwatts.
//
// `Nvml` provides, with NVML's return codes (0: success):
//   int constraints(unsigned* min_mw, unsigned* max_mw)   nvmlDeviceGetPowerManagementLimitConstraints
//   int limit(unsigned* mw)                               nvmlDeviceGetPowerManagementLimit
//   int set_limit(unsigned mw)                            nvmlDeviceSetPowerManagementLimit
//   std::string error_text(int code)                      nvmlErrorString
//   std::string device_id()                               the PCI bus id, as nvidia-smi -i takes it
#pragma once

#include <cmath>
#include <string>
#include <utility>

#include "kernels/contract/power_limit.hpp"

namespace roofprobe::cuda {

inline constexpr int kNvmlNotSupported = 3;  // NVML_ERROR_NOT_SUPPORTED
inline constexpr int kNvmlNoPermission = 4;  // NVML_ERROR_NO_PERMISSION

template <class Nvml>
class NvmlPowerLimit final : public PowerLimitControl {
 public:
  explicit NvmlPowerLimit(Nvml nvml) : nvml_(std::move(nvml)) {}

  PowerLimitRange constraints() override {
    unsigned min_mw = 0, max_mw = 0;
    check(nvml_.constraints(&min_mw, &max_mw), "nvmlDeviceGetPowerManagementLimitConstraints");
    return {min_mw / 1000.0, max_mw / 1000.0};
  }

  double current_w() override {
    unsigned mw = 0;
    check(nvml_.limit(&mw), "nvmlDeviceGetPowerManagementLimit");
    return mw / 1000.0;
  }

  void set_w(double watts) override {
    check(nvml_.set_limit(static_cast<unsigned>(std::llround(watts * 1000.0))), "nvmlDeviceSetPowerManagementLimit");
  }

  // NVML has no query for the right to set the limit: setting it to the value it has already is
  // the one test that asks the driver, and it changes nothing whatever the answer.
  void check_permission() override {
    unsigned mw = 0;
    check(nvml_.limit(&mw), "nvmlDeviceGetPowerManagementLimit");
    check(nvml_.set_limit(mw), "nvmlDeviceSetPowerManagementLimit");
  }

  std::string restore_command(double watts) const override {
    return "nvidia-smi -i " + nvml_.device_id() + " -pl " + std::to_string(std::llround(watts));
  }

 private:
  void check(int code, const char* call) {
    if (code == 0) return;
    const std::string what = std::string(call) + " on GPU " + nvml_.device_id() + ": " + nvml_.error_text(code);
    if (code == kNvmlNoPermission)
      throw PowerLimitError(PowerLimitError::Cause::no_permission,
                            what + " (changing a GPU's power limit needs root, the administrator's right)");
    if (code == kNvmlNotSupported)
      throw PowerLimitError(PowerLimitError::Cause::not_supported, what + " (this GPU has no settable power limit)");
    throw PowerLimitError(PowerLimitError::Cause::failed, what);
  }

  Nvml nvml_;
};

}  // namespace roofprobe::cuda
