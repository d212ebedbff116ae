// A Python-extension-like module that depends on one copy of cuBLAS (built twice: against the
// CUDA 12 and the CUDA 13 copies of the fake). Loaded RTLD_LOCAL, its cuBLAS is not in the
// process's global scope: only the module's own lookups find it.
#include <cublas_v2.h>
#include <dlfcn.h>

extern "C" {

int fakecublas_gemm_calls(void);  // the fake cuBLAS's own count (fake_cublas.cpp)

// One SGEMM through this module's cuBLAS; 0 on success.
__attribute__((visibility("default"))) int extension_sgemm(int m, int n, int k) {
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 1;
  const float alpha = 1, beta = 0;
  const cublasStatus_t s = cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &alpha, nullptr, m,
                                       nullptr, k, &beta, nullptr, m);
  cublasDestroy(h);
  return s == CUBLAS_STATUS_SUCCESS ? 0 : 2;
}

// GEMMs run by the copy of cuBLAS this module depends on.
__attribute__((visibility("default"))) int extension_cublas_gemms() {
  return fakecublas_gemm_calls();
}

// What dlsym(RTLD_DEFAULT, ...) finds from inside this module: glibc searches the caller's
// scope, which for a module loaded RTLD_LOCAL includes its own dependencies.
__attribute__((visibility("default"))) int extension_finds_its_cublas() {
  return dlsym(RTLD_DEFAULT, "cublasCreate_v2") != nullptr ? 1 : 0;
}

}  // extern "C"
