// Instantiates exactly ONE kernel of the tensor probe's wgmma path (kernels/cuda/tensor/wgmma_kernel.cuh),
// chosen with -DRP_PTX_TYPE=<TensorType enumerator, e.g. Fp16Fp32>, so that its PTX holds a single
// entry for ptx_check to count. It is the template kernels/cuda/tensor/probe.cu launches.
#include "kernels/cuda/tensor/wgmma_kernel.cuh"

template __global__ void roofprobe::cuda::tensor_wgmma_kernel<roofprobe::TensorType::RP_PTX_TYPE>(const std::uint16_t*,
                                                                                                  const std::uint16_t*,
                                                                                                  const float*, float*,
                                                                                                  int*, int);
