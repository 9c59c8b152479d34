// Instantiates exactly ONE kernel of the CUDA clock probe, chosen with
// -DRP_PTX_LOAD=Idle|Fp32Fma, so that its PTX holds a single entry for ptx_check to count. It is
// the template kernels/cuda/clock/probe.cu launches, not a copy of it.
#include "kernels/cuda/clock/kernel.cuh"

template __global__ void roofprobe::cuda::clock_kernel<roofprobe::cuda::ClockLoad::RP_PTX_LOAD>(
    long long, float, long long, long long*, long long*, long long*, long long*, std::uint32_t*);
