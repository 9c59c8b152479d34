// Power facts a backend records in DeviceInfo::extra, by key: the backends write them, the fit and
// the power view read them.
#pragma once

namespace roofprobe {

// The board's power limit in force when the run described the device (W), where the backend can
// read it (NVML's enforced limit). The power view draws it as the line no kernel's power passes,
// and a ceiling throttled by the power cap names it (limited_by: power cap 700 W).
inline constexpr const char* kExtraPowerLimitW = "power_limit_w";

// The limit the user or administrator had set (NVML's management limit, W) when a run with
// --power-caps began: the limit it sets again when it ends (the machine file's
// power_caps.restored_w).
inline constexpr const char* kExtraPowerLimitSetW = "power_limit_set_w";

}  // namespace roofprobe
