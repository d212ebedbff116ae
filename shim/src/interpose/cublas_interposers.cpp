// cuBLAS GEMM entry points: each records the GEMM (m, n, k, batch, types, transposes) as the
// context of the kernels it launches, then calls the real function. PyTorch links libcublas
// dynamically, so these are reached through its PLT.
#include <cublas_api.h>

#include "interpose/export.h"
#include "interpose/library_context.h"

using namespace pm2lat;
using namespace pm2lat::shim;

namespace {

NextDefinition g_get_math_mode;

// TF32 is allowed for FP32 GEMMs when the handle's math mode says so (PyTorch sets it when
// torch.backends.cuda.matmul.allow_tf32 is on). Asked of the cuBLAS copy `real` belongs to.
bool tf32_allowed(cublasHandle_t handle, const void* real) noexcept {
  auto get = g_get_math_mode.get<decltype(&cublasGetMathMode)>("cublasGetMathMode", real);
  cublasMath_t mode = CUBLAS_DEFAULT_MATH;
  if (get == nullptr || handle == nullptr || get(handle, &mode) != CUBLAS_STATUS_SUCCESS)
    return false;
  return (mode & CUBLAS_TF32_TENSOR_OP_MATH) != 0;
}

void describe_ex(LibraryCallScope& scope, const void* real, cublasHandle_t h, cublasOperation_t ta,
                 cublasOperation_t tb, std::int64_t m, std::int64_t n, std::int64_t k,
                 std::int64_t batch, cudaDataType at, cudaDataType bt, cudaDataType ct,
                 cublasComputeType_t compute) noexcept {
  if (!scope.outermost()) return;
  const DType a = from_cuda_data_type(at);
  const DType cmp = from_cublas_compute(compute, a, a == DType::kFp32 && tf32_allowed(h, real));
  scope.op().gemm() = blas_gemm_shape(ta, tb, m, n, k, batch, a, from_cuda_data_type(bt),
                                      from_cuda_data_type(ct), cmp);
  scope.publish();
}

void describe_fixed(LibraryCallScope& scope, const void* real, cublasHandle_t h,
                    cublasOperation_t ta, cublasOperation_t tb, std::int64_t m, std::int64_t n,
                    std::int64_t k, std::int64_t batch, DType t) noexcept {
  if (!scope.outermost()) return;
  const DType cmp = (t == DType::kFp32 && tf32_allowed(h, real)) ? DType::kTf32 : t;
  scope.op().gemm() = blas_gemm_shape(ta, tb, m, n, k, batch, t, t, t, cmp);
  scope.publish();
}

// cublas_api.h adds C++ inline overloads of these three (taking a cudaDataType compute
// type), so their C entry points' types are spelled out.
using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int,
                                    int, const void*, const void*, cudaDataType, int, const void*,
                                    cudaDataType, int, const void*, void*, cudaDataType, int,
                                    cublasComputeType_t, cublasGemmAlgo_t);
using GemmBatchedExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t,
                                           int, int, int, const void*, const void* const[],
                                           cudaDataType, int, const void* const[], cudaDataType,
                                           int, const void*, void* const[], cudaDataType, int, int,
                                           cublasComputeType_t, cublasGemmAlgo_t);
using GemmStridedBatchedExFn = cublasStatus_t (*)(
    cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int, const void*, const void*,
    cudaDataType, int, long long int, const void*, cudaDataType, int, long long int, const void*,
    void*, cudaDataType, int, long long int, int, cublasComputeType_t, cublasGemmAlgo_t);

// The definition the caller would have reached, from its own scope (next_definition.h).
#define PM2LAT_REAL_T(fn, type)                                      \
  static NextDefinition next_##fn;                                   \
  auto real = next_##fn.get<type>(#fn, __builtin_return_address(0)); \
  if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED
#define PM2LAT_REAL(fn) PM2LAT_REAL_T(fn, decltype(&(fn)))

}  // namespace

extern "C" {

PM2LAT_EXPORT cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                                            cublasOperation_t transb, int m, int n, int k,
                                            const float* alpha, const float* A, int lda,
                                            const float* B, int ldb, const float* beta, float* C,
                                            int ldc) {
  PM2LAT_REAL(cublasSgemm_v2);
  LibraryCallScope scope(LibrarySource::kCublas, LibraryApi::kCublasSgemm, OpKind::kGemm);
  describe_fixed(scope, reinterpret_cast<const void*>(real), handle, transa, transb, m, n, k, 1,
                 DType::kFp32);
  return real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

PM2LAT_EXPORT cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const __half* alpha, const __half* A, int lda,
                                         const __half* B, int ldb, const __half* beta, __half* C,
                                         int ldc) {
  PM2LAT_REAL(cublasHgemm);
  LibraryCallScope scope(LibrarySource::kCublas, LibraryApi::kCublasHgemm, OpKind::kGemm);
  describe_fixed(scope, reinterpret_cast<const void*>(real), handle, transa, transb, m, n, k, 1,
                 DType::kFp16);
  return real(handle, transa, transb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}

PM2LAT_EXPORT cublasStatus_t cublasSgemmStridedBatched(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const float* alpha, const float* A, int lda, long long int strideA, const float* B, int ldb,
    long long int strideB, const float* beta, float* C, int ldc, long long int strideC,
    int batchCount) {
  PM2LAT_REAL(cublasSgemmStridedBatched);
  LibraryCallScope scope(LibrarySource::kCublas, LibraryApi::kCublasSgemmStridedBatched,
                         OpKind::kGemm);
  describe_fixed(scope, reinterpret_cast<const void*>(real), handle, transa, transb, m, n, k,
                 batchCount, DType::kFp32);
  return real(handle, transa, transb, m, n, k, alpha, A, lda, strideA, B, ldb, strideB, beta, C,
              ldc, strideC, batchCount);
}

PM2LAT_EXPORT cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void* alpha, const void* A, cudaDataType Atype,
                                          int lda, const void* B, cudaDataType Btype, int ldb,
                                          const void* beta, void* C, cudaDataType Ctype, int ldc,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  PM2LAT_REAL_T(cublasGemmEx, GemmExFn);
  LibraryCallScope scope(LibrarySource::kCublas, LibraryApi::kCublasGemmEx, OpKind::kGemm);
  describe_ex(scope, reinterpret_cast<const void*>(real), handle, transa, transb, m, n, k, 1, Atype,
              Btype, Ctype, computeType);
  return real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype,
              ldc, computeType, algo);
}

