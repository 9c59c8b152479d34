// The FLOP kernel for a run-time (K, form), one table per element type. Fully unrolled up to
// K = 1024, the 110 kernels (5 types x 11 K x 2 forms) are most of the CUDA compile time, and
// one translation unit would compile them serially, once per architecture of the build. Each
// type's kernels therefore live in their own file (kernels_<type>.cu), instantiating
// kernel_table.cuh, and compile in parallel; probe.cu only looks them up.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/common/flop_chain.hpp"
#include "kernels/cuda/flops/kernel.cuh"

namespace roofprobe::cuda {

template <class T>
using FlopsKernel = void (*)(T*, std::size_t, int, T, T);

// flops_kernel<T, k, form>, or nullptr when k is not one of kChainLengths.
template <class T>
FlopsKernel<T> flops_kernel_for(int k, FlopForm form);

extern template FlopsKernel<double> flops_kernel_for<double>(int, FlopForm);
extern template FlopsKernel<float> flops_kernel_for<float>(int, FlopForm);
extern template FlopsKernel<F16x2> flops_kernel_for<F16x2>(int, FlopForm);
extern template FlopsKernel<Bf16x2> flops_kernel_for<Bf16x2>(int, FlopForm);
extern template FlopsKernel<std::uint32_t> flops_kernel_for<std::uint32_t>(int, FlopForm);

}  // namespace roofprobe::cuda
