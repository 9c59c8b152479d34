// Instantiates exactly ONE kernel of the CUDA global-stride probe, chosen with
// -DRP_PTX_STRIDE=0|1|2|4|8|16|32 -DRP_PTX_WORD_BYTES=4|8, so that its PTX holds a single entry
// for ptx_check to count. It is the template kernels/cuda/stride/probe.cu launches, not a copy of it.
#include "kernels/cuda/stride/kernel.cuh"

template __global__ void roofprobe::cuda::stride_kernel<RP_PTX_STRIDE, RP_PTX_WORD_BYTES>(
    const roofprobe::cuda::StrideWordType<RP_PTX_WORD_BYTES>::type*, std::uint32_t, int, unsigned long long*);
