// The GPU side of the example, through the CUDA driver API, cuBLAS and cuBLASLt as PyTorch
// reaches them: a context, a module holding the ATen/FlashAttention kernels by name, and the
// GEMMs of linear layers (forward through cuBLASLt with a bias epilogue, as addmm does;
// backward through cublasGemmEx, as mm does).
#pragma once

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace bert_step {

struct Dim {
  unsigned x = 1, y = 1, z = 1;
};

class StepDevice {
 public:
  // Sizes the GEMM operand buffers for the largest activation and weight the step uses
  // (elements, BF16). Throws std::runtime_error naming the call that failed.
  StepDevice(std::size_t max_activation_elements, std::size_t max_weight_elements);
  ~StepDevice();
  StepDevice(const StepDevice&) = delete;
  StepDevice& operator=(const StepDevice&) = delete;

  std::string name() const;
  int sm_count() const { return sm_count_; }
  int max_threads_per_sm() const { return max_threads_per_sm_; }

  // One launch of a kernel of aten_kernels.h.
  void launch(const char* kernel, Dim grid, Dim block);

  // y[tokens, out] = x[tokens, in] W[out, in]^T + b.
  void linear_forward(std::int64_t tokens, std::int64_t in, std::int64_t out);
  // dx = dy W (skipped for the first layer's input) and dW = dy^T x.
  void linear_backward(std::int64_t tokens, std::int64_t in, std::int64_t out, bool input_grad);

  void synchronize();
  int launches() const { return launches_; }
  int library_calls() const { return library_calls_; }

 private:
  CUfunction function(const char* kernel);

  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  CUmodule module_ = nullptr;
  int sm_count_ = 0;
  int max_threads_per_sm_ = 0;
  cublasHandle_t blas_ = nullptr;
  cublasLtHandle_t lt_ = nullptr;
  CUdeviceptr activations_ = 0, weights_ = 0, outputs_ = 0, bias_ = 0, workspace_ = 0;
  int launches_ = 0;
  int library_calls_ = 0;
};

}  // namespace bert_step
