// Instantiates exactly ONE kernel of the CUDA system probe, chosen with
// -DRP_PTX_TRANSFER=MappedRead|MappedWrite, so that its PTX holds a single entry for ptx_check to
// count. It is the template kernels/cuda/system/probe.cu launches, not a copy of it.
#include "kernels/cuda/system/kernel.cuh"

template __global__ void roofprobe::cuda::system_mapped_kernel<roofprobe::SystemTransfer::RP_PTX_TRANSFER>(
    uint4*, std::size_t, int, std::uint32_t, std::uint32_t*);
