// A fake libcublas.so.13 (and a .12 copy from the same source). FP32 GEMMs launch legacy SIMT
// kernels (or CUTLASS TF32 kernels when the handle allows TF32), with a split-K reduction for
// long reductions; 16-bit GEMMs run on cuBLASLt through its internal entry points, as NVIDIA's
// library does (it calls cublasLtMatmul from one call site only). Symbols are versioned and
// bound -Bsymbolic like NVIDIA's. Signatures come from the CUDA 13.0 cublas_api.h; kernel names
// are real cuBLAS names seen on Ampere/Hopper. fakecublas_gemm_calls() says how many GEMMs this
// copy ran, so that a test can tell two loaded copies apart.
#include <cublasLt.h>
#include <cublas_api.h>

#include <algorithm>
#include <atomic>
#include <string>

#include "fake_cublaslt_internal.h"
#include "fake_library_driver.h"

struct cublasContext {
  cudaStream_t stream = nullptr;
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  cublasLtHandle_t lt = nullptr;
};

namespace {

struct SimtKernel {
  const char* layout;
  const char* name;
  int tile_m;
  int tile_n;
};

// One real kernel per layout (cuBLAS picks among many; the fake is deterministic).
const SimtKernel kSimt[] = {
    {"nn", "ampere_sgemm_128x64_nn", 128, 64},
    {"tn", "ampere_sgemm_128x128_tn", 128, 128},
    {"tt", "ampere_sgemm_128x128_tt", 128, 128},
    {"nt", "volta_sgemm_64x64_nt", 64, 64},
};

struct Tf32Kernel {
  const char* layout;
  const char* config;
  int tile_m;
  int tile_n;
};

const Tf32Kernel kTf32[] = {
    {"nn", "cutlass_80_tensorop_s1688gemm_128x64_16x6_nn_align4", 128, 64},
    {"tn", "cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4", 64, 64},
    {"tt", "cutlass_80_tensorop_s1688gemm_64x64_32x6_tn_align4", 64, 64},
    {"nt", "cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4", 64, 64},
};

const char kSplitKReduce[] = "splitKreduce_kernel";

std::vector<std::string> kernel_names() {
  std::vector<std::string> names{kSplitKReduce};
  for (const auto& k : kSimt) names.push_back(k.name);
  for (const auto& k : kTf32) names.push_back(fake_lib::cutlass_kernel2(k.config));
  return names;
}

std::atomic<int> g_gemm_calls{0};

fake_lib::LibraryDriver& driver() {
  static fake_lib::LibraryDriver d(kernel_names());
  return d;
}

std::string layout(cublasOperation_t a, cublasOperation_t b) {
  std::string s;
  s += a == CUBLAS_OP_N ? 'n' : 't';
  s += b == CUBLAS_OP_N ? 'n' : 't';
  return s;
}

bool is_16bit(cudaDataType t) { return t == CUDA_R_16F || t == CUDA_R_16BF; }

cublasStatus_t status(CUresult r) {
  return r == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

// FP32 GEMM on SIMT or TF32 kernels; a reduction at least 8x longer than the output's larger
// side is split four ways and finished by splitKreduce_kernel.
cublasStatus_t fp32_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb,
                         std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                         bool tf32) {
  if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  if (m <= 0 || n <= 0 || k <= 0 || batch <= 0) return CUBLAS_STATUS_INVALID_VALUE;
  const std::string ab = layout(ta, tb);
  std::string name;
  int tm = 0, tn = 0;
  if (tf32) {
    for (const auto& kk : kTf32) {
      if (ab == kk.layout) {
        name = fake_lib::cutlass_kernel2(kk.config);
        tm = kk.tile_m;
        tn = kk.tile_n;
      }
    }
  } else {
    for (const auto& kk : kSimt) {
      if (ab == kk.layout) {
        name = kk.name;
        tm = kk.tile_m;
        tn = kk.tile_n;
      }
    }
  }
  const unsigned split = k >= 8 * std::max(m, n) ? 4 : 1;
  auto s = reinterpret_cast<CUstream>(h->stream);
  CUresult r = driver().launch(name, fake_lib::ceil_div(m, tm), fake_lib::ceil_div(n, tn),
                               unsigned(batch) * split, 256, s);
  if (r == CUDA_SUCCESS && split > 1) {
    r = driver().launch(kSplitKReduce, fake_lib::ceil_div(m * n, 256), 1, unsigned(batch), 256, s);
  }
  return status(r);
}

// 16-bit GEMMs run on cuBLASLt, reached the way NVIDIA's cuBLAS reaches it: through an
// internal entry point chosen by the types (fake_cublaslt_internal.h), not cublasLtMatmul.
cublasStatus_t lt_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
                       std::int64_t n, std::int64_t k, std::int64_t batch, cudaDataType atype,
                       cudaDataType, cudaDataType ctype, cublasComputeType_t compute) {
  if (h == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  const FakeLtProblem p{m, n, k, batch, ta, tb, atype, ctype, compute, h->stream};
  if (atype == CUDA_R_16BF) {
    return ctype == CUDA_R_32F ? cublasLt_for_cublas_TSS(h->lt, &p)
                               : cublasLt_for_cublas_TST(h->lt, &p);
  }
  if (compute == CUBLAS_COMPUTE_16F) return cublasLt_for_cublas_HHH(h->lt, &p);
  return ctype == CUDA_R_32F ? cublasLt_for_cublas_HSS(h->lt, &p)
                             : cublasLt_for_cublas_HSH(h->lt, &p);
}

cublasStatus_t gemm_ex(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
                       std::int64_t n, std::int64_t k, std::int64_t batch, cudaDataType atype,
                       cudaDataType btype, cudaDataType ctype, cublasComputeType_t compute) {
  g_gemm_calls.fetch_add(1);
  if (is_16bit(atype) || is_16bit(btype)) {
    return lt_gemm(h, ta, tb, m, n, k, batch, atype, btype, ctype, compute);
  }
  const bool tf32 = compute == CUBLAS_COMPUTE_32F_FAST_TF32 ||
                    (h != nullptr && (h->math & CUBLAS_TF32_TENSOR_OP_MATH) != 0);
  return fp32_gemm(h, ta, tb, m, n, k, batch, tf32);
}

}  // namespace

