// cublasLtMatmul: the GEMM's shape from its matrix layouts and descriptor, and the algorithm
// cuBLASLt runs (tile, stages, split-K) from its algo. Called by cuBLAS itself on recent
// GPUs: then the cuBLAS call stays the one context and only gains the algorithm.
#include <cublasLt.h>

#include "interpose/export.h"
#include "interpose/library_context.h"

using namespace pm2lat;
using namespace pm2lat::shim;

namespace {

// Companions of the cublasLtMatmul called, from its own copy of cuBLASLt.
NextDefinition g_desc_get;
NextDefinition g_layout_get;
NextDefinition g_algo_get;
thread_local const void* t_lt = nullptr;  // the cublasLtMatmul being called

template <typename T>
bool desc_attr(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, T* out) noexcept {
  auto get = g_desc_get.get<decltype(&cublasLtMatmulDescGetAttribute)>(
      "cublasLtMatmulDescGetAttribute", t_lt);
  std::size_t written = 0;
  return get != nullptr && d != nullptr &&
         get(d, a, out, sizeof(T), &written) == CUBLAS_STATUS_SUCCESS && written == sizeof(T);
}

template <typename T>
bool layout_attr(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, T* out) noexcept {
  auto get = g_layout_get.get<decltype(&cublasLtMatrixLayoutGetAttribute)>(
      "cublasLtMatrixLayoutGetAttribute", t_lt);
  std::size_t written = 0;
  return get != nullptr && l != nullptr &&
         get(l, a, out, sizeof(T), &written) == CUBLAS_STATUS_SUCCESS && written == sizeof(T);
}

template <typename T>
bool algo_attr(const cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t a,
               T* out) noexcept {
  auto get = g_algo_get.get<decltype(&cublasLtMatmulAlgoConfigGetAttribute)>(
      "cublasLtMatmulAlgoConfigGetAttribute", t_lt);
  std::size_t written = 0;
  return get != nullptr && algo != nullptr &&
         get(algo, a, out, sizeof(T), &written) == CUBLAS_STATUS_SUCCESS && written == sizeof(T);
}

// Attribute types as cublasLt.h documents them for each attribute.
GemmShape describe(cublasLtMatmulDesc_t desc, cublasLtMatrixLayout_t a_layout,
                   cublasLtMatrixLayout_t b_layout, cublasLtMatrixLayout_t d_layout) noexcept {
  std::int32_t trans_a = CUBLAS_OP_N, trans_b = CUBLAS_OP_N, compute = CUBLAS_COMPUTE_32F;
  std::uint32_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a);
  desc_attr(desc, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b);
  desc_attr(desc, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE, &compute);
  desc_attr(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue);
  std::uint32_t a_type = CUDA_R_32F, b_type = CUDA_R_32F, d_type = CUDA_R_32F;
  std::uint64_t a_rows = 0, a_cols = 0, d_rows = 0, d_cols = 0;
  std::int32_t batch = 1;
  layout_attr(a_layout, CUBLASLT_MATRIX_LAYOUT_TYPE, &a_type);
  layout_attr(b_layout, CUBLASLT_MATRIX_LAYOUT_TYPE, &b_type);
  layout_attr(d_layout, CUBLASLT_MATRIX_LAYOUT_TYPE, &d_type);
  layout_attr(a_layout, CUBLASLT_MATRIX_LAYOUT_ROWS, &a_rows);
  layout_attr(a_layout, CUBLASLT_MATRIX_LAYOUT_COLS, &a_cols);
  layout_attr(d_layout, CUBLASLT_MATRIX_LAYOUT_ROWS, &d_rows);
  layout_attr(d_layout, CUBLASLT_MATRIX_LAYOUT_COLS, &d_cols);
  layout_attr(d_layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch);
  const auto ta = static_cast<cublasOperation_t>(trans_a);
  const DType a = from_cuda_data_type(static_cast<cudaDataType>(a_type));
  GemmShape g = blas_gemm_shape(
      ta, static_cast<cublasOperation_t>(trans_b), static_cast<std::int64_t>(d_rows),
      static_cast<std::int64_t>(d_cols),
      static_cast<std::int64_t>(ta == CUBLAS_OP_N ? a_cols : a_rows), batch > 0 ? batch : 1, a,
      from_cuda_data_type(static_cast<cudaDataType>(b_type)),
      from_cuda_data_type(static_cast<cudaDataType>(d_type)),
      from_cublas_compute(static_cast<cublasComputeType_t>(compute), a, false));
  g.has_bias = (epilogue & CUBLASLT_EPILOGUE_BIAS) == CUBLASLT_EPILOGUE_BIAS;
  if (is_scaled_dtype(a)) {
    // FP8/FP4 operands carry scale factors whose layout is part of the work (per tensor,
    // per row, 1x128 blocks, MX or NVFP4 vectors): cuBLASLt's default is one FP32 scalar.
    std::int32_t a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    std::int32_t b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    desc_attr(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &a_mode);
    desc_attr(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &b_mode);
    g.scaling = from_cublaslt_scale_modes(a_mode, b_mode, a);
  }
  return g;
}

// True when the algorithm said something.
bool describe_algo(const cublasLtMatmulAlgo_t* algo, GemmShape& g) noexcept {
  if (algo == nullptr) return false;
  std::uint32_t tile = 0, stages = 0;
  std::int32_t split_k = 0;
  if (algo_attr(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile)) {
    cublaslt_tile(tile, &g.algo_tile_m, &g.algo_tile_n);
  }
  if (algo_attr(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages)) {
    std::int32_t k = 0;
    cublaslt_stages(stages, &k, &g.algo_stages);
  }
  if (algo_attr(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &split_k)) g.algo_split_k = split_k;
  return g.algo_tile_m > 0 || g.algo_stages > 0 || g.algo_split_k > 0;
}

}  // namespace

extern "C" PM2LAT_EXPORT cublasStatus_t cublasLtMatmul(
    cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc, const void* alpha,
    const void* A, cublasLtMatrixLayout_t Adesc, const void* B, cublasLtMatrixLayout_t Bdesc,
    const void* beta, const void* C, cublasLtMatrixLayout_t Cdesc, void* D,
    cublasLtMatrixLayout_t Ddesc, const cublasLtMatmulAlgo_t* algo, void* workspace,
    size_t workspaceSizeInBytes, cudaStream_t stream) {
  static NextDefinition next;
  auto real = next.get<decltype(&cublasLtMatmul)>("cublasLtMatmul", __builtin_return_address(0));
  if (real == nullptr) return CUBLAS_STATUS_NOT_INITIALIZED;
  t_lt = reinterpret_cast<const void*>(real);
  LibraryCallScope scope(LibrarySource::kCublasLt, LibraryApi::kCublasLtMatmul, OpKind::kGemm);
  if (scope.outermost()) {
    scope.op().gemm() = describe(computeDesc, Adesc, Bdesc, Ddesc);
    describe_algo(algo, scope.op().gemm());
    scope.publish();
  } else if (scope.op().kind == OpKind::kGemm && scope.op().gemm().algo_tile_m == 0) {
    // Inside a cuBLAS call: that call is the GEMM; cuBLASLt only says how it runs.
    if (describe_algo(algo, scope.op().gemm())) scope.publish();
  }
  return real(lightHandle, computeDesc, alpha, A, Adesc, B, Bdesc, beta, C, Cdesc, D, Ddesc, algo,
              workspace, workspaceSizeInBytes, stream);
}
