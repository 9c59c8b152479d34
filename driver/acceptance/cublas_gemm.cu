// The acceptance's sanity check of the tensor ceilings (roofprobe-acceptance, step 5): cuBLAS's
// dense GEMM rate on the same GPU, which a tensor ceiling should reach or exceed (cuBLAS also
// moves its operands through memory; the probe does not). Built on the GPU machine from this
// source (the bundle carries it; cuBLAS comes with the CUDA toolkit there).
//
//   cublas_gemm [SIZE]   prints one line per type: "cublas <type> <M>x<N>x<K>: <TFLOP/s> TFLOP/s"
//
// Square GEMMs (default 8192), fp16 and bf16 inputs with fp32 accumulation (roofprobe's
// TENSOR.FP16.FP32 and TENSOR.BF16.FP32), operands filled with small values (all-zero operands
// draw less power and flatter the clock), the best of 20 timed calls after 5 warm-up calls.
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(x)                                                     \
  do {                                                                    \
    cudaError_t e = (x);                                                  \
    if (e != cudaSuccess) {                                               \
      std::fprintf(stderr, "error: %s: %s\n", #x, cudaGetErrorString(e)); \
      std::exit(1);                                                       \
    }                                                                     \
  } while (0)
#define CHECK_CUBLAS(x)                                                               \
  do {                                                                                \
    cublasStatus_t s = (x);                                                           \
    if (s != CUBLAS_STATUS_SUCCESS) {                                                 \
      std::fprintf(stderr, "error: %s: cuBLAS status %d\n", #x, static_cast<int>(s)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

template <class T>
__global__ void fill(T* p, long long n, float scale) {
  for (long long i = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<long long>(gridDim.x) * blockDim.x)
    p[i] = static_cast<T>(scale * static_cast<float>((i * 2654435761ll) % 17 - 8) / 8.0f);
}

template <class T>
double best_tflops(cublasHandle_t handle, cudaDataType_t type, int n) {
  const long long elems = static_cast<long long>(n) * n;
  T *a = nullptr, *b = nullptr;
  float* c = nullptr;
  CHECK_CUDA(cudaMalloc(&a, elems * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&b, elems * sizeof(T)));
  CHECK_CUDA(cudaMalloc(&c, elems * sizeof(float)));
  fill<<<1024, 256>>>(a, elems, 1.0f);
  fill<<<1024, 256>>>(b, elems, 0.5f);
  CHECK_CUDA(cudaMemset(c, 0, elems * sizeof(float)));
  const float alpha = 1, beta = 0;
  auto gemm = [&] {
    CHECK_CUBLAS(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a, type, n, b, type, n, &beta, c,
                              CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  for (int i = 0; i < 5; ++i) gemm();
  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  float best_ms = 1e30f;
  for (int i = 0; i < 20; ++i) {
    CHECK_CUDA(cudaEventRecord(start));
    gemm();
    CHECK_CUDA(cudaEventRecord(stop));
    CHECK_CUDA(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));
    if (ms < best_ms) best_ms = ms;
  }
  CHECK_CUDA(cudaFree(a));
  CHECK_CUDA(cudaFree(b));
  CHECK_CUDA(cudaFree(c));
  return 2.0 * n * static_cast<double>(n) * n / (best_ms * 1e-3) / 1e12;
}

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 8192;
  if (n < 256 || n > 32768) {
    std::fprintf(stderr, "error: size %s: use 256..32768\n", argc > 1 ? argv[1] : "");
    return 64;
  }
  cublasHandle_t handle;
  CHECK_CUBLAS(cublasCreate(&handle));
  std::printf("cublas fp16.fp32 %dx%dx%d: %.1f TFLOP/s\n", n, n, n, best_tflops<__half>(handle, CUDA_R_16F, n));
  std::printf("cublas bf16.fp32 %dx%dx%d: %.1f TFLOP/s\n", n, n, n, best_tflops<__nv_bfloat16>(handle, CUDA_R_16BF, n));
  CHECK_CUBLAS(cublasDestroy(handle));
  return 0;
}
