// Instantiates exactly ONE kernel of the tensor probe's wgmma path (kernels/cuda/tensor/wgmma_kernel.cuh),
// chosen with -DRP_PTX_TYPE=<TensorType enumerator, e.g. Fp16Fp32> and, for api=wgmma.rs,
// -DRP_PTX_KERNEL=tensor_wgmma_rs_kernel, so that its PTX holds a single entry for ptx_check to
// count. It is the template kernels/cuda/tensor/probe.cu launches.
#include "kernels/cuda/tensor/wgmma_kernel.cuh"

#ifndef RP_PTX_KERNEL
#define RP_PTX_KERNEL tensor_wgmma_kernel
#endif

template __global__ void roofprobe::cuda::RP_PTX_KERNEL<roofprobe::TensorType::RP_PTX_TYPE>(const std::uint16_t*,
                                                                                            const std::uint16_t*,
                                                                                            const float*, float*, int*,
                                                                                            int);
