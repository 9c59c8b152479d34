// Definition of flops_kernel_for (kernel_table.hpp), included only by the kernels_<type>.cu
// files, each of which instantiates it, and with it the kernels, for one element type.
#pragma once

#include "kernels/cuda/flops/kernel_table.hpp"

namespace roofprobe::cuda {

template <class T>
FlopsKernel<T> flops_kernel_for(int k, FlopForm form) {
  FlopsKernel<T> kernel = nullptr;
  dispatch_chain_length(k, [&](auto kc) {
    constexpr int K = decltype(kc)::value;
    kernel = form == FlopForm::Fma ? &flops_kernel<T, K, FlopForm::Fma> : &flops_kernel<T, K, FlopForm::NoFma>;
  });
  return kernel;
}

}  // namespace roofprobe::cuda
