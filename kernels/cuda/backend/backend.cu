// The CUDA backend: describes the selected GPU (ROOFPROBE_CUDA_DEVICE, default 0), measures its
// SM clock, derives the theoretical FP64/FP32 peaks at that clock, and times launches with CUDA
// events.
//
// Only APIs present in CUDA 11.8 are used, so V100 users (sm_70, dropped by CUDA 13) can build
// with an older toolkit (green contexts, green_context.cu, are compiled in from CUDA 12.5 on); clocks come from
// cudaDeviceGetAttribute because CUDA 13 removed cudaDeviceProp::clockRate and ::memoryClockRate.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "kernels/cuda/backend/gpu_arch.hpp"
#include "kernels/contract/device_power.hpp"
#include "kernels/contract/probe.hpp"
#include "kernels/cuda/backend/cuda_support.hpp"
#include "kernels/cuda/backend/green_context.hpp"
#include "kernels/cuda/backend/nvml_telemetry.hpp"
#include "kernels/cuda/backend/sm_partition.hpp"

namespace roofprobe::cuda {
namespace {

// Spins until `cycles` SM clocks have passed, then records how many really passed. One block
// per SM so the whole chip is awake (the clock of a mostly idle GPU can differ from a busy one).
__global__ void spin_kernel(long long cycles, long long* elapsed) {
  const long long start = clock64();
  long long now = start;
  while (now - start < cycles) now = clock64();
  if (blockIdx.x == 0 && threadIdx.x == 0) *elapsed = now - start;
}

// Two CUDA events, destroyed on scope exit even when a check throws.
class EventPair {
 public:
  EventPair() {
    RP_CUDA_CHECK(cudaEventCreate(&start_));
    try {
      RP_CUDA_CHECK(cudaEventCreate(&stop_));
    } catch (...) {
      cudaEventDestroy(start_);
      throw;
    }
  }
  ~EventPair() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  cudaEvent_t start() const { return start_; }
  cudaEvent_t stop() const { return stop_; }
  // Seconds between the two records, after waiting for the stop event.
  double seconds() const {
    RP_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    RP_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms * 1e-3;
  }

 private:
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

int attribute(cudaDeviceAttr attr, int device) {
  int value = 0;
  RP_CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
  return value;
}

std::string version_text(int v) {  // 12040 -> "12.4"
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string mib(std::uint64_t bytes) { return std::to_string(bytes / (1024 * 1024)) + " MiB"; }

std::string fmt(double v, int digits = 1) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}

// Fills theoretical_gflops/basis for FP64/FP32 x FMA/noFMA at the measured clock.
void add_theoretical_peaks(DeviceInfo& info, const GpuArchFigures& arch, const std::string& cc) {
  struct Precision {
    const char* name;
    int lanes;
  };
  const Precision precisions[] = {{"FP64", arch.fp64_lanes_per_sm}, {"FP32", arch.fp32_lanes_per_sm}};
  const double mhz = info.clock_measured_mhz > 0 ? info.clock_measured_mhz : info.clock_max_mhz;
  const char* clock_kind = info.clock_measured_mhz > 0 ? "measured" : "nominal";
  for (const Precision& p : precisions) {
    for (bool fma : {true, false}) {
      const std::string name = std::string(p.name) + (fma ? ".FMA" : ".noFMA");
      if (p.lanes == 0 || mhz <= 0) {
        // The row's own reason where it has one (B300's FP64, Thor), else the generic one.
        say_peak_unknown(info, name,
                         mhz <= 0                  ? "the device reported no SM clock"
                         : arch.unknown[0] != '\0' ? std::string(arch.unknown)
                                                   : "no per-SM lane figure for compute capability " + cc);
        continue;
      }
      info.theoretical_gflops[name] = gpu_peak_gflops(info.compute_units, p.lanes, mhz, fma);
      info.theoretical_basis[name] = std::to_string(info.compute_units) + " SMs x " + std::to_string(p.lanes) + " " +
                                     p.name + " lanes/SM (cc " + cc + ", " + arch.family + ") x " +
                                     (fma ? "2 FLOP/FMA" : "1 FLOP/op") + " x " + fmt(mhz) + " MHz (" + clock_kind +
                                     " SM clock)";
    }
  }
}

class CudaBackend final : public Backend {
 public:
  std::string name() const override { return "cuda"; }

