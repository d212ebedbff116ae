// Where measurements come from. The real backend drives a GPU through the CUDA driver API,
// cuBLASLt and CUPTI (driver_backend.h); tests substitute a simulated one. The runner only
// sees this interface.
#pragma once

#include <stdexcept>
#include <string>

#include "pm2lat/calibrate/run/calibration_plan.h"
#include "pm2lat/calibrate/run/measurement.h"

namespace pm2lat::calibrate::run {

// The backend cannot start or cannot continue (no driver, no GPU, out of memory, ...).
class BackendError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class MeasurementBackend {
 public:
  virtual ~MeasurementBackend() = default;

  // The device the measurements run on, as the driver names it ("NVIDIA H100 80GB HBM3").
  virtual std::string device_name() = 0;
  // Versions, clocks and device attributes, recorded in the profile's provenance.
  virtual Environment environment() = 0;

  // Allocates and fills (random values, never zeros) what the plan's tasks need, and brings
  // the GPU to its working clocks. Called once before the first measurement.
  virtual void prepare(const CalibrationPlan& plan) = 0;

  // Runs one task. `forced` (kGemmFill) is the algorithm to run instead of asking the
  // heuristic. Failures of the task itself are reported in TaskResult::error; a BackendError
  // means the backend cannot go on.
  virtual TaskResult measure(const MeasurementTask& task, const GemmAlgo* forced) = 0;
};

}  // namespace pm2lat::calibrate::run
