// The measurement backend of a real GPU: the CUDA driver API (dlopen + cuGetProcAddress),
// cuBLASLt for the GEMMs, CUPTI activity records for the names of the kernels cuBLASLt
// launches, CUDA events around graphs of back-to-back launches for the timing, and the
// calibrator's own kernels (PTX, JIT-compiled by the driver) for the launch overhead, the
// bandwidth curves, the busy kernel and the clock probe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "pm2lat/calibrate/run/measurement_backend.h"

namespace pm2lat::calibrate::run {

struct DriverBackendOptions {
  std::string driver_library = "libcuda.so.1";
  std::string cublaslt_library = "libcublasLt.so.13";
  std::string cupti_library = "libcupti.so.13";
  int device = 0;                                       // ordinal among the visible GPUs
  std::size_t workspace_bytes = std::size_t{32} << 20;  // cuBLASLt workspace (PyTorch's on Hopper)
  double warmup_s = 1.0;                                // busy work before the first measurement
};

// Throws BackendError with what is missing (driver, GPU, cuBLASLt, CUPTI, kernels).
std::unique_ptr<MeasurementBackend> open_driver_backend(const DriverBackendOptions& options = {});

}  // namespace pm2lat::calibrate::run
