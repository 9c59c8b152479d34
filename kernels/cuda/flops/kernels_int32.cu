// The int32 FLOP kernels of every chain length and form (kernel_table.hpp says why one file per type).
#include "kernels/cuda/flops/kernel_table.cuh"

namespace roofprobe::cuda {
template FlopsKernel<std::uint32_t> flops_kernel_for<std::uint32_t>(int, FlopForm);
}  // namespace roofprobe::cuda
