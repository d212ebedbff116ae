// Fits the low-precision GEMM call model (models/scaled_gemm_model.h) of each backend a GPU
// measured: one ScaledGemmFit per backend (the kernel class's configuration of the calls),
// plus the calls themselves as calibration points.
#pragma once

#include <cstddef>
#include <vector>

#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/device_spec.h"
#include "pm2lat/profile.h"

namespace pm2lat::calibrate {

// True for a call of a low-precision GEMM backend: an FP8/FP4 operand with scale factors.
bool is_scaled_gemm_call(const MeasuredCall& call);

// Fits one backend from its calls on one GPU (every call must carry the backend's kernel
// class and the same operand type and scaling).
ScaledGemmFit fit_scaled_gemm(const std::vector<const MeasuredCall*>& calls,
                              const DeviceSpec& spec);

// Appends a fit per backend and the calibration points of `calls` (the scaled GEMM calls of
// one GPU) to `profile`, leaving out spikes: calls whose ratio to the model differs from their
// nearest neighbours' by more than 1.5x either way. Returns the number of points added.
std::size_t append_scaled_gemm_section(const std::vector<const MeasuredCall*>& calls,
                                       const DeviceSpec& spec, Profile& profile);

}  // namespace pm2lat::calibrate
