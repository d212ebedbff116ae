// The private entry points through which cuBLAS runs its GEMMs on cuBLASLt. NVIDIA's
// libcublas.so.13 imports cublasLt_for_cublas_{HSH,HSS,HHH,TST,TSS,SSS,...} and about sixty
// other internal cuBLASLt functions (versioned libcublasLt.so.13) and calls cublasLtMatmul
// from a single call site, so a tool that hooks cublasLtMatmul does not see the GEMMs cuBLAS
// runs. Their real signatures are private: the fake's take the problem as a struct.
#pragma once

#include <cublasLt.h>

#include <cstdint>

extern "C" {

struct FakeLtProblem {
  std::int64_t m, n, k, batch;
  cublasOperation_t trans_a, trans_b;
  cudaDataType a_type, c_type;
  cublasComputeType_t compute;
  cudaStream_t stream;
};

// H: fp16, T: bf16, S: fp32 (inputs, compute, output), as in NVIDIA's names.
cublasStatus_t cublasLt_for_cublas_HSH(cublasLtHandle_t handle, const FakeLtProblem* problem);
cublasStatus_t cublasLt_for_cublas_HSS(cublasLtHandle_t handle, const FakeLtProblem* problem);
cublasStatus_t cublasLt_for_cublas_HHH(cublasLtHandle_t handle, const FakeLtProblem* problem);
cublasStatus_t cublasLt_for_cublas_TST(cublasLtHandle_t handle, const FakeLtProblem* problem);
cublasStatus_t cublasLt_for_cublas_TSS(cublasLtHandle_t handle, const FakeLtProblem* problem);

}  // extern "C"
