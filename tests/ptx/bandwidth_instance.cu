// Instantiates exactly ONE kernel of the CUDA bandwidth probe, chosen with
// -DRP_PTX_MODE=Read|Rmw|Copy, so that its PTX holds a single entry for ptx_check to count. It is
// the template kernels/cuda/bandwidth.cu launches, not a copy of it.
#include "kernels/cuda/bandwidth_kernel.cuh"

template __global__ void roofprobe::cuda::stream_kernel<roofprobe::StreamMode::RP_PTX_MODE>(
    uint4*, uint4*, std::size_t, int, std::uint32_t*);
