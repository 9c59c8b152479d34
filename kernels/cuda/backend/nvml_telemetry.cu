#include "kernels/cuda/backend/nvml_telemetry.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <fstream>

#include "kernels/cuda/backend/throttle.hpp"

namespace roofprobe::cuda {

// The few NVML entry points used, declared by their documented C signatures (nvml.h is not part
// of every toolkit install; the ABI of these functions has been stable since NVML 5).
struct NvmlTelemetry::Api {
  using Return = int;  // nvmlReturn_t: 0 is NVML_SUCCESS
  using Device = void*;
  static constexpr int kClockSm = 1;  // NVML_CLOCK_SM
  void* library = nullptr;
  Return (*init)() = nullptr;
  Return (*shutdown)() = nullptr;
  const char* (*error_string)(Return) = nullptr;
  Return (*handle_by_pci_bus_id)(const char*, Device*) = nullptr;
  Return (*clock_info)(Device, int, unsigned int*) = nullptr;
  Return (*power_usage)(Device, unsigned int*) = nullptr;  // milliwatts
  Return (*throttle_reasons)(Device, unsigned long long*) = nullptr;
  Return (*total_energy)(Device, unsigned long long*) = nullptr;    // millijoules; optional (Volta+)
  Return (*enforced_power_limit)(Device, unsigned int*) = nullptr;  // milliwatts; optional
  // nvmlProcessInfo_v1_t, what the unversioned nvmlDeviceGetComputeRunningProcesses fills.
  struct ProcessInfo {
    unsigned int pid;
    unsigned long long used_gpu_memory;
  };
  Return (*compute_processes)(Device, unsigned int*, ProcessInfo*) = nullptr;  // optional
};

namespace {

template <class F>
bool resolve(void* library, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(library, name));
  return out != nullptr;
}

}  // namespace

NvmlTelemetry::NvmlTelemetry(const std::string& pci_bus_id) {
  auto* api = new Api;
  api->library = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (api->library == nullptr) {
    why_not_ = std::string("NVML not loaded: ") + dlerror();
    delete api;
    return;
  }
  // Newer NVML names the throttle reasons "clocks event reasons"; the old name stays exported.
  const bool resolved = resolve(api->library, "nvmlInit_v2", api->init) &&
                        resolve(api->library, "nvmlShutdown", api->shutdown) &&
                        resolve(api->library, "nvmlErrorString", api->error_string) &&
                        resolve(api->library, "nvmlDeviceGetHandleByPciBusId_v2", api->handle_by_pci_bus_id) &&
                        resolve(api->library, "nvmlDeviceGetClockInfo", api->clock_info) &&
                        resolve(api->library, "nvmlDeviceGetPowerUsage", api->power_usage) &&
                        (resolve(api->library, "nvmlDeviceGetCurrentClocksEventReasons", api->throttle_reasons) ||
                         resolve(api->library, "nvmlDeviceGetCurrentClocksThrottleReasons", api->throttle_reasons));
  if (!resolved) {
    why_not_ = "NVML lacks a function roofprobe reads (driver too old?)";
    dlclose(api->library);
    delete api;
    return;
  }
  if (const Api::Return r = api->init(); r != 0) {
    why_not_ = std::string("nvmlInit: ") + api->error_string(r);
    dlclose(api->library);
    delete api;
    return;
  }
  Api::Device device = nullptr;
  if (const Api::Return r = api->handle_by_pci_bus_id(pci_bus_id.c_str(), &device); r != 0) {
    why_not_ = "NVML has no device at PCI " + pci_bus_id + ": " + api->error_string(r);
    api->shutdown();
    dlclose(api->library);
    delete api;
    return;
  }
  // Optional: without it the run cannot see other processes on the device, and says nothing.
  has_processes_ = resolve(api->library, "nvmlDeviceGetComputeRunningProcesses", api->compute_processes);
  api_ = api;
  device_ = device;
  // Optional: the power view draws the limit where it is known.
  resolve(api->library, "nvmlDeviceGetEnforcedPowerLimit", api->enforced_power_limit);
  // Optional: the other readings work without it.
  if (!resolve(api->library, "nvmlDeviceGetTotalEnergyConsumption", api->total_energy))
    energy_why_not_ = "NVML has no nvmlDeviceGetTotalEnergyConsumption (driver too old)";
  else if (unsigned long long mj = 0; const Api::Return r = api->total_energy(device, &mj))
    energy_why_not_ = std::string("nvmlDeviceGetTotalEnergyConsumption: ") + api->error_string(r) +
                      " (the energy counter needs Volta or later)";
}

NvmlTelemetry::~NvmlTelemetry() {
  if (api_ == nullptr) return;
  api_->shutdown();
  dlclose(api_->library);
  delete api_;
}

void NvmlTelemetry::begin_launch() {
  clock_sum_ = 0;
  readings_ = 0;
  throttle_mask_ = 0;
}

void NvmlTelemetry::sample() {
  if (api_ == nullptr) return;
  unsigned int mhz = 0;
  if (api_->clock_info(device_, Api::kClockSm, &mhz) == 0 && mhz > 0) {
    clock_sum_ += mhz;
    ++readings_;
  }
  unsigned long long reasons = 0;
  if (api_->throttle_reasons(device_, &reasons) == 0) throttle_mask_ |= reasons;
}

std::optional<double> NvmlTelemetry::energy_joules() {
  if (api_ == nullptr || !energy_why_not_.empty()) return std::nullopt;
  unsigned long long millijoules = 0;
  if (api_->total_energy(device_, &millijoules) != 0) return std::nullopt;
  return static_cast<double>(millijoules) * 1e-3;
}

std::optional<double> NvmlTelemetry::enforced_power_limit_w() const {
  if (api_ == nullptr || api_->enforced_power_limit == nullptr) return std::nullopt;
  unsigned int milliwatts = 0;
  if (api_->enforced_power_limit(device_, &milliwatts) != 0 || milliwatts == 0) return std::nullopt;
  return milliwatts / 1000.0;
}

LaunchTelemetry NvmlTelemetry::end_launch() {
  LaunchTelemetry t;
  if (api_ == nullptr) return t;
  if (readings_ == 0) sample();  // a launch shorter than one reading: the state right after it
  if (readings_ > 0) t.clock_mhz = clock_sum_ / readings_;
  unsigned int milliwatts = 0;
  if (api_->power_usage(device_, &milliwatts) == 0) t.power_w = milliwatts / 1000.0;
  t.throttle = throttle_text(throttle_mask_);
  return t;
}

std::vector<std::string> NvmlTelemetry::other_compute_processes() const {
  std::vector<std::string> out;
  if (!knows_processes()) return out;
  Api::ProcessInfo infos[64];
  unsigned int count = 64;
  if (api_->compute_processes(device_, &count, infos) != 0) return out;
  const unsigned int self = static_cast<unsigned int>(::getpid());
  bool self_seen = false;
  for (unsigned int i = 0; i < count && i < 64; ++i) self_seen = self_seen || infos[i].pid == self;
  bool skipped_one = self_seen;  // in another pid namespace: one entry is this process
  for (unsigned int i = 0; i < count && i < 64; ++i) {
    if (infos[i].pid == self) continue;
    if (!skipped_one) {
      skipped_one = true;
      continue;
    }
    std::ifstream comm("/proc/" + std::to_string(infos[i].pid) + "/comm");
    std::string name;
    std::getline(comm, name);
    out.push_back(std::to_string(infos[i].pid) + " " + (name.empty() ? std::string("(name not visible)") : name));
  }
  return out;
}

}  // namespace roofprobe::cuda
