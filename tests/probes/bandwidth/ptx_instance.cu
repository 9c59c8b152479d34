// Instantiates exactly ONE kernel of the CUDA bandwidth probe, chosen with
// -DRP_PTX_MODE=Read|Rmw|Copy|Write, -DRP_PTX_BITS=32|64|128 (load width, default 128) and
// -DRP_PTX_CACHE=Ca|Cg|Cs|CsChunk (default Ca), so that its PTX holds a single entry for ptx_check to count.
// It is the template kernels/cuda/bandwidth/probe.cu launches, not a copy of it.
#include "kernels/cuda/bandwidth/kernel.cuh"

#ifndef RP_PTX_BITS
#define RP_PTX_BITS 128
#endif
#ifndef RP_PTX_CACHE
#define RP_PTX_CACHE Ca
#endif

template __global__ void
roofprobe::cuda::stream_kernel<roofprobe::StreamMode::RP_PTX_MODE, RP_PTX_BITS, roofprobe::StreamCache::RP_PTX_CACHE>(
    roofprobe::cuda::StreamVector<RP_PTX_BITS>*, roofprobe::cuda::StreamVector<RP_PTX_BITS>*, std::size_t, std::size_t,
    int, unsigned, unsigned, std::uint32_t*);
