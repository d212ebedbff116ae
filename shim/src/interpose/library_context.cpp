#include "interpose/library_context.h"

#include "launch_path/launch_path_state.h"
#include "launch_path/launch_recorder.h"

#include "interpose/cublaslt_tiles.inc"

namespace pm2lat::shim {

namespace {
std::atomic<std::uint64_t> g_next_call_id{1};
}  // namespace

LibraryCallScope::LibraryCallScope(LibrarySource source, LibraryApi api, OpKind kind) noexcept {
  LibraryCallState& lib = thread_state().library;
  outermost_ = lib.depth == 0;
  ++lib.depth;
  if (!outermost_) return;
  lib.op = OpPod{};
  lib.op.call_id = g_next_call_id.fetch_add(1, std::memory_order_relaxed);
  lib.op.source = source;
  lib.op.api = api;
  lib.op.kind = kind;
}

void LibraryCallScope::publish() noexcept {
  if (!launch_path_state().ready() || thread_state().internal) return;
  LaunchSlot* s = begin_event_slot(SlotKind::kLibraryCall);
  if (s == nullptr) return;
  set_library_call(*s, thread_state().library.op);
  commit_slot(s, 0);
}

LibraryCallScope::~LibraryCallScope() {
  LibraryCallState& lib = thread_state().library;
  if (lib.depth > 0 && --lib.depth == 0) lib.op.call_id = 0;
}

std::uint64_t library_calls_made() noexcept {
  return g_next_call_id.load(std::memory_order_relaxed) - 1;
}

DType from_cuda_data_type(cudaDataType t) noexcept {
  switch (t) {
    case CUDA_R_64F: return DType::kFp64;
    case CUDA_R_32F: return DType::kFp32;
    case CUDA_R_16F: return DType::kFp16;
    case CUDA_R_16BF: return DType::kBf16;
    case CUDA_R_8F_E4M3: return DType::kFp8E4M3;
    case CUDA_R_8F_E5M2: return DType::kFp8E5M2;
    case CUDA_R_4F_E2M1: return DType::kFp4E2M1;
    case CUDA_R_8I: return DType::kInt8;
    case CUDA_R_32I: return DType::kInt32;
    case CUDA_R_64I: return DType::kInt64;
    default: return DType::kUnknown;
  }
}

GemmScaling from_cublaslt_scale_modes(std::int32_t a_mode, std::int32_t b_mode, DType a) noexcept {
  if (!is_scaled_dtype(a)) return GemmScaling::kNone;
  // The activation's mode names the recipe; DeepSeek-style block scaling pairs 1x128
  // activation blocks (VEC128_32F) with 128x128 weight blocks (BLK128x128_32F).
  for (const std::int32_t mode : {a_mode, b_mode}) {
    switch (mode) {
      case CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F: return GemmScaling::kPerTensor;
      case CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3: return GemmScaling::kNv16;
      case CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0: return GemmScaling::kMx32;
      case CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F: return GemmScaling::kPerToken;
      case CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F:
      case CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F: return GemmScaling::kBlock128;
      default: break;  // a mode newer than these headers: try B's
    }
  }
  return GemmScaling::kNone;
}

DType from_cublas_compute(cublasComputeType_t c, DType inputs, bool tf32_allowed) noexcept {
  switch (c) {
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
    case CUBLAS_COMPUTE_32F_FAST_16F: return DType::kFp16;
    case CUBLAS_COMPUTE_32F_FAST_16BF: return DType::kBf16;
    case CUBLAS_COMPUTE_32F_FAST_TF32: return DType::kTf32;
    case CUBLAS_COMPUTE_32F:
    case CUBLAS_COMPUTE_32F_PEDANTIC:
      return (inputs == DType::kFp32 && tf32_allowed) ? DType::kTf32 : DType::kFp32;
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC: return DType::kFp64;
    case CUBLAS_COMPUTE_32I:
    case CUBLAS_COMPUTE_32I_PEDANTIC: return DType::kInt32;
    default: return DType::kUnknown;
  }
}

DType from_cudnn_data_type(cudnnDataType_t t) noexcept {
  switch (t) {
    case CUDNN_DATA_FLOAT: return DType::kFp32;
    case CUDNN_DATA_DOUBLE: return DType::kFp64;
    case CUDNN_DATA_HALF: return DType::kFp16;
    case CUDNN_DATA_BFLOAT16: return DType::kBf16;
    case CUDNN_DATA_INT8: return DType::kInt8;
    case CUDNN_DATA_INT32: return DType::kInt32;
    case CUDNN_DATA_INT64: return DType::kInt64;
    case CUDNN_DATA_FP8_E4M3: return DType::kFp8E4M3;
    case CUDNN_DATA_FP8_E5M2: return DType::kFp8E5M2;
    case CUDNN_DATA_BOOLEAN: return DType::kBool;
    default: return DType::kUnknown;
  }
}

GemmShape blas_gemm_shape(cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
                          std::int64_t n, std::int64_t k, std::int64_t batch, DType a, DType b,
                          DType c, DType compute) noexcept {
  GemmShape g;
  g.batch = batch;
  g.m = m;
  g.n = n;
  g.k = k;
  g.trans_a = ta != CUBLAS_OP_N;
  g.trans_b = tb != CUBLAS_OP_N;
  g.a = a;
  g.b = b;
  g.c = c;
  g.compute = compute;
  return g;
}

// One case per cublasLtMatmulTile_t enumerator of the header (cublaslt_tiles.inc): long by
// nature, flat and generated.
// NOLINTNEXTLINE(readability-function-size)
bool cublaslt_tile(std::uint32_t tile_id, std::int32_t* m, std::int32_t* n) noexcept {
  switch (tile_id) {
#define PM2LAT_TILE_CASE(id, a, b) \
  case id:                         \
    *m = a;                        \
    *n = b;                        \
    return true;
    PM2LAT_CUBLASLT_TILES(PM2LAT_TILE_CASE)
#undef PM2LAT_TILE_CASE
    default: return false;
  }
}

bool cublaslt_stages(std::uint32_t stages_id, std::int32_t* k, std::int32_t* stages) noexcept {
  switch (stages_id) {
#define PM2LAT_STAGES_CASE(id, a, b) \
  case id:                           \
    *k = a;                          \
    *stages = b;                     \
    return true;
    PM2LAT_CUBLASLT_STAGES(PM2LAT_STAGES_CASE)
#undef PM2LAT_STAGES_CASE
    default: return false;
  }
}

}  // namespace pm2lat::shim
