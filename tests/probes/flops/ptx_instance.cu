// Instantiates exactly ONE kernel of the CUDA FLOP probe, chosen with -DRP_PTX_T=double|float
// -DRP_PTX_K=<flops per element> -DRP_PTX_FORM=Fma|NoFma, so that its PTX holds a single entry
// for ptx_check to count. It is the template kernels/cuda/flops/probe.cu launches, not a copy of it.
#include "kernels/cuda/flops/kernel.cuh"

template __global__ void roofprobe::cuda::flops_kernel<RP_PTX_T, RP_PTX_K, roofprobe::FlopForm::RP_PTX_FORM>(
    RP_PTX_T*, std::size_t, int, RP_PTX_T, RP_PTX_T);
