// Calls cuBLAS, cuBLASLt and cuDNN the way frameworks do (linked dynamically), so that the
// test can check each kernel carries its call's context: GEMM shapes, types, layouts,
// cuBLASLt's algorithm, convolution shapes; split-K reductions inherit the GEMM's context;
// cuBLAS calling cuBLASLt counts once. Prints "calls <n>" (top-level library calls made).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>
#include <cudnn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "program_support.h"

namespace {

int g_calls = 0;

void blas(cublasStatus_t s, const char* what) {
  ++g_calls;
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d\n", what, int(s));
    std::exit(95);
  }
}

void dnn(cudnnStatus_t s, const char* what, bool counts = true) {
  if (counts) ++g_calls;
  if (s != CUDNN_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s failed: %d\n", what, int(s));
    std::exit(96);
  }
}

cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type) {
  cudnnBackendDescriptor_t d = nullptr;
  dnn(cudnnBackendCreateDescriptor(type, &d), "create", false);
  return d;
}

void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t a, cudnnBackendAttributeType_t t,
         int64_t n, const void* v) {
  dnn(cudnnBackendSetAttribute(d, a, t, n, v), "set", false);
}

cudnnBackendDescriptor_t tensor(std::vector<int64_t> dims, int64_t uid) {
  cudnnBackendDescriptor_t t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  const cudnnDataType_t type = CUDNN_DATA_HALF;
  std::vector<int64_t> strides(dims.size(), 1);
  for (int i = int(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
  set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, int64_t(dims.size()), dims.data());
  set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, int64_t(strides.size()), strides.data());
  set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  dnn(cudnnBackendFinalize(t), "finalize", false);
  return t;
}

}  // namespace

