// Instantiates exactly ONE kernel of the CUDA tensor probe, chosen with
// -DRP_PTX_TYPE=<TensorType enumerator, e.g. Fp16Fp32>, -DRP_PTX_WMMA=0|1 (mma.sync or WMMA) and,
// for mma.sync, -DRP_PTX_API=<TensorApi enumerator> (default Mma; MmaM16n8k16 ... for Hopper's
// f64 shapes), so that its PTX holds a single entry for ptx_check to count. It is the template
// kernels/cuda/tensor/probe.cu launches, not a copy of it.
#include "kernels/cuda/tensor/kernel.cuh"

#ifndef RP_PTX_API
#define RP_PTX_API Mma
#endif

#if RP_PTX_WMMA
template __global__ void roofprobe::cuda::tensor_wmma_kernel<roofprobe::TensorType::RP_PTX_TYPE>(
    const void*, const void*, const void*, const void*, void*, int*, int);
#else
template __global__ void
roofprobe::cuda::tensor_mma_kernel<roofprobe::TensorType::RP_PTX_TYPE, roofprobe::TensorApi::RP_PTX_API>(
    const std::uint32_t*, const std::uint32_t*, const std::uint32_t*, const std::uint32_t*, std::uint32_t*, int*, int);
#endif
