// One f64 mma.sync m16n8k16, unconditionally (the probe's kernel compiles it on sm_90 only): the
// SASS check shows what ptxas makes of it per architecture, the fact behind tensor_mma_native's
// "native on 9.0 only" (kernels/cuda/tensor/model.hpp): one DMMA.16x8x16 on sm_90, DMMA.8x8x4
// pieces on sm_100 and sm_120.
#include <cuda_runtime.h>

__global__ void roofprobe_f64_m16n8k16_once(const double* in, double* out) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  const double* a = in + threadIdx.x * 16;
  double d0 = a[12], d1 = a[13], d2 = a[14], d3 = a[15];
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, "
      "{%12,%13,%14,%15}, {%0,%1,%2,%3};"
      : "+d"(d0), "+d"(d1), "+d"(d2), "+d"(d3)
      : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]), "d"(a[8]), "d"(a[9]),
        "d"(a[10]), "d"(a[11]));
  double* o = out + threadIdx.x * 4;
  o[0] = d0, o[1] = d1, o[2] = d2, o[3] = d3;
#endif
}