int main() {
  test_program::init_primary_context();
  cublasHandle_t h = nullptr;
  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) return 97;
  const float alpha = 1, beta = 0;

  // FP32 on SIMT kernels; then a long reduction split four ways.
  blas(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 512, 256, 128, &alpha, nullptr, 512, nullptr, 128,
                   &beta, nullptr, 512),
       "sgemm");
  blas(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 64, 8192, &alpha, nullptr, 64, nullptr, 8192,
                   &beta, nullptr, 64),
       "sgemm split-k");
  // TF32 allowed by the handle's math mode.
  cublasSetMathMode(h, CUBLAS_TF32_TENSOR_OP_MATH);
  blas(cublasSgemm(h, CUBLAS_OP_T, CUBLAS_OP_N, 256, 256, 64, &alpha, nullptr, 64, nullptr, 64,
                   &beta, nullptr, 256),
       "sgemm tf32");
  cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
  blas(cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_T, 128, 96, 64, &alpha, nullptr, 128,
                                 128 * 64, nullptr, 96, 96 * 64, &beta, nullptr, 128, 128 * 96, 3),
       "sgemm strided batched");

  // BF16 through cublasGemmEx: cuBLAS calls cuBLASLt, which runs a Hopper kernel with a
  // cluster through cuLaunchKernelEx.
  blas(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, 4096, 4096, 1024, &alpha, nullptr, CUDA_R_16BF,
                    1024, nullptr, CUDA_R_16BF, 1024, &beta, nullptr, CUDA_R_16BF, 4096,
                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
       "gemm ex bf16");
  blas(cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, 300, 200, 100, &alpha, nullptr, CUDA_R_32F, 300,
                       nullptr, CUDA_R_32F, 100, &beta, nullptr, CUDA_R_32F, 300,
                       CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT),
       "gemm ex 64");
  blas(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 128, 128, 128, &alpha, nullptr,
                                  CUDA_R_16F, 128, 128 * 128, nullptr, CUDA_R_16F, 128, 128 * 128,
                                  &beta, nullptr, CUDA_R_16F, 128, 128 * 128, 8, CUBLAS_COMPUTE_32F,
                                  CUBLAS_GEMM_DEFAULT),
       "gemm strided batched ex");
  blas(cublasGemmBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 64, 32, 16, &alpha, nullptr, CUDA_R_32F, 64,
                           nullptr, CUDA_R_32F, 16, &beta, nullptr, CUDA_R_32F, 64, 5,
                           CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
       "gemm batched ex");
  __half halpha{}, hbeta{};
  blas(cublasHgemm(h, CUBLAS_OP_N, CUBLAS_OP_T, 256, 256, 256, &halpha, nullptr, 256, nullptr, 256,
                   &hbeta, nullptr, 256),
       "hgemm");

  // cuBLASLt directly, with the algorithm its heuristic chose (split-K 4, 128x128 tile).
  {
    cublasLtHandle_t lt = nullptr;
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const int32_t ta = CUBLAS_OP_T;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, 4096, 512, 4096);  // k x m, transposed
    cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, 4096, 256, 4096);  // k x n
    cublasLtMatrixLayoutCreate(&c, CUDA_R_16BF, 512, 256, 512);    // m x n
    cublasLtMatmulPreference_t pref = nullptr;
    cublasLtMatmulPreferenceCreate(&pref);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    if (cublasLtMatmulAlgoGetHeuristic(lt, desc, a, b, c, c, pref, 1, &result, &found) !=
            CUBLAS_STATUS_SUCCESS ||
        found != 1) {
      return 98;
    }
    blas(cublasLtMatmul(lt, desc, &alpha, nullptr, a, nullptr, b, &beta, nullptr, c, nullptr, c,
                        &result.algo, nullptr, 0, nullptr),
         "lt matmul");
  }

  // cuBLASLt in FP8 with DeepSeek-style block scales (1x128 activation blocks, 128x128 weight
  // blocks), TN as cuBLASLt requires for FP8, BF16 out; the heuristic picks the algorithm.
  {
    cublasLtHandle_t lt = nullptr;
    cublasLtCreate(&lt);
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
    const int32_t ta = CUBLAS_OP_T;
    const int32_t a_mode = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    const int32_t b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &a_mode,
                                   sizeof(a_mode));
    cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &b_mode,
                                   sizeof(b_mode));
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
    cublasLtMatrixLayoutCreate(&a, CUDA_R_8F_E4M3, 2048, 256, 2048);   // k x m, transposed
    cublasLtMatrixLayoutCreate(&b, CUDA_R_8F_E4M3, 2048, 1024, 2048);  // k x n
    cublasLtMatrixLayoutCreate(&c, CUDA_R_16BF, 256, 1024, 256);       // m x n
    blas(cublasLtMatmul(lt, desc, &alpha, nullptr, a, nullptr, b, &beta, nullptr, c, nullptr, c,
                        nullptr, nullptr, 0, nullptr),
         "lt fp8 matmul");
  }

  // cuDNN: the legacy convolution API.
  cudnnHandle_t dh = nullptr;
  dnn(cudnnCreate(&dh), "cudnnCreate", false);
  {
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    cudnnCreateTensorDescriptor(&x);
    cudnnCreateTensorDescriptor(&y);
    cudnnCreateFilterDescriptor(&w);
    cudnnCreateConvolutionDescriptor(&conv);
    cudnnSetTensor4dDescriptor(x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 64, 56, 56);
    cudnnSetFilter4dDescriptor(w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, 128, 64, 3, 3);
    cudnnSetConvolution2dDescriptor(conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                    CUDNN_DATA_FLOAT);
    cudnnSetTensor4dDescriptor(y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 8, 128, 56, 56);
    dnn(cudnnConvolutionForward(dh, &alpha, x, nullptr, w, nullptr, conv,
                                CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM, nullptr, 0, &beta,
                                y, nullptr),
        "conv forward");
  }

  // cuDNN: the graph API, executed twice (the second time from the plan cache).
  {
    auto x = tensor({16, 32, 28, 28}, 1);
    auto w = tensor({64, 32, 5, 5}, 2);
    auto y = tensor({16, 64, 14, 14}, 3);
    auto conv = make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    const int64_t dims = 2, pad[] = {2, 2}, stride[] = {2, 2}, dil[] = {1, 1};
    set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
    set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pad);
    set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, stride);
    set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, dil);
    dnn(cudnnBackendFinalize(conv), "finalize", false);
    auto op = make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &conv);
    dnn(cudnnBackendFinalize(op), "finalize", false);
    auto graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
    dnn(cudnnBackendFinalize(graph), "finalize", false);
    auto engine = make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    set(engine, CUDNN_ATTR_ENGINE_OPERATION_GRAPH, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    dnn(cudnnBackendFinalize(engine), "finalize", false);
    auto cfg = make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    set(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &engine);
    dnn(cudnnBackendFinalize(cfg), "finalize", false);
    auto plan = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    set(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg);
    dnn(cudnnBackendFinalize(plan), "finalize", false);
    auto pack = make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    dnn(cudnnBackendFinalize(pack), "finalize", false);
    dnn(cudnnBackendExecute(dh, plan, pack), "backend execute");
    dnn(cudnnBackendExecute(dh, plan, pack), "backend execute");
  }

  cuCtxSynchronize();
  std::printf("calls %d\n", g_calls);
  return 0;
}
