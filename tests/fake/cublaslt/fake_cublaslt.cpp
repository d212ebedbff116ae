// A fake libcublasLt.so.13: descriptors, a heuristic that chooses a tile/stages/split-K
// configuration (and lists the alternatives when asked for more than one), and
// cublasLtMatmul launching the real cuBLAS kernel names that configuration runs on an H100
// (Hopper GEMMs through cuLaunchKernelEx with a cluster, as NVIDIA's library does). Each GEMM
// kernel's Params start with the problem it solves, which the fake driver times it by
// (fake_gemm_law.h). Signatures come from the CUDA 13.0 cublasLt.h. cuBLAS reaches it through
// internal entry points (fake_cublaslt_internal.h), as NVIDIA's does; its symbols are
// versioned and bound -Bsymbolic like NVIDIA's.
#include <cublasLt.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "fake_cublaslt_internal.h"
#include "fake_gemm_law.h"
#include "fake_library_driver.h"

struct cublasLtContext {
  int unused = 0;
};

namespace {

// Layout of the fake's opaque descriptors (the real ones are opaque arrays too).
enum LayoutField { kType, kOrder, kRows, kCols, kLd, kBatch, kStride };
enum DescField { kCompute, kScale, kTransA, kTransB, kEpilogue, kAScaleMode, kBScaleMode };
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
const std::string kXmmaFp8 =
    "sm90_xmma_gemm_e4m3e4m3_e4m3f32_f32_tn_n_tilesize128x128x128_warpgroupsize1x1x1_"
    "execute_segment_k_off_kernel__5x_cublas";
// Strict FP32 (no TF32) runs on the SIMT pipe.
const std::string kSimtFp32 =
    "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x64x8_stage3_warpsize2x2x1_ffma_"
    "aligna4_alignc4_execute_kernel__5x_cublas";
const std::string kSplitKReduce = "splitKreduce_kernel";

fake_lib::LibraryDriver& driver() {
  static fake_lib::LibraryDriver d(
      {kNvjet, kXmmaBf16, kXmmaF16, kXmmaTf32, kXmmaFp8, kSimtFp32, kSplitKReduce});
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
  cudaDataType a_type = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;

  // FP32 data computed in FP32: no tensor cores.
  bool simt() const {
    return a_type == CUDA_R_32F &&
           (compute == CUBLAS_COMPUTE_32F || compute == CUBLAS_COMPUTE_32F_PEDANTIC);
  }
};

Problem problem(const cublasLtMatmulDescOpaque_t* desc, const cublasLtMatrixLayoutOpaque_t* a,
                const cublasLtMatrixLayoutOpaque_t* d) {
  Problem p;
  p.m = std::int64_t(d->data[kRows]);
  p.n = std::int64_t(d->data[kCols]);
  const bool trans_a = desc->data[kTransA] != CUBLAS_OP_N;
  p.k = std::int64_t(trans_a ? a->data[kRows] : a->data[kCols]);
  p.batch = std::max<std::int64_t>(1, std::int64_t(d->data[kBatch]));
  p.a_type = cudaDataType(a->data[kType]);
  p.compute = cublasComputeType_t(desc->data[kCompute]);
  return p;
}

void set_algo(cublasLtMatmulAlgo_t* algo, int id, cublasLtMatmulTile_t tile,
              cublasLtMatmulStages_t stages, int split) {
  std::memset(algo, 0, sizeof(*algo));
  algo->data[kAlgoId] = std::uint64_t(id);
  algo->data[kTile] = tile;
  algo->data[kStages] = stages;
  algo->data[kSplitK] = std::uint64_t(split);
  algo->data[kInitialised] = 1;
}

// Large outputs get the Hopper nvjet kernel with a 1x2 cluster, the rest the xmma kernel;
// a long reduction is split four ways and reduced by a second kernel. Strict FP32 runs the
// SIMT kernel whatever the size.
void heuristic(const Problem& p, cublasLtMatmulAlgo_t* algo) {
  const bool long_k = p.k >= 4 * std::max(p.m, p.n);
  if (p.simt()) {
    set_algo(algo, 5, CUBLASLT_MATMUL_TILE_128x64, CUBLASLT_MATMUL_STAGES_8x3, long_k ? 4 : 1);
    return;
  }
  const bool big = p.m * p.n >= 1024 * 1024;
  set_algo(algo, big ? 66 : 21, big ? CUBLASLT_MATMUL_TILE_128x256 : CUBLASLT_MATMUL_TILE_128x128,
           big ? CUBLASLT_MATMUL_STAGES_64x4 : CUBLASLT_MATMUL_STAGES_64x3,
           (!big && long_k) ? 4 : 1);
}

// What the heuristic ranks below its choice: the other tile and the other split-K factors.
int candidates(const Problem& p, cublasLtMatmulAlgo_t* out, int max) {
  std::vector<cublasLtMatmulAlgo_t> all(1);
  heuristic(p, all.data());
  auto add = [&](int id, cublasLtMatmulTile_t tile, cublasLtMatmulStages_t stages, int split) {
    for (const auto& a : all) {
      if (a.data[kTile] == std::uint64_t(tile) && a.data[kSplitK] == std::uint64_t(split)) return;
    }
    all.emplace_back();
    set_algo(&all.back(), id, tile, stages, split);
  };
  if (p.simt()) {
    for (int split : {1, 2, 4})
      add(5, CUBLASLT_MATMUL_TILE_128x64, CUBLASLT_MATMUL_STAGES_8x3, split);
  } else {
    add(66, CUBLASLT_MATMUL_TILE_128x256, CUBLASLT_MATMUL_STAGES_64x4, 1);
    for (int split : {1, 2, 4})
      add(21, CUBLASLT_MATMUL_TILE_128x128, CUBLASLT_MATMUL_STAGES_64x3, split);
  }
  const int n = std::min<int>(max, int(all.size()));
  for (int i = 0; i < n; ++i) out[i] = all[std::size_t(i)];
  return n;
}

// Runs the GEMM on the kernels the algorithm (or, without one, the heuristic) selects.
cublasStatus_t run(const Problem& p, const cublasLtMatmulAlgo_t* algo, cudaStream_t stream) {
  cublasLtMatmulAlgo_t chosen{};
  if (algo != nullptr && algo->data[kInitialised] != 0) {
    chosen = *algo;
  } else {
    heuristic(p, &chosen);
  }
  auto s = reinterpret_cast<CUstream>(stream);
  CUresult r = CUDA_SUCCESS;
  const unsigned batch = unsigned(p.batch);
  fake_sim::GemmWork work;
  work.m = p.m;
  work.n = p.n;
  work.k = p.k;
  work.batch = p.batch;
  const bool half = p.a_type == CUDA_R_16BF || p.a_type == CUDA_R_16F;
  const bool fp8 = p.a_type == CUDA_R_8F_E4M3 || p.a_type == CUDA_R_8F_E5M2;
  work.element_bytes = half ? 2 : fp8 ? 1 : 4;
  work.math = half  ? fake_sim::GemmMath::kHalf
              : fp8 ? fake_sim::GemmMath::kFp8
                    : fake_sim::GemmMath::kTf32;
  if (chosen.data[kTile] == CUBLASLT_MATMUL_TILE_128x256) {
    const unsigned gy = (fake_lib::ceil_div(p.n, 256) + 1) / 2 * 2;  // whole clusters
    work.tile_m = 128;
    work.tile_n = 256;
    work.tile_k = 64;
    r = driver().launch_cluster(kNvjet, fake_lib::ceil_div(p.m, 128), gy, batch, 384, 1, 2, s,
                                &work, sizeof(work));
  } else {
    const bool simt = chosen.data[kTile] == CUBLASLT_MATMUL_TILE_128x64;
    const std::string& name = simt                      ? kSimtFp32
                              : p.a_type == CUDA_R_16BF ? kXmmaBf16
                              : p.a_type == CUDA_R_16F  ? kXmmaF16
                              : fp8                     ? kXmmaFp8
                                                        : kXmmaTf32;
    const unsigned split = unsigned(std::max<std::uint64_t>(1, chosen.data[kSplitK]));
    const unsigned tile_n = simt ? 64 : 128;
    work.tile_m = 128;
    work.tile_n = tile_n;
    work.tile_k = simt ? 8 : half ? 64 : fp8 ? 128 : 32;
    work.split_k = split;
    if (simt) work.math = fake_sim::GemmMath::kFp32Simt;
    r = driver().launch(name, fake_lib::ceil_div(p.m, 128), fake_lib::ceil_div(p.n, tile_n),
                        batch * split, 256, s, &work, sizeof(work));
    if (r == CUDA_SUCCESS && split > 1) {
      r = driver().launch(kSplitKReduce, fake_lib::ceil_div(p.m * p.n, 256), 1, batch, 256, s);
    }
  }
  return r == CUDA_SUCCESS ? CUBLAS_STATUS_SUCCESS : CUBLAS_STATUS_EXECUTION_FAILED;
}

cublasStatus_t for_cublas(cublasLtHandle_t h, const FakeLtProblem* in) {
  if (h == nullptr || in == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  if (in->m <= 0 || in->n <= 0 || in->k <= 0 || in->batch <= 0) return CUBLAS_STATUS_INVALID_VALUE;
  Problem p;
  p.m = in->m;
  p.n = in->n;
  p.k = in->k;
  p.batch = in->batch;
  p.a_type = in->a_type;
  p.compute = in->compute;
  return run(p, nullptr, in->stream);
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
                                        cublasComputeType_t computeType, cudaDataType_t scaleType) {
  if (matmulDesc == nullptr) return CUBLAS_STATUS_INVALID_VALUE;
  auto* d = new cublasLtMatmulDescOpaque_t{};
  d->data[kCompute] = std::uint64_t(computeType);
  d->data[kScale] = std::uint64_t(scaleType);
  d->data[kTransA] = CUBLAS_OP_N;
  d->data[kTransB] = CUBLAS_OP_N;
  d->data[kEpilogue] = CUBLASLT_EPILOGUE_DEFAULT;
  d->data[kAScaleMode] = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  d->data[kBScaleMode] = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  *matmulDesc = d;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t matmulDesc) {
  delete matmulDesc;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t d,
                                              cublasLtMatmulDescAttributes_t attr, const void* buf,
                                              size_t size) {
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
    case CUBLASLT_MATMUL_DESC_A_SCALE_MODE:
      return set_field<std::int32_t>(d->data, kAScaleMode, buf, size);
    case CUBLASLT_MATMUL_DESC_B_SCALE_MODE:
      return set_field<std::int32_t>(d->data, kBScaleMode, buf, size);
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
    case CUBLASLT_MATMUL_DESC_A_SCALE_MODE:
      return get_field<std::int32_t>(d->data, kAScaleMode, buf, size, written);
    case CUBLASLT_MATMUL_DESC_B_SCALE_MODE:
      return get_field<std::int32_t>(d->data, kBScaleMode, buf, size, written);
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
                                              cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t,
                                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t Ddesc,
                                              cublasLtMatmulPreference_t, int requestedAlgoCount,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int* returnAlgoCount) {
  if (desc == nullptr || Adesc == nullptr || Ddesc == nullptr || results == nullptr ||
      returnAlgoCount == nullptr || requestedAlgoCount < 1) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  std::vector<cublasLtMatmulAlgo_t> algos(std::size_t(std::min(requestedAlgoCount, 8)));
  const int n = candidates(problem(desc, Adesc, Ddesc), algos.data(), int(algos.size()));
  for (int i = 0; i < n; ++i) {
    std::memset(&results[i], 0, sizeof(results[i]));
    results[i].algo = algos[std::size_t(i)];
    results[i].state = CUBLAS_STATUS_SUCCESS;
    results[i].wavesCount = 1.0f;
  }
  *returnAlgoCount = n;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoCheck(cublasLtHandle_t lightHandle, cublasLtMatmulDesc_t desc,
                                       cublasLtMatrixLayout_t Adesc, cublasLtMatrixLayout_t Bdesc,
                                       cublasLtMatrixLayout_t Cdesc, cublasLtMatrixLayout_t Ddesc,
                                       const cublasLtMatmulAlgo_t* algo,
                                       cublasLtMatmulHeuristicResult_t* result) {
  if (lightHandle == nullptr || desc == nullptr || Adesc == nullptr || Bdesc == nullptr ||
      Cdesc == nullptr || Ddesc == nullptr || algo == nullptr || result == nullptr ||
      algo->data[kInitialised] == 0) {
    return CUBLAS_STATUS_INVALID_VALUE;
  }
  // The SIMT tile runs strict FP32 only, and strict FP32 runs nothing else.
  const bool simt_tile = algo->data[kTile] == CUBLASLT_MATMUL_TILE_128x64;
  if (simt_tile != problem(desc, Adesc, Ddesc).simt()) return CUBLAS_STATUS_NOT_SUPPORTED;
  std::memset(result, 0, sizeof(*result));
  result->algo = *algo;
  result->state = CUBLAS_STATUS_SUCCESS;
  result->wavesCount = 1.0f;
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
    case CUBLASLT_ALGO_CONFIG_TILE_ID:
      return set_field<std::uint32_t>(algo->data, kTile, buf, size);
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
  return run(p, algo, stream);
}

// cuBLAS's way in (fake_cublaslt_internal.h): the same kernels, chosen by the heuristic.
cublasStatus_t cublasLt_for_cublas_HSH(cublasLtHandle_t h, const FakeLtProblem* p) {
  return for_cublas(h, p);
}
cublasStatus_t cublasLt_for_cublas_HSS(cublasLtHandle_t h, const FakeLtProblem* p) {
  return for_cublas(h, p);
}
cublasStatus_t cublasLt_for_cublas_HHH(cublasLtHandle_t h, const FakeLtProblem* p) {
  return for_cublas(h, p);
}
cublasStatus_t cublasLt_for_cublas_TST(cublasLtHandle_t h, const FakeLtProblem* p) {
  return for_cublas(h, p);
}
cublasStatus_t cublasLt_for_cublas_TSS(cublasLtHandle_t h, const FakeLtProblem* p) {
  return for_cublas(h, p);
}

}  // extern "C"
