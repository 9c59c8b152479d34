// Instantiates exactly ONE kernel of the CUDA tensor probe, chosen with
// -DRP_PTX_TYPE=<TensorType enumerator, e.g. Fp16Fp32> and -DRP_PTX_WMMA=0|1 (mma.sync or WMMA),
// so that its PTX holds a single entry for ptx_check to count. It is the template
// kernels/cuda/tensor/probe.cu launches, not a copy of it.
#include "kernels/cuda/tensor/kernel.cuh"

#if RP_PTX_WMMA
template __global__ void roofprobe::cuda::tensor_wmma_kernel<roofprobe::TensorType::RP_PTX_TYPE>(
    const void*, const void*, const void*, const void*, void*, int*, int);
#else
template __global__ void roofprobe::cuda::tensor_mma_kernel<roofprobe::TensorType::RP_PTX_TYPE>(
    const std::uint32_t*, const std::uint32_t*, const std::uint32_t*, const std::uint32_t*, std::uint32_t*, int*, int);
#endif
