#include "step_device.h"

#include <stdexcept>
#include <string>

#include "aten_kernels.h"

namespace bert_step {
namespace {

// Workspace offered to cuBLASLt's algorithms (split-K needs some).
constexpr std::size_t kLtWorkspaceBytes = 32u << 20;
constexpr std::size_t kBf16Bytes = 2;

void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: " + std::to_string(r));
}

void check(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + " failed: " + std::to_string(int(s)));
}

// A PTX module with an empty entry for every kernel name: the driver reports and launches
// them under these names. This program shows a runtime what a training step launches, not
// the work itself, so the bodies and arguments are left out.
std::string kernel_module() {
  std::string ptx = ".version 8.0\n.target sm_80\n.address_size 64\n";
  for (const char* name : kernels::kAll)
    ptx += ".visible .entry " + std::string(name) + "()\n{\n\tret;\n}\n";
  return ptx;
}

}  // namespace

StepDevice::StepDevice(std::size_t max_activation_elements, std::size_t max_weight_elements) {
  check(cuInit(0), "cuInit");
  check(cuDeviceGet(&device_, 0), "cuDeviceGet");
  check(cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  check(cuDeviceGetAttribute(&sm_count_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_),
        "cuDeviceGetAttribute");
  check(cuDeviceGetAttribute(&max_threads_per_sm_,
                             CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, device_),
        "cuDeviceGetAttribute");
  if (sm_count_ <= 0 || max_threads_per_sm_ <= 0)
    throw std::runtime_error("cuDeviceGetAttribute reports no SMs or no threads per SM");
  const std::string ptx = kernel_module();
  check(cuModuleLoadData(&module_, ptx.c_str()), "cuModuleLoadData");
  // One buffer per GEMM operand role, reused by every layer: the values do not matter here.
  check(cuMemAlloc(&activations_, max_activation_elements * kBf16Bytes), "cuMemAlloc");
  check(cuMemAlloc(&outputs_, max_activation_elements * kBf16Bytes), "cuMemAlloc");
  check(cuMemAlloc(&weights_, max_weight_elements * kBf16Bytes), "cuMemAlloc");
  check(cuMemAlloc(&bias_, max_weight_elements * kBf16Bytes), "cuMemAlloc");
  check(cuMemAlloc(&workspace_, kLtWorkspaceBytes), "cuMemAlloc");
  check(cublasCreate(&blas_), "cublasCreate");
  check(cublasLtCreate(&lt_), "cublasLtCreate");
}

StepDevice::~StepDevice() {
  if (lt_ != nullptr) cublasLtDestroy(lt_);
  if (blas_ != nullptr) cublasDestroy(blas_);
  for (CUdeviceptr p : {activations_, outputs_, weights_, bias_, workspace_}) {
    if (p != 0) cuMemFree(p);
  }
  if (module_ != nullptr) cuModuleUnload(module_);
  if (context_ != nullptr) cuDevicePrimaryCtxRelease(device_);
}

std::string StepDevice::name() const {
  char buf[256] = {};
  if (cuDeviceGetName(buf, sizeof(buf), device_) != CUDA_SUCCESS) return "?";
  return buf;
}

CUfunction StepDevice::function(const char* kernel) {
  CUfunction f = nullptr;
  check(cuModuleGetFunction(&f, module_, kernel), "cuModuleGetFunction");
  return f;
}

void StepDevice::launch(const char* kernel, Dim grid, Dim block) {
  check(cuLaunchKernel(function(kernel), grid.x, grid.y, grid.z, block.x, block.y, block.z, 0,
                       nullptr, nullptr, nullptr),
        "cuLaunchKernel");
  ++launches_;
}

void StepDevice::linear_forward(std::int64_t tokens, std::int64_t in, std::int64_t out) {
  // Column-major, as cuBLAS sees PyTorch's row-major tensors: D[out, tokens] =
  // op(A)[out, in] B[in, tokens] + bias, A = W stored [in, out] and transposed.
  cublasLtMatmulDesc_t desc = nullptr;
  check(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F),
        "cublasLtMatmulDescCreate");
  const cublasOperation_t transa = CUBLAS_OP_T, transb = CUBLAS_OP_N;
  const cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  const void* bias = reinterpret_cast<const void*>(bias_);
  check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transa, sizeof(transa)),
        "cublasLtMatmulDescSetAttribute");
  check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &transb, sizeof(transb)),
        "cublasLtMatmulDescSetAttribute");
  check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                       sizeof(epilogue)),
        "cublasLtMatmulDescSetAttribute");
  check(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)),
      "cublasLtMatmulDescSetAttribute");
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  check(cublasLtMatrixLayoutCreate(&a, CUDA_R_16BF, uint64_t(in), uint64_t(out), in),
        "cublasLtMatrixLayoutCreate");
  check(cublasLtMatrixLayoutCreate(&b, CUDA_R_16BF, uint64_t(in), uint64_t(tokens), in),
        "cublasLtMatrixLayoutCreate");
  check(cublasLtMatrixLayoutCreate(&d, CUDA_R_16BF, uint64_t(out), uint64_t(tokens), out),
        "cublasLtMatrixLayoutCreate");
  cublasLtMatmulPreference_t pref = nullptr;
  check(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const std::size_t workspace = kLtWorkspaceBytes;
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                             &workspace, sizeof(workspace)),
        "cublasLtMatmulPreferenceSetAttribute");
  cublasLtMatmulHeuristicResult_t heuristic{};
  int found = 0;
  check(cublasLtMatmulAlgoGetHeuristic(lt_, desc, a, b, d, d, pref, 1, &heuristic, &found),
        "cublasLtMatmulAlgoGetHeuristic");
  if (found < 1) throw std::runtime_error("cublasLtMatmulAlgoGetHeuristic found no algorithm");
  const float alpha = 1.0f, beta = 0.0f;
  check(cublasLtMatmul(lt_, desc, &alpha, reinterpret_cast<void*>(weights_), a,
                       reinterpret_cast<void*>(activations_), b, &beta,
                       reinterpret_cast<void*>(outputs_), d, reinterpret_cast<void*>(outputs_), d,
                       &heuristic.algo, reinterpret_cast<void*>(workspace_), workspace, nullptr),
        "cublasLtMatmul");
  ++library_calls_;
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(d);
  cublasLtMatrixLayoutDestroy(b);
  cublasLtMatrixLayoutDestroy(a);
  cublasLtMatmulDescDestroy(desc);
}

