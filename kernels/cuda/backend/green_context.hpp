// Running launches on part of a GPU: a green context (CUDA 12.4 and later drivers) owns a set of
// the device's SMs, and the runtime launches into it while it is current to the calling thread.
// The energy phase uses it (Backend::confine) to run a point on k of the n SMs.
//
// The driver API is reached through cudaGetDriverEntryPointByVersion, not linked: a binary built
// here must start on machines without libcuda.so.1 (CI), as the rest of the backend does.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kernels/contract/probe.hpp"

namespace roofprobe::cuda {

// What the device's SMs allow a partition to be.
struct SmPartitioning {
  int total = 0;          // SMs of the device; 0: green contexts are not available here
  int min_partition = 0;  // the fewest SMs one partition holds
  int alignment = 0;      // a partition holds a multiple of this
  std::string why_not;    // when total is 0
};

// Reads the SM resource of `device` (an ordinal) through the driver. Never throws.
SmPartitioning sm_partitioning(int device);

// The SMs the driver's split gives a partition of at least `sms` of `device`'s SMs (the count
// confine_to_sms gets), read without creating a context. Throws std::runtime_error where the
// driver cannot split.
int split_sms(int device, int sms);

// %smid values the blocks of one wave of a census kernel ran on, in the context current now:
// resident blocks for `sms` SMs (0: all of the device's), which wait for each other (at most
// about 10 ms) so that every SM the context may use shows up.
std::vector<std::uint32_t> sm_ids_in_use(int sms = 0);

// Makes a green context of split_sms(device, sms) SMs current to the calling thread, and checks
// with sm_ids_in_use() that launches spread over no more SMs than granted. The previous context
// is current again, and the green context gone, when the handle is destroyed. Throws
// DeviceOutOfMemory or DeviceFault for what they mean, std::runtime_error where the driver
// cannot make such a context.
std::unique_ptr<Confinement> confine_to_sms(int device, int sms);

}  // namespace roofprobe::cuda
