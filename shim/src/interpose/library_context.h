// The library call a thread is inside (cuBLAS, cuBLASLt, cuDNN), and the conversions from
// those libraries' types to the predictor's. Every kernel launched inside the call inherits
// its context; nested calls (cuBLAS calling cuBLASLt) keep the outermost one, so a GEMM is
// one call however many kernels and layers it goes through.
#pragma once

#include <cublasLt.h>
#include <cublas_api.h>
#include <cudnn.h>
#include <library_types.h>

#include <atomic>
#include <cstdint>

#include "interpose/next_definition.h"
#include "launch_path/launch_slot.h"
#include "launch_path/thread_state.h"
#include "pm2lat/dtype.h"
#include "pm2lat/gemm_scaling.h"
#include "pm2lat/op_context.h"

namespace pm2lat::shim {

class LibraryCallScope {
 public:
  LibraryCallScope(LibrarySource source, LibraryApi api, OpKind kind) noexcept;
  ~LibraryCallScope();
  LibraryCallScope(const LibraryCallScope&) = delete;
  LibraryCallScope& operator=(const LibraryCallScope&) = delete;

  // Only the outermost scope describes the call; inner ones leave the context alone.
  bool outermost() const noexcept { return outermost_; }
  OpPod& op() noexcept { return thread_state().library.op; }
  // Hands the (now described) context to the worker, ahead of the call's kernels. Called
  // again when an inner call adds to it.
  void publish() noexcept;

 private:
  bool outermost_;
};

// Outermost library calls made so far in this process.
std::uint64_t library_calls_made() noexcept;

DType from_cuda_data_type(cudaDataType t) noexcept;
// The math type of a cuBLAS compute type; `inputs` disambiguates 32F (fp32 unless TF32 is
// allowed by `tf32_allowed`).
DType from_cublas_compute(cublasComputeType_t c, DType inputs, bool tf32_allowed) noexcept;
DType from_cudnn_data_type(cudnnDataType_t t) noexcept;
// How a cuBLASLt matmul with operand type `a` scales its operands, from the descriptor's
// CUBLASLT_MATMUL_DESC_A_SCALE_MODE / B_SCALE_MODE (cublasLtMatmulMatrixScale_t; int32, 0 =
// one FP32 scalar by default). kNone for an operand type that is not FP8 or FP4, whose
// scale factors are only alpha and beta.
GemmScaling from_cublaslt_scale_modes(std::int32_t a_mode, std::int32_t b_mode, DType a) noexcept;

// cuBLAS's column-major convention: C(m x n) = op(A)(m x k) * op(B)(k x n).
GemmShape blas_gemm_shape(cublasOperation_t ta, cublasOperation_t tb, std::int64_t m,
                          std::int64_t n, std::int64_t k, std::int64_t batch, DType a, DType b,
                          DType c, DType compute) noexcept;

// Tile and stages of a cuBLASLt algorithm, from its cublasLtMatmulTile_t and
// cublasLtMatmulStages_t ids. False for ids this build does not know.
bool cublaslt_tile(std::uint32_t tile_id, std::int32_t* m, std::int32_t* n) noexcept;
bool cublaslt_stages(std::uint32_t stages_id, std::int32_t* k, std::int32_t* stages) noexcept;

}  // namespace pm2lat::shim
