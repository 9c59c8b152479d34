// NVML, loaded at run time: the SM clock, board power and clock throttle reasons of the GPU under
// measurement, read while a launch runs. libnvidia-ml.so.1 comes with the NVIDIA driver (as
// libcuda.so.1 does), so it is opened with dlopen rather than linked: a binary built here runs
// where the driver has it and measures without it where it has not (an old driver, a container
// without the library), saying why in device.extra.telemetry.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"

namespace roofprobe::cuda {

class NvmlTelemetry {
 public:
  // The device with this PCI bus id (cudaDeviceGetPCIBusId: NVML and CUDA may number devices
  // differently).
  explicit NvmlTelemetry(const std::string& pci_bus_id);
  ~NvmlTelemetry();
  NvmlTelemetry(const NvmlTelemetry&) = delete;
  NvmlTelemetry& operator=(const NvmlTelemetry&) = delete;

  // Empty when readings work; otherwise why not (no library, no device, no permission).
  const std::string& unavailable_reason() const { return why_not_; }

  // Starts the readings of one launch.
  void begin_launch();
  // One reading of the SM clock and the throttle reasons while the launch runs.
  void sample();
  // The launch's telemetry: the mean SM clock of its readings, the board power now (what
  // nvmlDeviceGetPowerUsage reports: on Ampere and later a one-second average, so it describes
  // the point more than this launch), and every clock-lowering throttle reason seen
  // (throttle.hpp). All 0 / empty when NVML is unavailable.
  LaunchTelemetry end_launch();

  // The board's energy since the driver loaded (nvmlDeviceGetTotalEnergyConsumption, Volta and
  // later; millijoules, updated by the driver at its own interval), joules. nullopt where NVML
  // or the device lacks it; energy_unavailable_reason() then says why.
  std::optional<double> energy_joules();
  const std::string& energy_unavailable_reason() const { return energy_why_not_; }
  // The power limit the driver enforces now (nvmlDeviceGetEnforcedPowerLimit: the lowest of the
  // board's and the administrator's), watts; nullopt where NVML cannot say. Read, never set.
  std::optional<double> power_limit_w() const;
  // Other processes with a compute context on the device now, "pid name" (the name from /proc
  // where this process can see it). NVML names processes by the host's pids: inside a container
  // this process's own pid differs, so when it is not in the list one entry is taken for it.
  // Empty when none, or when NVML cannot say.
  std::vector<std::string> other_compute_processes() const;
  bool knows_processes() const { return api_ != nullptr && has_processes_; }
  // The board's settable power limit (nvml_power_limit.hpp), or nullptr with `why_not` saying
  // why there is none (no NVML, a driver without the entry points).
  std::unique_ptr<PowerLimitControl> power_limit_control(std::string& why_not) const;

 private:
  struct Api;
  Api* api_ = nullptr;
  void* device_ = nullptr;  // nvmlDevice_t
  std::string pci_bus_id_;
  std::string why_not_;
  std::string energy_why_not_;
  bool has_processes_ = false;
  double clock_sum_ = 0;
  int readings_ = 0;
  std::uint64_t throttle_mask_ = 0;
};

}  // namespace roofprobe::cuda
