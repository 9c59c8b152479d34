// Instantiates exactly ONE kernel of the CUDA scaling probe, chosen with
// -DRP_PTX_KERNEL=MemoryRead|Fp64Fma, so that its PTX holds a single entry for ptx_check to
// count. It is the template kernels/cuda/scaling/probe.cu launches, not a copy of it.
#include "kernels/cuda/scaling/kernel.cuh"

template __global__ void roofprobe::cuda::scaling_kernel<roofprobe::ScalingKernel::RP_PTX_KERNEL>(
    const uint4*, unsigned long long, std::uint32_t, std::uint32_t, double, unsigned long long*, std::uint32_t*,
    std::uint32_t*, unsigned long long*);
