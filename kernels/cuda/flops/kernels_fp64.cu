// The fp64 FLOP kernels of every chain length and form (kernel_table.hpp says why one file per type).
#include "kernels/cuda/flops/kernel_table.cuh"

namespace roofprobe::cuda {
template FlopsKernel<double> flops_kernel_for<double>(int, FlopForm);
}  // namespace roofprobe::cuda
