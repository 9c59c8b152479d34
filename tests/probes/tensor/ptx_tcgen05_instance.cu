// Instantiates exactly ONE kernel of the tensor probe's tcgen05 path (kernels/cuda/tensor/tcgen05_kernel.cuh),
// chosen with -DRP_PTX_TYPE=<TensorType enumerator>, for ptx_check to count.
#include "kernels/cuda/tensor/tcgen05_kernel.cuh"

template __global__ void roofprobe::cuda::tensor_tcgen05_kernel<roofprobe::TensorType::RP_PTX_TYPE>(
    const std::uint16_t*, const std::uint16_t*, const float*, float*, int*, int);
