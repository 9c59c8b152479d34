// The bf16 FLOP kernels of every chain length and form (kernel_table.hpp says why one file per type).
#include "kernels/cuda/flops/kernel_table.cuh"

namespace roofprobe::cuda {
template FlopsKernel<Bf16x2> flops_kernel_for<Bf16x2>(int, FlopForm);
}  // namespace roofprobe::cuda
