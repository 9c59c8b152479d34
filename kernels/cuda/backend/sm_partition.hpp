// How many SMs a partition of the GPU gets (kernels/cuda/backend/green_context.cu), kept apart so
// the host tests check the rule without a GPU.
#pragma once

namespace roofprobe::cuda {

// SMs the driver grants a green context asked for `wanted` of a device's `total`: a partition
// holds at least `min_partition` SMs and a multiple of `alignment` (the device's own figures,
// cuDeviceGetDevResource: 8 and 8 on compute capability 9.0). 0 when none are wanted; `total`
// when the rounded count reaches the whole device, which needs no partition.
inline int granted_sms(int wanted, int total, int min_partition, int alignment) {
  if (wanted <= 0 || total <= 0) return 0;
  int k = wanted < min_partition ? min_partition : wanted;
  if (alignment > 1) k = (k + alignment - 1) / alignment * alignment;
  return k >= total ? total : k;
}

}  // namespace roofprobe::cuda