PM2LAT_EXPORT cublasStatus_t cublasGemmEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const void* alpha, const void* A, cudaDataType Atype, int64_t lda, const void* B,
    cudaDataType Btype, int64_t ldb, const void* beta, void* C, cudaDataType Ctype, int64_t ldc,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  PM2LAT_REAL(cublasGemmEx_64);
  LibraryCallScope scope(LibrarySource::kCublas, LibraryApi::kCublasGemmEx64, OpKind::kGemm);
  describe_ex(scope, reinterpret_cast<const void*>(real), handle, transa, transb, m, n, k, 1, Atype,
              Btype, Ctype, computeType);
  return real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta, C, Ctype,
              ldc, computeType, algo);
}

PM2LAT_EXPORT cublasStatus_t
cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb,
                    int m, int n, int k, const void* alpha, const void* const Aarray[],
                    cudaDataType Atype, int lda, const void* const Barray[], cudaDataType Btype,
                    int ldb, const void* beta, void* const Carray[], cudaDataType Ctype, int ldc,
                    int batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  PM2LAT_REAL_T(cublasGemmBatchedEx, GemmBatchedExFn);
  LibraryCallScope scope(LibrarySource::kCublas, LibraryApi::kCublasGemmBatchedEx, OpKind::kGemm);
  describe_ex(scope, reinterpret_cast<const void*>(real), handle, transa, transb, m, n, k,
              batchCount, Atype, Btype, Ctype, computeType);
  return real(handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta,
              Carray, Ctype, ldc, batchCount, computeType, algo);
}

PM2LAT_EXPORT cublasStatus_t cublasGemmBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const void* alpha, const void* const Aarray[], cudaDataType Atype, int64_t lda,
    const void* const Barray[], cudaDataType Btype, int64_t ldb, const void* beta,
    void* const Carray[], cudaDataType Ctype, int64_t ldc, int64_t batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  PM2LAT_REAL(cublasGemmBatchedEx_64);
  LibraryCallScope scope(LibrarySource::kCublas, LibraryApi::kCublasGemmBatchedEx64, OpKind::kGemm);
  describe_ex(scope, reinterpret_cast<const void*>(real), handle, transa, transb, m, n, k,
              batchCount, Atype, Btype, Ctype, computeType);
  return real(handle, transa, transb, m, n, k, alpha, Aarray, Atype, lda, Barray, Btype, ldb, beta,
              Carray, Ctype, ldc, batchCount, computeType, algo);
}

PM2LAT_EXPORT cublasStatus_t cublasGemmStridedBatchedEx(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
    const void* alpha, const void* A, cudaDataType Atype, int lda, long long int strideA,
    const void* B, cudaDataType Btype, int ldb, long long int strideB, const void* beta, void* C,
    cudaDataType Ctype, int ldc, long long int strideC, int batchCount,
    cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  PM2LAT_REAL_T(cublasGemmStridedBatchedEx, GemmStridedBatchedExFn);
  LibraryCallScope scope(LibrarySource::kCublas, LibraryApi::kCublasGemmStridedBatchedEx,
                         OpKind::kGemm);
  describe_ex(scope, reinterpret_cast<const void*>(real), handle, transa, transb, m, n, k,
              batchCount, Atype, Btype, Ctype, computeType);
  return real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
              strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

PM2LAT_EXPORT cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const void* alpha, const void* A, cudaDataType Atype, int64_t lda,
    long long int strideA, const void* B, cudaDataType Btype, int64_t ldb, long long int strideB,
    const void* beta, void* C, cudaDataType Ctype, int64_t ldc, long long int strideC,
    int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t algo) {
  PM2LAT_REAL(cublasGemmStridedBatchedEx_64);
  LibraryCallScope scope(LibrarySource::kCublas, LibraryApi::kCublasGemmStridedBatchedEx64,
                         OpKind::kGemm);
  describe_ex(scope, reinterpret_cast<const void*>(real), handle, transa, transb, m, n, k,
              batchCount, Atype, Btype, Ctype, computeType);
  return real(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA, B, Btype, ldb,
              strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo);
}

}  // extern "C"
