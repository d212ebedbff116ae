// A fake libcublasLt.so.13: descriptors, a heuristic that chooses a tile/stages/split-K
// configuration, and cublasLtMatmul launching the real cuBLAS kernel names that
// configuration runs on an H100 (Hopper GEMMs through cuLaunchKernelEx with a cluster, as
// NVIDIA's library does). Signatures come from the CUDA 13.0 cublasLt.h.
#include <cublasLt.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "fake_library_driver.h"

struct cublasLtContext {
  int unused = 0;
};

namespace {

// Layout of the fake's opaque descriptors (the real ones are opaque arrays too).
enum LayoutField { kType, kOrder, kRows, kCols, kLd, kBatch, kStride };
enum DescField { kCompute, kScale, kTransA, kTransB, kEpilogue };
enum AlgoField { kAlgoId, kTile, kSplitK, kStages, kInitialised };

const std::string kNvjet = "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT";
const std::string kXmmaBf16 =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
    "execute_segment_k_off_kernel__5x_cublas";
const std::string kXmmaF16 =
    "sm90_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_"
    "execute_segment_k_off_kernel__5x_cublas";
const std::string kXmmaTf32 =
    "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_"
    "execute_segment_k_off_kernel__5x_cublas";
const std::string kSplitKReduce = "splitKreduce_kernel";

fake_lib::LibraryDriver& driver() {
  static fake_lib::LibraryDriver d({kNvjet, kXmmaBf16, kXmmaF16, kXmmaTf32, kSplitKReduce});
  return d;
}

template <typename T>
cublasStatus_t get_field(const std::uint64_t* data, int field, void* buf, size_t size,
                         size_t* written) {
  if (size == 0) {
    if (written == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
    *written = sizeof(T);
    return CUBLAS_STATUS_SUCCESS;
  }
  if (buf == nullptr || size != sizeof(T)) return CUBLAS_STATUS_INVALID_VALUE;
  T v = static_cast<T>(data[field]);
  std::memcpy(buf, &v, sizeof(T));
  if (written) *written = sizeof(T);
  return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
cublasStatus_t set_field(std::uint64_t* data, int field, const void* buf, size_t size) {
  if (buf == nullptr || size != sizeof(T)) return CUBLAS_STATUS_INVALID_VALUE;
  T v{};
  std::memcpy(&v, buf, sizeof(T));
  data[field] = static_cast<std::uint64_t>(v);
  return CUBLAS_STATUS_SUCCESS;
}

struct Problem {
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
};

Problem problem(const cublasLtMatmulDescOpaque_t* desc, const cublasLtMatrixLayoutOpaque_t* a,
                const cublasLtMatrixLayoutOpaque_t* d) {
  Problem p;
  p.m = std::int64_t(d->data[kRows]);
  p.n = std::int64_t(d->data[kCols]);
  const bool trans_a = desc->data[kTransA] != CUBLAS_OP_N;
  p.k = std::int64_t(trans_a ? a->data[kRows] : a->data[kCols]);
  p.batch = std::max<std::int64_t>(1, std::int64_t(d->data[kBatch]));
  return p;
}

// Large outputs get the Hopper nvjet kernel with a 1x2 cluster, the rest the xmma kernel;
// a long reduction is split four ways and reduced by a second kernel.
void heuristic(const Problem& p, cublasLtMatmulAlgo_t* algo) {
  std::memset(algo, 0, sizeof(*algo));
  const bool big = p.m * p.n >= 1024 * 1024;
  algo->data[kAlgoId] = big ? 66 : 21;
  algo->data[kTile] = big ? CUBLASLT_MATMUL_TILE_128x256 : CUBLASLT_MATMUL_TILE_128x128;
  algo->data[kStages] = big ? CUBLASLT_MATMUL_STAGES_64x4 : CUBLASLT_MATMUL_STAGES_64x3;
  algo->data[kSplitK] = (!big && p.k >= 4 * std::max(p.m, p.n)) ? 4 : 1;
  algo->data[kInitialised] = 1;
}

}  // namespace

extern "C" {

cublasStatus_t cublasLtCreate(cublasLtHandle_t* lightHandle) {
  if (lightHandle == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *lightHandle = new cublasLtContext();
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtDestroy(cublasLtHandle_t lightHandle) {
  delete lightHandle;
  return CUBLAS_STATUS_SUCCESS;
}

size_t cublasLtGetVersion(void) { return 130000; }

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t* matLayout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  if (matLayout == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto* l = new cublasLtMatrixLayoutOpaque_t{};
  l->data[kType] = std::uint64_t(type);
  l->data[kOrder] = CUBLASLT_ORDER_COL;
  l->data[kRows] = rows;
  l->data[kCols] = cols;
  l->data[kLd] = std::uint64_t(ld);
  l->data[kBatch] = 1;
  *matLayout = l;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t matLayout) {
  delete matLayout;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t l,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void* buf, size_t size) {
  if (l == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE: return set_field<std::uint32_t>(l->data, kType, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_ORDER: return set_field<std::int32_t>(l->data, kOrder, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_ROWS: return set_field<std::uint64_t>(l->data, kRows, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_COLS: return set_field<std::uint64_t>(l->data, kCols, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_LD: return set_field<std::int64_t>(l->data, kLd, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      return set_field<std::int32_t>(l->data, kBatch, buf, size);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return set_field<std::int64_t>(l->data, kStride, buf, size);
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatrixLayoutGetAttribute(cublasLtMatrixLayout_t l,
                                                cublasLtMatrixLayoutAttribute_t attr, void* buf,
                                                size_t size, size_t* written) {
  if (l == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (attr) {
    case CUBLASLT_MATRIX_LAYOUT_TYPE:
      return get_field<std::uint32_t>(l->data, kType, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_ORDER:
      return get_field<std::int32_t>(l->data, kOrder, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_ROWS:
      return get_field<std::uint64_t>(l->data, kRows, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_COLS:
      return get_field<std::uint64_t>(l->data, kCols, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_LD:
      return get_field<std::int64_t>(l->data, kLd, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT:
      return get_field<std::int32_t>(l->data, kBatch, buf, size, written);
    case CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET:
      return get_field<std::int64_t>(l->data, kStride, buf, size, written);
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t* matmulDesc,
                                        cublasComputeType_t computeType,
                                        cudaDataType_t scaleType) {
  if (matmulDesc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto* d = new cublasLtMatmulDescOpaque_t{};
  d->data[kCompute] = std::uint64_t(computeType);
  d->data[kScale] = std::uint64_t(scaleType);
  d->data[kTransA] = CUBLAS_OP_N;
  d->data[kTransB] = CUBLAS_OP_N;
  d->data[kEpilogue] = CUBLASLT_EPILOGUE_DEFAULT;
  *matmulDesc = d;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  delete matmulDesc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void* buf, size_t size) {
  if (d == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      return set_field<std::int32_t>(d->data, kCompute, buf, size);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      return set_field<std::int32_t>(d->data, kScale, buf, size);
    case CUBLASLT_MATMUL_DESC_TRANSA: return set_field<std::int32_t>(d->data, kTransA, buf, size);
    case CUBLASLT_MATMUL_DESC_TRANSB: return set_field<std::int32_t>(d->data, kTransB, buf, size);
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      return set_field<std::uint32_t>(d->data, kEpilogue, buf, size);
    default: return CUBLAS_STATUS_SUCCESS;  // other attributes are accepted and ignored
  }
}

cublasStatus_t cublasLtMatmulDescGetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr, void* buf,
                                              size_t size, size_t* written) {
  if (d == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (attr) {
    case CUBLASLT_MATMUL_DESC_COMPUTE_TYPE:
      return get_field<std::int32_t>(d->data, kCompute, buf, size, written);
    case CUBLASLT_MATMUL_DESC_SCALE_TYPE:
      return get_field<std::int32_t>(d->data, kScale, buf, size, written);
    case CUBLASLT_MATMUL_DESC_TRANSA:
      return get_field<std::int32_t>(d->data, kTransA, buf, size, written);
    case CUBLASLT_MATMUL_DESC_TRANSB:
      return get_field<std::int32_t>(d->data, kTransB, buf, size, written);
    case CUBLASLT_MATMUL_DESC_EPILOGUE:
      return get_field<std::uint32_t>(d->data, kEpilogue, buf, size, written);
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t* pref) {
  if (pref == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  *pref = new cublasLtMatmulPreferenceOpaque_t{};
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  delete pref;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t pref,
                                                    cublasLtMatmulPreferenceAttributes_t,
                                                    const void* buf, size_t) {
  return pref && buf ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_INVALID_VALUE;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t Adesc,
                                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                                              cublasLtMatrixLayout_t Ddesc,
                                              cublasLtMatmulPreference_t, int requestedAlgoCount,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int* returnAlgoCount) {
  if (desc == nullptr || Adesc == nullptr || Ddesc == nullptr || results == nullptr ||
      returnAlgoCount == nullptr || requestedAlgoCount < 1) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  std::memset(&results[0], 0, sizeof(results[0]));
  heuristic(problem(desc, Adesc, Ddesc), &results[0].algo);
  results[0].state = CUBLAS_STATUS_SUCCESS;
  results[0].wavesCount = 1.0f;
  *returnAlgoCount = 1;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoConfigGetAttribute(const cublasLtMatmulAlgo_t* algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr,
                                                    void* buf, size_t size, size_t* written) {
  if (algo == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (attr) {
    case CUBLASLT_ALGO_CONFIG_ID:
      return get_field<std::int32_t>(algo->data, kAlgoId, buf, size, written);
    case CUBLASLT_ALGO_CONFIG_TILE_ID:
      return get_field<std::uint32_t>(algo->data, kTile, buf, size, written);
    case CUBLASLT_ALGO_CONFIG_SPLITK_NUM:
      return get_field<std::int32_t>(algo->data, kSplitK, buf, size, written);
    case CUBLASLT_ALGO_CONFIG_STAGES_ID:
      return get_field<std::uint32_t>(algo->data, kStages, buf, size, written);
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatmulAlgoConfigSetAttribute(cublasLtMatmulAlgo_t* algo,
                                                    cublasLtMatmulAlgoConfigAttributes_t attr,
                                                    const void* buf, size_t size) {
  if (algo == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  switch (attr) {
    case CUBLASLT_ALGO_CONFIG_TILE_ID: return set_field<std::uint32_t>(algo->data, kTile, buf, size);
    case CUBLASLT_ALGO_CONFIG_SPLITK_NUM:
      return set_field<std::int32_t>(algo->data, kSplitK, buf, size);
    case CUBLASLT_ALGO_CONFIG_STAGES_ID:
      return set_field<std::uint32_t>(algo->data, kStages, buf, size);
    default: return CUBLAS_STATUS_INVALID_VALUE;
  }
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t computeDesc,
                              const void*, const void*, cublasLtMatrixLayout_t Adesc, const void*,
                              cublasLtMatrixLayout_t Bdesc, const void*, const void*,
                              cublasLtMatrixLayout_t Cdesc, void*, cublasLtMatrixLayout_t Ddesc,
                              const cublasLtMatmulAlgo_t* algo, void*, size_t,
                              cudaStream_t stream) {
  if (lightHandle == nullptr || computeDesc == nullptr || Adesc == nullptr || Bdesc == nullptr ||
      Cdesc == nullptr || Ddesc == nullptr) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  const Problem p = problem(computeDesc, Adesc, Ddesc);
  if (p.m <= 0 || p.n <= 0 || p.k <= 0) return CUBLAS_STATUS_INVALID_VALUE;
  cublasLtMatmulAlgo_t chosen{};
  if (algo != nullptr && algo->data[kInitialised] != 0) {
    chosen = *algo;
  } else {
    heuristic(p, &chosen);
  }
  auto s = reinterpret_cast<CUstream>(stream);
  CUresult r = CUDA_SUCCESS;
  const unsigned batch = unsigned(p.batch);
  if (chosen.data[kTile] == CUBLASLT_MATMUL_TILE_128x256) {
    const unsigned gy = (fake_lib::ceil_div(p.n, 256) + 1) / 2 * 2;  // whole clusters
    r = driver().launch_cluster(kNvjet, fake_lib::ceil_div(p.m, 128), gy, batch, 384, 1, 2, s);
  } else {
    const cudaDataType a_type = cudaDataType(Adesc->data[kType]);
    const std::string& name = a_type == CUDA_R_16BF ? kXmmaBf16
                              : a_type == CUDA_R_16F ? kXmmaF16
                                                     : kXmmaTf32;
    const unsigned split = unsigned(std::max<std::uint64_t>(1, chosen.data[kSplitK]));
    r = driver().launch(name, fake_lib::ceil_div(p.m, 128), fake_lib::ceil_div(p.n, 128),
                        batch * split, 256, s);
    if (r == CUDA_SUCCESS && split > 1) {
      r = driver().launch(kSplitKReduce, fake_lib::ceil_div(p.m * p.n, 256), 1, batch, 256, s);
    }
  }
  return r == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

}  // extern "C"