  std::string unavailable_reason() const override {
    int count = 0;
    const cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
      cudaGetLastError();  // clear the error so later calls do not report it again
      return std::string("no CUDA device: ") + cudaGetErrorString(err);
    }
    if (count == 0) return "no CUDA device: cudaGetDeviceCount found none";
    try {
      const int device = selected_device();
      if (device >= count) {
        return "no CUDA device: ROOFPROBE_CUDA_DEVICE=" + std::to_string(device) + " but only " +
               std::to_string(count) + " device(s) are visible";
      }
    } catch (const std::exception& e) {
      return std::string("no CUDA device: ") + e.what();
    }
    return {};
  }

  // Device properties only: cudaSetDevice would create the primary context (CUDA 12 and later),
  // which another run's NVML check lists as a foreign compute process; a property query needs none.
  DeviceInfo identify() override {
    const int device = selected_device();
    cudaDeviceProp prop{};
    RP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    DeviceInfo info;
    info.backend = "cuda";
    info.kind = "gpu";
    info.vendor = "NVIDIA";
    info.name = prop.name;
    info.extra[kExtraDeviceIndex] = std::to_string(device);
    // The GPU's UUID as nvidia-smi prints it: its device lock's name (driver/run/device_lock.hpp),
    // the same for every process whatever CUDA_VISIBLE_DEVICES renumbers.
    info.extra["uuid"] = uuid_text(prop);
    return info;
  }

  // Who the device is (identify), then what it has: the context, caches, memory, clocks, peaks.
  DeviceInfo describe(int /*threads: CPU only*/) override {
    DeviceInfo info = identify();
    const int device = selected_device();
    RP_CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop{};
    RP_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    info.compute_units = prop.multiProcessorCount;
    info.compute_unit_name = "multiprocessors";
    info.memory_bytes = prop.totalGlobalMem;
    info.clock_max_mhz = attribute(cudaDevAttrClockRate, device) / 1000.0;  // kHz -> MHz

    const std::string cc = std::to_string(prop.major) + "." + std::to_string(prop.minor);
    const GpuArchFigures arch = gpu_arch_figures(prop.major, prop.minor);
    add_caches(info, prop, arch, cc);
    add_memory(info, device);
    add_extra(info, prop, arch, cc, device);

    open_telemetry(device);
    info.extra["telemetry"] = telemetry_->unavailable_reason().empty()
                                  ? "NVML: SM clock, board power and throttle reasons during every launch"
                                  : "none: " + telemetry_->unavailable_reason();
    // What a ceiling throttled by sw-power was capped at (driver/fit: limited_by).
    if (const std::optional<double> cap = telemetry_->power_limit_w()) info.extra[kExtraPowerLimitW] = fmt(*cap, 0);
    info.clock_measured_mhz = measure_clock_mhz();
    add_theoretical_peaks(info, arch, cc);
    // Each probe adds the peaks only it knows (FP16/BF16/INT32, tensor shapes, ...).
    for (const Probe* probe : Registry::instance().probes("cuda")) probe->add_theoretical_peaks(info);
    return info;
  }

