// The id of the SM a thread runs on, for kernels that record where their blocks ran.
#pragma once

#include <cstdint>

namespace roofprobe::cuda {

// %smid: the PTX ISA does not promise contiguous ids, so callers collect the ids they see.
__device__ __forceinline__ std::uint32_t sm_id() {
  std::uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

}  // namespace roofprobe::cuda
