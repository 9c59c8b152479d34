#include "kernels/cuda/backend/nvml_telemetry.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

#include "kernels/cuda/backend/nvml_power_limit.hpp"
#include "kernels/cuda/backend/nvml_process_list.hpp"
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
  // The settable power limit (milliwatts); optional, resolved only by roofprobe run --power-caps.
  Return (*limit_constraints)(Device, unsigned int*, unsigned int*) = nullptr;
  Return (*management_limit)(Device, unsigned int*) = nullptr;
  Return (*set_management_limit)(Device, unsigned int) = nullptr;
};

namespace {

template <class F>
bool resolve(void* library, const char* name, F& out) {
  out = reinterpret_cast<F>(dlsym(library, name));
  return out != nullptr;
}

}  // namespace

NvmlTelemetry::NvmlTelemetry(const std::string& pci_bus_id) : pci_bus_id_(pci_bus_id) {
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
  // Optional: a ceiling then names a power cap without its watts.
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

std::optional<double> NvmlTelemetry::power_limit_w() const {
  if (api_ == nullptr || api_->enforced_power_limit == nullptr) return std::nullopt;
  unsigned int milliwatts = 0;
  if (api_->enforced_power_limit(device_, &milliwatts) != 0 || milliwatts == 0) return std::nullopt;
  return milliwatts / 1000.0;
}

std::vector<std::string> NvmlTelemetry::other_compute_processes() const {
  std::vector<std::string> out;
  if (!knows_processes()) return out;
  const NvmlList<Api::ProcessInfo> list = read_nvml_list<Api::ProcessInfo>(
      [&](unsigned int* count, Api::ProcessInfo* entries) { return api_->compute_processes(device_, count, entries); });
  // More processes than NVML would list after every try: a device this busy is not the run's alone.
  if (list.outgrew) return {"(NVML's list of compute processes outgrew every buffer: too many to name)"};
  if (!list.complete) return out;  // NVML refused: unknown, as without the entry point
  const std::vector<Api::ProcessInfo>& infos = list.entries;
  const unsigned int self = static_cast<unsigned int>(::getpid());
  bool self_seen = false;
  for (const Api::ProcessInfo& info : infos) self_seen = self_seen || info.pid == self;
  bool skipped_one = self_seen;  // in another pid namespace: one entry is this process
  for (std::size_t i = 0; i < infos.size(); ++i) {
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

namespace {

// NvmlPowerLimit's API object over the loaded library: one device's three power-limit calls.
struct LoadedNvmlPowerLimit {
  int (*constraints_call)(void*, unsigned*, unsigned*);
  int (*limit_call)(void*, unsigned*);
  int (*set_limit_call)(void*, unsigned);
  const char* (*error_call)(int);
  void* device;
  std::string bus_id;
  int constraints(unsigned* min_mw, unsigned* max_mw) { return constraints_call(device, min_mw, max_mw); }
  int limit(unsigned* mw) { return limit_call(device, mw); }
  int set_limit(unsigned mw) { return set_limit_call(device, mw); }
  std::string error_text(int code) const { return error_call(code); }
  std::string device_id() const { return bus_id; }
};

}  // namespace

std::unique_ptr<PowerLimitControl> NvmlTelemetry::power_limit_control(std::string& why_not) const {
  if (api_ == nullptr) {
    why_not = "NVML unavailable: " + why_not_;
    return nullptr;
  }
  if (!resolve(api_->library, "nvmlDeviceGetPowerManagementLimitConstraints", api_->limit_constraints) ||
      !resolve(api_->library, "nvmlDeviceGetPowerManagementLimit", api_->management_limit) ||
      !resolve(api_->library, "nvmlDeviceSetPowerManagementLimit", api_->set_management_limit)) {
    why_not = "NVML lacks the power-limit functions (driver too old?)";
    return nullptr;
  }
  return std::make_unique<NvmlPowerLimit<LoadedNvmlPowerLimit>>(
      LoadedNvmlPowerLimit{api_->limit_constraints, api_->management_limit, api_->set_management_limit,
                           api_->error_string, device_, pci_bus_id_});
}

}  // namespace roofprobe::cuda
