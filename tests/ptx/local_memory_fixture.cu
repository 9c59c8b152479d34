// Fixture of the test sass.no_local_memory_rejects_local_memory: a kernel that must use local
// memory (a 1 KiB array indexed at run time cannot live in registers), so no_local_memory.sh has
// to fail on it. Not part of roofprobe.
__global__ void local_memory_fixture(const int* in, int* out, int i) {
  int table[256];
  for (int k = 0; k < 256; ++k) table[k] = in[k] * k;
  out[threadIdx.x] = table[(i + threadIdx.x) % 256];
}
