// The cuBLASLt entry points the calibrator uses, from dlopen("libcublasLt.so.13") with the
// exact types of the CUDA 13 cublasLt.h declarations (decltype), so a signature mismatch is
// a compile error here rather than a crash on the GPU.
#pragma once

#include <cublasLt.h>

#include <string>

namespace pm2lat::calibrate::run::driver {

struct CublasLtApi {
  void* library = nullptr;
  decltype(&cublasLtCreate) create = nullptr;
  decltype(&cublasLtDestroy) destroy = nullptr;
  decltype(&cublasLtGetVersion) get_version = nullptr;
  decltype(&cublasLtMatmulDescCreate) desc_create = nullptr;
  decltype(&cublasLtMatmulDescDestroy) desc_destroy = nullptr;
  decltype(&cublasLtMatmulDescSetAttribute) desc_set = nullptr;
  decltype(&cublasLtMatrixLayoutCreate) layout_create = nullptr;
  decltype(&cublasLtMatrixLayoutDestroy) layout_destroy = nullptr;
  decltype(&cublasLtMatrixLayoutSetAttribute) layout_set = nullptr;
  decltype(&cublasLtMatmulPreferenceCreate) pref_create = nullptr;
  decltype(&cublasLtMatmulPreferenceDestroy) pref_destroy = nullptr;
  decltype(&cublasLtMatmulPreferenceSetAttribute) pref_set = nullptr;
  decltype(&cublasLtMatmulAlgoGetHeuristic) get_heuristic = nullptr;
  decltype(&cublasLtMatmulAlgoCheck) algo_check = nullptr;
  decltype(&cublasLtMatmulAlgoConfigGetAttribute) algo_config_get = nullptr;
  decltype(&cublasLtMatmul) matmul = nullptr;

  // Throws BackendError naming the library or the missing symbols.
  static CublasLtApi load(const std::string& library);
};

}  // namespace pm2lat::calibrate::run::driver
