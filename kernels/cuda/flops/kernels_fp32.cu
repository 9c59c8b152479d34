// The fp32 FLOP kernels of every chain length and form (kernel_table.hpp says why one file per type).
#include "kernels/cuda/flops/kernel_table.cuh"

namespace roofprobe::cuda {
template FlopsKernel<float> flops_kernel_for<float>(int, FlopForm);
}  // namespace roofprobe::cuda
