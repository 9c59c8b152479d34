// Instantiates exactly ONE kernel of the CUDA shared-memory probe, the one kernels/cuda/shared/probe.cu
// launches (kSharedSlots chains per thread), so that its PTX holds a single entry for ptx_check to
// count. It is that template, not a copy of it.
#include "kernels/cuda/shared/kernel.cuh"

template __global__ void roofprobe::cuda::shared_kernel<roofprobe::cuda::kSharedSlots>(int, std::uint32_t, int,
                                                                                       std::uint32_t*);