  // The launch is timed by its events; while it runs, NVML is read every ~0.2 ms (clock, throttle
  // reasons): the host waits for the stop event anyway, and a reading costs the GPU nothing.
  double time_launch(PreparedPoint& point) override {
    if (!telemetry_) open_telemetry(selected_device());
    EventPair events;
    RP_CUDA_CHECK(cudaEventRecord(events.start()));
    point.launch();
    RP_CUDA_CHECK(cudaEventRecord(events.stop()));
    RP_CUDA_CHECK(cudaGetLastError());  // a launch the runtime refused
    telemetry_->begin_launch();
    // "Not ready" is no error, but clear it so no later check can take it for one; any other
    // answer ends the loop, and a fault surfaces in events.seconds().
    while (cudaEventQuery(events.stop()) == cudaErrorNotReady) {
      (void)cudaGetLastError();
      telemetry_->sample();
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const double s = events.seconds();
    RP_CUDA_CHECK(cudaGetLastError());  // an error raised inside the kernel
    last_telemetry_ = telemetry_->end_launch();
    return s;
  }

  LaunchTelemetry last_launch_telemetry() const override { return last_telemetry_; }

  std::optional<double> energy_joules() override {
    if (!telemetry_) open_telemetry(selected_device());
    return telemetry_->energy_joules();
  }
  EnergyCounterInfo energy_counter() const override {
    if (!telemetry_) return {false, "", "NVML not opened yet (describe the device first)"};
    const std::string& why = telemetry_->unavailable_reason().empty() ? telemetry_->energy_unavailable_reason()
                                                                      : telemetry_->unavailable_reason();
    if (!why.empty()) return {false, "", why};
    return {true, "NVML total energy (board)", ""};
  }

  // Other compute processes on this GPU (NVML): any is foreign use of the device.
  ForeignUse foreign_use() override {
    ForeignUse use;
    if (!telemetry_) open_telemetry(selected_device());
    if (!telemetry_->knows_processes()) return use;
    use.known = true;
    use.processes = telemetry_->other_compute_processes();
    return use;
  }

  // Cycles counted by clock64() on the SMs over the event time of the same launch. ~20 ms of
  // spinning makes the launch overhead (a few microseconds) negligible; a first, shorter spin
  // wakes the GPU from its idle clocks.
  double measure_clock_mhz() override {
    const int device = selected_device();
    RP_CUDA_CHECK(cudaSetDevice(device));
    const int sms = attribute(cudaDevAttrMultiProcessorCount, device);
    double nominal_khz = attribute(cudaDevAttrClockRate, device);
    if (nominal_khz <= 0) nominal_khz = 1.5e6;  // not reported: any plausible clock will do
    const long long cycles = static_cast<long long>(nominal_khz * 1e3 * 0.020);

    DeviceBuffer<long long> elapsed(1);
    spin_kernel<<<sms, 32>>>(cycles / 4, elapsed.get());
    RP_CUDA_CHECK(cudaGetLastError());
    RP_CUDA_CHECK(cudaDeviceSynchronize());

    EventPair events;
    RP_CUDA_CHECK(cudaEventRecord(events.start()));
    spin_kernel<<<sms, 32>>>(cycles, elapsed.get());
    RP_CUDA_CHECK(cudaGetLastError());
    RP_CUDA_CHECK(cudaEventRecord(events.stop()));
    const double seconds = events.seconds();
    long long counted = 0;
    RP_CUDA_CHECK(cudaMemcpy(&counted, elapsed.get(), sizeof counted, cudaMemcpyDeviceToHost));
    return seconds > 0 ? static_cast<double>(counted) / seconds * 1e-6 : 0.0;
  }

  PowerLimitControl* power_limit_control(std::string& why_not) override {
    if (!telemetry_) open_telemetry(selected_device());
    if (!power_limit_) power_limit_ = telemetry_->power_limit_control(why_not);
    return power_limit_.get();
  }

  // SMs as the driver's split grants them to a green context; 0 where it cannot. The split is
  // read without a context, so the count is the one confine() gets; where the driver cannot
  // split, the device's own rule (granted_sms) stands in, and confine() then says why.
  int confinable_workers(int wanted) override {
    if (!partitioning_) partitioning_ = sm_partitioning(selected_device());
    const SmPartitioning& p = *partitioning_;
    if (p.total <= 0 || wanted <= 0) return 0;
    if (wanted >= p.total) return p.total;
    auto known = granted_.find(wanted);
    if (known != granted_.end()) return known->second;
    int k = 0;
    try {
      k = split_sms(selected_device(), wanted);
    } catch (const std::exception&) {
      k = granted_sms(wanted, p.total, p.min_partition, p.alignment);
    }
    return granted_[wanted] = std::min(std::max(k, wanted), p.total);
  }
  std::unique_ptr<Confinement> confine(int workers) override { return confine_to_sms(selected_device(), workers); }

  // After a sticky error the context is gone: destroy it (cudaDeviceReset) and prove the device
  // works again with an allocation and a short kernel. Buffers of the faulted point were freed
  // before this is called; any other live allocation of this process is invalid afterwards.
  bool recover() override {
    try {
      const int device = selected_device();
      if (cudaDeviceReset() != cudaSuccess) return false;
      RP_CUDA_CHECK(cudaSetDevice(device));
      DeviceBuffer<long long> probe(1);
      spin_kernel<<<1, 32>>>(1000, probe.get());
      RP_CUDA_CHECK(cudaGetLastError());
      RP_CUDA_CHECK(cudaDeviceSynchronize());
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

 private:
  void open_telemetry(int device) {
    char bus_id[32] = {};
    RP_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    power_limit_.reset();
    telemetry_ = std::make_unique<NvmlTelemetry>(bus_id);
  }

  std::unique_ptr<NvmlTelemetry> telemetry_;
  std::unique_ptr<PowerLimitControl> power_limit_;  // holds pointers into telemetry_'s library
  LaunchTelemetry last_telemetry_;
  std::optional<SmPartitioning> partitioning_;
  std::map<int, int> granted_;  // confinable_workers: SMs granted for SMs asked

  // L1: the unified L1/shared array per SM from the per-architecture table (the runtime reports
  // only the shared-memory part); unknown architectures fall back to the shared-memory size,
  // a lower bound. L2: one instance for the chip (A100/H100 split it in two partitions, but a
  // kernel sees one address space of that size).
  static void add_caches(DeviceInfo& info, const cudaDeviceProp& prop, const GpuArchFigures& arch,
                         const std::string& cc) {
    CacheInfo l1;
    l1.name = "L1";
    l1.bytes = arch.l1_bytes_per_sm != 0 ? arch.l1_bytes_per_sm : prop.sharedMemPerMultiprocessor;
    l1.instances = prop.multiProcessorCount;
    info.caches.push_back(l1);
    if (arch.l1_bytes_per_sm == 0) {
      info.extra["l1_bytes_note"] =
          "compute capability " + cc + " not in the L1 table: shared memory per SM used as L1 size";
    }
    CacheInfo l2;
    l2.name = "L2";
    l2.bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
    l2.instances = 1;
    info.caches.push_back(l2);
  }

  static void add_memory(DeviceInfo& info, int device) {
    const int bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, device);
    const int mem_khz = attribute(cudaDevAttrMemoryClockRate, device);
    info.memory_name = gpu_memory_name(bus_bits);
    info.extra["memory_bus_width_bits"] = std::to_string(bus_bits);
    info.extra["memory_clock_mhz"] = fmt(mem_khz / 1000.0, 0);
    info.extra[kExtraMemoryPeakGbs] = fmt(gpu_memory_peak_gbs(mem_khz, bus_bits));
    info.extra["memory_peak_basis"] =
        "2 (double data rate) x " + fmt(mem_khz / 1000.0, 0) + " MHz x " + std::to_string(bus_bits) + " bits / 8";
  }

  // The UUID as nvidia-smi prints it.
  static std::string uuid_text(const cudaDeviceProp& prop) {
    char uuid[64];
    const auto* u = reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
    std::snprintf(uuid, sizeof uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
                  u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    return uuid;
  }

  static void add_extra(DeviceInfo& info, const cudaDeviceProp& prop, const GpuArchFigures& arch, const std::string& cc,
                        int device) {
    int driver = 0, runtime = 0;
    RP_CUDA_CHECK(cudaDriverGetVersion(&driver));
    RP_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    info.extra["compute_capability"] = cc;
    info.extra["architecture"] = arch.family[0] != '\0' ? arch.family : "unknown";
    info.extra["warp_size"] = std::to_string(prop.warpSize);
    if (arch.schedulers_per_sm > 0) {
      info.extra["schedulers_per_sm"] = std::to_string(arch.schedulers_per_sm);
    }
    info.extra["shared_per_sm_bytes"] = std::to_string(prop.sharedMemPerMultiprocessor);
    info.extra["carveout"] = carveout_table_text();  // the L1/shared split each probe runs with
    info.extra["shared_per_block_optin_bytes"] = std::to_string(prop.sharedMemPerBlockOptin);
    info.extra["l1_bytes"] = std::to_string(info.caches.front().bytes);
    info.extra["l2_bytes"] = std::to_string(prop.l2CacheSize);
    info.extra["memory"] = mib(prop.totalGlobalMem);
    info.extra["max_threads_per_sm"] = std::to_string(prop.maxThreadsPerMultiProcessor);
    info.extra["registers_per_sm"] = std::to_string(prop.regsPerMultiprocessor);
    info.extra["ecc"] = prop.ECCEnabled ? "on" : "off";
    char bus_id[32] = {};
    RP_CUDA_CHECK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    info.extra["pci_bus_id"] = bus_id;
    info.extra["driver"] = version_text(driver);
    info.extra["runtime"] = version_text(runtime);
  }
};

}  // namespace

RP_REGISTER_BACKEND(CudaBackend);

}  // namespace roofprobe::cuda
