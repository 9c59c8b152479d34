// Instantiates exactly ONE kernel of the CUDA fma_mix probe, chosen with
// -DRP_PTX_OPS=MixFp64|MixFp32|MixFp16x2|MixBf16x2 -DRP_PTX_QUARTERS=<FMA fraction x 4: 0..4>, so
// that its PTX holds a single entry for ptx_check to count. It is the template
// kernels/cuda/fma_mix/probe.cu launches, not a copy of it.
#include "kernels/cuda/fma_mix/kernel.cuh"

using RpPtxOps = roofprobe::cuda::RP_PTX_OPS;

template __global__ void roofprobe::cuda::fma_mix_kernel<RpPtxOps, RP_PTX_QUARTERS>(RpPtxOps::Word*, int,
                                                                                    RpPtxOps::Word, RpPtxOps::Word);
