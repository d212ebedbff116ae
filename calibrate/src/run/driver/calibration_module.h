// The calibrator's own kernels (calibration_kernels.cu) loaded into the current context, with
// launchers that size their grids. Every launcher enqueues on `stream` and returns the
// kernel's name, for matching the profiler's records.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

#include "driver/cuda_driver_api.h"
#include "pm2lat/calibrate/run/calibration_task.h"

namespace pm2lat::calibrate::run::driver {

// False when this build has no PTX (nvcc was not found at build time).
bool calibration_kernels_available();

class CalibrationModule {
 public:
  // Loads the PTX (JIT-compiled by the driver). Throws BackendError.
  explicit CalibrationModule(const CudaDriverApi& api);
  ~CalibrationModule();
  CalibrationModule(const CalibrationModule&) = delete;
  CalibrationModule& operator=(const CalibrationModule&) = delete;

  void empty(CUstream s) const;
  // Occupies the device for about `us` microseconds: many blocks, each waiting on the
  // global timer, so the kernel fills every SM whatever the GPU.
  void busy(CUstream s, double us, int sm_count) const;
  // out: 4 x u64 in device memory (see the kernel).
  void clock_probe(CUstream s, CUdeviceptr out, double us) const;
  void scrub(CUstream s, CUdeviceptr buf, std::size_t bytes, unsigned salt) const;
  // A memory-bound pattern over `in` (one or two inputs of the problem's size) into `out`.
  std::string memory(CUstream s, const MemoryProblem& p, CUdeviceptr in_a, CUdeviceptr in_b,
                     CUdeviceptr out) const;
  std::string memory_kernel_name(const MemoryProblem& p) const;
  const char* empty_name() const { return "pm2lat_calibrate_empty_kernel"; }

 private:
  CUfunction get(const char* name);
  void launch(CUstream s, CUfunction f, unsigned grid, unsigned block, void** args) const;

  const CudaDriverApi& api_;
  CUmodule module_ = nullptr;
  CUfunction empty_ = nullptr, busy_ = nullptr, clock_ = nullptr, scrub_ = nullptr, copy_ = nullptr;
  CUfunction add_f32_ = nullptr, add_bf16_ = nullptr, softmax_f32_ = nullptr,
             softmax_bf16_ = nullptr;
};

}  // namespace pm2lat::calibrate::run::driver
