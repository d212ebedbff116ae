// A plain cuBLAS program to try the runtime on a real GPU: FP32, TF32 and BF16 GEMMs of a few
// sizes, repeated. Build (needs the CUDA toolkit and a GPU to run):
//   cmake -DPM2LAT_BUILD_EXAMPLES=ON ... && cmake --build ... --target pm2lat_example_cublas_gemm
//   pm2lat run --targets A100,H100 -- build/default/examples/pm2lat_example_cublas_gemm
// Prints the wall time of its GEMM loop, which scripts/gpu-check.sh compares with and
// without the runtime to measure its overhead.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                            \
  do {                                                                      \
    if ((x) != 0) {                                                         \
      std::fprintf(stderr, "%s failed at %s:%d\n", #x, __FILE__, __LINE__); \
      return 1;                                                             \
    }                                                                       \
  } while (0)

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 200;
  const int sizes[] = {256, 1024, 4096};
  const size_t max_elems = size_t(4096) * 4096;
  void *a = nullptr, *b = nullptr, *c = nullptr;
  CHECK(cudaMalloc(&a, max_elems * 4));
  CHECK(cudaMalloc(&b, max_elems * 4));
  CHECK(cudaMalloc(&c, max_elems * 4));
  cublasHandle_t h = nullptr;
  CHECK(cublasCreate(&h));
  const float alpha = 1.0f, beta = 0.0f;

  CHECK(cudaDeviceSynchronize());
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < repeats; ++r) {
    for (int n : sizes) {
      CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
      CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, static_cast<float*>(a), n,
                        static_cast<float*>(b), n, &beta, static_cast<float*>(c), n));
      CHECK(cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH));
      CHECK(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, static_cast<float*>(a), n,
                        static_cast<float*>(b), n, &beta, static_cast<float*>(c), n));
      CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, n, n, &alpha, a, CUDA_R_16BF, n, b,
                         CUDA_R_16BF, n, &beta, c, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                         CUBLAS_GEMM_DEFAULT));
    }
  }
  CHECK(cudaDeviceSynchronize());
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("gemms %d time_s %.4f\n", repeats * 9, s);
  cublasDestroy(h);
  return 0;
}