extern "C" {

int fakecublas_gemm_calls(void) { return g_gemm_calls.load(); }

cublasStatus_t cublasCreate_v2(cublasHandle_t* handle) {
  if (handle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto* h = new cublasContext();
  cublasLtCreate(&h->lt);
  if (!driver().ready()) {
    delete h;
    return CUBLAS_STATUS_NOT_INITIALIZED;
  }
  *handle = h;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasDestroy_v2(cublasHandle_t handle) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  cublasLtDestroy(handle->lt);
  delete handle;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->stream = streamId;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetStream_v2(cublasHandle_t handle, cudaStream_t* streamId) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  *streamId = handle->stream;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  handle->math = mode;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasGetMathMode(cublasHandle_t handle, cublasMath_t* mode) {
  if (handle == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  *mode = handle->math;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasSgemm_v2(cublasHandle_t handle, cublasOperation_t transa,
                              cublasOperation_t transb, int m, int n, int k, const float*,
                              const float*, int, const float*, int, const float*, float*, int) {
  g_gemm_calls.fetch_add(1);
  const bool tf32 = handle != nullptr && (handle->math & CUBLAS_TF32_TENSOR_OP_MATH) != 0;
  return fp32_gemm(handle, transa, transb, m, n, k, 1, tf32);
}

cublasStatus_t cublasHgemm(cublasHandle_t handle, cublasOperation_t transa,
                           cublasOperation_t transb, int m, int n, int k, const __half*,
                           const __half*, int, const __half*, int, const __half*, __half*, int) {
  g_gemm_calls.fetch_add(1);
  return lt_gemm(handle, transa, transb, m, n, k, 1, CUDA_R_16F, CUDA_R_16F, CUDA_R_16F,
                 CUBLAS_COMPUTE_16F);
}

cublasStatus_t cublasSgemmStridedBatched(cublasHandle_t handle, cublasOperation_t transa,
                                         cublasOperation_t transb, int m, int n, int k,
                                         const float*, const float*, int, long long int,
                                         const float*, int, long long int, const float*, float*,
                                         int, long long int, int batchCount) {
  g_gemm_calls.fetch_add(1);
  const bool tf32 = handle != nullptr && (handle->math & CUBLAS_TF32_TENSOR_OP_MATH) != 0;
  return fp32_gemm(handle, transa, transb, m, n, k, batchCount, tf32);
}

cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
                            cublasOperation_t transb, int m, int n, int k, const void*, const void*,
                            cudaDataType Atype, int, const void*, cudaDataType Btype, int,
                            const void*, void*, cudaDataType Ctype, int,
                            cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return gemm_ex(handle, transa, transb, m, n, k, 1, Atype, Btype, Ctype, computeType);
}

cublasStatus_t cublasGemmEx_64(cublasHandle_t handle, cublasOperation_t transa,
                               cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                               const void*, const void*, cudaDataType Atype, int64_t, const void*,
                               cudaDataType Btype, int64_t, const void*, void*, cudaDataType Ctype,
                               int64_t, cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return gemm_ex(handle, transa, transb, m, n, k, 1, Atype, Btype, Ctype, computeType);
}

cublasStatus_t cublasGemmBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                   cublasOperation_t transb, int m, int n, int k, const void*,
                                   const void* const[], cudaDataType Atype, int,
                                   const void* const[], cudaDataType Btype, int, const void*,
                                   void* const[], cudaDataType Ctype, int, int batchCount,
                                   cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return gemm_ex(handle, transa, transb, m, n, k, batchCount, Atype, Btype, Ctype, computeType);
}

cublasStatus_t cublasGemmBatchedEx_64(cublasHandle_t handle, cublasOperation_t transa,
                                      cublasOperation_t transb, int64_t m, int64_t n, int64_t k,
                                      const void*, const void* const[], cudaDataType Atype, int64_t,
                                      const void* const[], cudaDataType Btype, int64_t, const void*,
                                      void* const[], cudaDataType Ctype, int64_t,
                                      int64_t batchCount, cublasComputeType_t computeType,
                                      cublasGemmAlgo_t) {
  return gemm_ex(handle, transa, transb, m, n, k, batchCount, Atype, Btype, Ctype, computeType);
}

cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle, cublasOperation_t transa,
                                          cublasOperation_t transb, int m, int n, int k,
                                          const void*, const void*, cudaDataType Atype, int,
                                          long long int, const void*, cudaDataType Btype, int,
                                          long long int, const void*, void*, cudaDataType Ctype,
                                          int, long long int, int batchCount,
                                          cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return gemm_ex(handle, transa, transb, m, n, k, batchCount, Atype, Btype, Ctype, computeType);
}

cublasStatus_t cublasGemmStridedBatchedEx_64(
    cublasHandle_t handle, cublasOperation_t transa, cublasOperation_t transb, int64_t m, int64_t n,
    int64_t k, const void*, const void*, cudaDataType Atype, int64_t, long long int, const void*,
    cudaDataType Btype, int64_t, long long int, const void*, void*, cudaDataType Ctype, int64_t,
    long long int, int64_t batchCount, cublasComputeType_t computeType, cublasGemmAlgo_t) {
  return gemm_ex(handle, transa, transb, m, n, k, batchCount, Atype, Btype, Ctype, computeType);
}

}  // extern "C"
