// Marks functions that the CUDA kernels and the host (CPU probes, unit tests) share.
// Compiled by nvcc they become __host__ __device__; by a plain C++ compiler, ordinary inline code.
#pragma once

#if defined(__CUDACC__)
#define RP_HD __host__ __device__ __forceinline__
#else
#define RP_HD inline
#endif