void StepDevice::linear_backward(std::int64_t tokens, std::int64_t in, std::int64_t out,
                                 bool input_grad) {
  const float alpha = 1.0f, beta = 0.0f;
  void* w = reinterpret_cast<void*>(weights_);
  void* x = reinterpret_cast<void*>(activations_);
  void* dy = reinterpret_cast<void*>(outputs_);
  if (input_grad) {
    // dx[in, tokens] = W[in, out] dy[out, tokens] (column-major; no transposes).
    check(cublasGemmEx(blas_, CUBLAS_OP_N, CUBLAS_OP_N, int(in), int(tokens), int(out), &alpha, w,
                       CUDA_R_16BF, int(in), dy, CUDA_R_16BF, int(out), &beta, x, CUDA_R_16BF,
                       int(in), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
          "cublasGemmEx");
    ++library_calls_;
  }
  // dW[in, out] = x[in, tokens] dy[out, tokens]^T: the reduction runs over the tokens.
  check(cublasGemmEx(blas_, CUBLAS_OP_N, CUBLAS_OP_T, int(in), int(out), int(tokens), &alpha, x,
                     CUDA_R_16BF, int(in), dy, CUDA_R_16BF, int(out), &beta, w, CUDA_R_16BF,
                     int(in), CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx");
  ++library_calls_;
}

void StepDevice::synchronize() { check(cuCtxSynchronize(), "cuCtxSynchronize"); }

}  // namespace bert_step
