// Instantiates exactly ONE kernel of the CUDA issue probe, chosen with
// -DRP_PTX_STREAM=Fp32|Int32|Mixed -DRP_PTX_LOADS=<loads per group: 0, 1, 2, 4, 8, 16 or 32>, so
// that its PTX holds a single entry for ptx_check to count. It is the template
// kernels/cuda/issue/probe.cu launches, not a copy of it.
#include "kernels/cuda/issue/kernel.cuh"

template __global__ void roofprobe::cuda::issue_kernel<roofprobe::IssueStream::RP_PTX_STREAM, RP_PTX_LOADS>(
    const std::uint32_t*, std::uint32_t*, int, int, int, int, int, float, float, std::uint32_t);
