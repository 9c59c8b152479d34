// Small host-side helpers the CUDA backend and probes share: error checking, the device the run
// uses, device buffers, and the DeviceInfo keys the probes read to size their launches.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "kernels/cuda/backend/carveout.hpp"
#include "kernels/contract/probe.hpp"

namespace roofprobe::cuda {

// Errors after which the CUDA context is unusable until the device is reset ("sticky" errors:
// every later call in the process fails the same way).
inline bool is_sticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
      return true;
    default:
      return false;
  }
}

// Throws, naming the failed call, the CUDA error and where it happened: DeviceOutOfMemory for an
// allocation that does not fit, DeviceFault for a sticky error, std::runtime_error otherwise
// (the driver treats each differently: kernels/contract/probe.hpp).
inline void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  const std::string what = std::string(call) + " failed: " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err) +
                           " (" + file + ":" + std::to_string(line) + ")";
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // not sticky: clear it so the next point starts clean
    throw DeviceOutOfMemory(what);
  }
  if (is_sticky(err)) throw DeviceFault(what);
  throw std::runtime_error(what);
}

}  // namespace roofprobe::cuda

// Every CUDA runtime call goes through this; a kernel launch is followed by
// RP_CUDA_CHECK(cudaGetLastError()) so bad launch configurations are not silent.
#define RP_CUDA_CHECK(call) ::roofprobe::cuda::check((call), #call, __FILE__, __LINE__)

namespace roofprobe::cuda {

// DeviceInfo::extra keys the backend fills and the probes read (to estimate launch lengths).
inline constexpr const char* kExtraDeviceIndex = "cuda_device";
inline constexpr const char* kExtraMemoryPeakGbs = "memory_peak_gbs";

// The device the run uses: ROOFPROBE_CUDA_DEVICE (an index) or 0. Throws on a malformed value.
inline int selected_device() {
  const char* env = std::getenv("ROOFPROBE_CUDA_DEVICE");
  if (env == nullptr || *env == '\0') return 0;
  char* end = nullptr;
  const long v = std::strtol(env, &end, 10);
  if (*end != '\0' || v < 0 || v > 1024) {
    throw std::runtime_error(std::string("ROOFPROBE_CUDA_DEVICE='") + env + "' is not a device index (0, 1, ...)");
  }
  return static_cast<int>(v);
}

// Makes the selected device current for the calling thread (probes call it before allocating,
// so they use the device the backend described even if the engine runs them on another thread).
// Where it already is, the thread's context stays: a green context that confines the launches
// to part of the device (Backend::confine) is not swapped for the device's primary context.
inline void use_selected_device() {
  const int wanted = selected_device();
  int current = -1;
  if (cudaGetDevice(&current) != cudaSuccess)
    (void)cudaGetLastError();  // cudaSetDevice reports what is wrong
  else if (current == wanted)
    return;
  RP_CUDA_CHECK(cudaSetDevice(wanted));
}

// SMs a point's grid is sized for: the device's, or the part of it the point runs on
// (DeviceInfo::compute_units; the energy phase prepares points for k SMs).
inline int sm_count(const DeviceInfo& dev) {
  if (dev.compute_units > 0) return dev.compute_units;
  int device = 0, sms = 0;
  RP_CUDA_CHECK(cudaGetDevice(&device));
  RP_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// Owns `count` elements of T in device memory.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count > 0) RP_CUDA_CHECK(cudaMalloc(&ptr_, count * sizeof(T)));
  }
  ~DeviceBuffer() {
    if (ptr_ != nullptr) cudaFree(ptr_);  // no throw from a destructor; errors resurface later
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), count_(o.count_) {
    o.ptr_ = nullptr;
    o.count_ = 0;
  }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      if (ptr_ != nullptr) cudaFree(ptr_);
      ptr_ = o.ptr_;
      count_ = o.count_;
      o.ptr_ = nullptr;
      o.count_ = 0;
    }
    return *this;
  }

  T* get() const { return ptr_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  T* ptr_ = nullptr;
  std::size_t count_ = 0;
};

// Sets the L1/shared split `kernel` runs with (carveout.hpp), for blocks of `block` threads. The
// driver rounds the preference up to a configuration the SM supports.
template <class Kernel>
void set_carveout(Kernel kernel, Carveout carveout, int block, std::size_t dynamic_shared = 0) {
  const void* entry = reinterpret_cast<const void*>(kernel);
  int percent = 100;
  if (carveout == Carveout::MaxL1) {
    cudaFuncAttributes attr{};
    RP_CUDA_CHECK(cudaFuncGetAttributes(&attr, entry));
    const std::size_t shared = attr.sharedSizeBytes + dynamic_shared;
    int per_sm = 0, device = 0, reserved = 0, shared_per_sm = 0;
    if (shared > 0) {  // the blocks per SM with all of the shared memory: what MaxL1 must keep
      RP_CUDA_CHECK(cudaFuncSetAttribute(entry, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
      RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, dynamic_shared));
      RP_CUDA_CHECK(cudaGetDevice(&device));
      RP_CUDA_CHECK(cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, device));
      RP_CUDA_CHECK(cudaDeviceGetAttribute(&shared_per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
    }
    percent = carveout_percent(carveout, per_sm, shared, static_cast<std::size_t>(reserved),
                               static_cast<std::size_t>(shared_per_sm));
  }
  RP_CUDA_CHECK(cudaFuncSetAttribute(entry, cudaFuncAttributePreferredSharedMemoryCarveout, percent));
}

// Resident blocks of `kernel` with `block` threads across the whole device: blocks per SM from the
// occupancy calculator (registers and shared memory of the compiled kernel, at the probe's
// carveout, which it sets first: occupancy depends on it) x SMs (`sms`; 0: all of the device's).
template <class Kernel>
int resident_blocks(Kernel kernel, int block, Carveout carveout, std::size_t dynamic_shared = 0, int sms = 0) {
  set_carveout(kernel, carveout, block, dynamic_shared);
  int per_sm = 0;
  if (sms <= 0) sms = sm_count(DeviceInfo{});
  RP_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, dynamic_shared));
  if (per_sm < 1) per_sm = 1;
  return per_sm * sms;
}

// Repetitions as the kernels take them (int), from the engine's request: at least 1.
inline int clamp_reps(std::int64_t reps) {
  constexpr std::int64_t kMax = std::int64_t{1} << 30;
  return static_cast<int>(reps < 1 ? 1 : reps > kMax ? kMax : reps);
}

// Repetitions so that one launch lasts about `target_s`, from an estimated time per repetition;
// clamped to [1, max_reps]. Estimates only steer launch length: the engine measures.
inline int reps_for(double seconds_per_rep, double target_s, int max_reps = 1 << 20) {
  if (!(seconds_per_rep > 0)) return 1;
  const double r = target_s / seconds_per_rep;
  if (r < 1) return 1;
  if (r > max_reps) return max_reps;
  return static_cast<int>(r + 0.5);
}

}  // namespace roofprobe::cuda
