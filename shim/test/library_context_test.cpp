#include "interpose/library_context.h"

#include <gtest/gtest.h>

namespace pm2lat::shim {
namespace {

TEST(LibraryCallScope, OnlyTheOutermostCallDescribesAndCountsTheCall) {
  const std::uint64_t before = library_calls_made();
  {
    LibraryCallScope outer(LibrarySource::kCublas, LibraryApi::kCublasGemmEx, OpKind::kGemm);
    ASSERT_TRUE(outer.outermost());
    outer.op().gemm().m = 128;
    const std::uint64_t id = outer.op().call_id;
    {
      LibraryCallScope inner(LibrarySource::kCublasLt, LibraryApi::kCublasLtMatmul, OpKind::kGemm);
      EXPECT_FALSE(inner.outermost());
      EXPECT_EQ(inner.op().call_id, id);  // still the cuBLAS call
      EXPECT_EQ(inner.op().source, LibrarySource::kCublas);
      EXPECT_EQ(inner.op().gemm().m, 128);
    }
    EXPECT_EQ(thread_state().library.depth, 1u);
  }
  EXPECT_EQ(thread_state().library.depth, 0u);
  EXPECT_EQ(thread_state().library.op.call_id, 0u);
  EXPECT_EQ(library_calls_made(), before + 1);
}

TEST(LibraryTypes, BlasConventionAndTypes) {
  const GemmShape g = blas_gemm_shape(CUBLAS_OP_T, CUBLAS_OP_N, 64, 32, 16, 4, DType::kBf16,
                                      DType::kBf16, DType::kFp32, DType::kFp32);
  EXPECT_EQ(g.m, 64);
  EXPECT_EQ(g.n, 32);
  EXPECT_EQ(g.k, 16);
  EXPECT_EQ(g.batch, 4);
  EXPECT_TRUE(g.trans_a);
  EXPECT_FALSE(g.trans_b);
  EXPECT_EQ(from_cuda_data_type(CUDA_R_16BF), DType::kBf16);
  EXPECT_EQ(from_cuda_data_type(CUDA_R_8F_E4M3), DType::kFp8E4M3);
  EXPECT_EQ(from_cublas_compute(CUBLAS_COMPUTE_32F, DType::kFp32, true), DType::kTf32);
  EXPECT_EQ(from_cublas_compute(CUBLAS_COMPUTE_32F, DType::kBf16, true), DType::kFp32);
  EXPECT_EQ(from_cublas_compute(CUBLAS_COMPUTE_32F_FAST_TF32, DType::kFp32, false), DType::kTf32);
  EXPECT_EQ(from_cudnn_data_type(CUDNN_DATA_HALF), DType::kFp16);
}

TEST(LibraryTypes, CublasLtScaleModesSayHowLowPrecisionOperandsAreScaled) {
  const DType e4m3 = DType::kFp8E4M3;
  EXPECT_EQ(from_cublaslt_scale_modes(CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
                                      CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, e4m3),
            GemmScaling::kPerTensor);
  EXPECT_EQ(from_cublaslt_scale_modes(CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,
                                      CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F, e4m3),
            GemmScaling::kBlock128);
  EXPECT_EQ(from_cublaslt_scale_modes(CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F,
                                      CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F, e4m3),
            GemmScaling::kPerToken);
  EXPECT_EQ(from_cublaslt_scale_modes(CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0,
                                      CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0, e4m3),
            GemmScaling::kMx32);
  EXPECT_EQ(from_cublaslt_scale_modes(CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3,
                                      CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3, DType::kFp4E2M1),
            GemmScaling::kNv16);
  // A mode these headers do not know: B's decides; neither known: not said.
  EXPECT_EQ(from_cublaslt_scale_modes(99, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, e4m3),
            GemmScaling::kPerTensor);
  EXPECT_EQ(from_cublaslt_scale_modes(99, 98, e4m3), GemmScaling::kNone);
  // BF16 operands have no scale factors beyond alpha and beta.
  EXPECT_EQ(from_cublaslt_scale_modes(CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
                                      CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F, DType::kBf16),
            GemmScaling::kNone);
}

TEST(LibraryTypes, CublasLtTilesAndStagesComeFromTheHeaderEnumerators) {
  std::int32_t m = 0, n = 0, k = 0, s = 0;
  ASSERT_TRUE(cublaslt_tile(CUBLASLT_MATMUL_TILE_128x256, &m, &n));
  EXPECT_EQ(m, 128);
  EXPECT_EQ(n, 256);
  ASSERT_TRUE(cublaslt_tile(CUBLASLT_MATMUL_TILE_64x96, &m, &n));
  EXPECT_EQ(n, 96);
  EXPECT_FALSE(cublaslt_tile(CUBLASLT_MATMUL_TILE_UNDEFINED, &m, &n));
  ASSERT_TRUE(cublaslt_stages(CUBLASLT_MATMUL_STAGES_64x4, &k, &s));
  EXPECT_EQ(k, 64);
  EXPECT_EQ(s, 4);
  EXPECT_FALSE(cublaslt_stages(CUBLASLT_MATMUL_STAGES_64xAUTO, &k, &s));
}

}  // namespace
}  // namespace pm2lat::shim
