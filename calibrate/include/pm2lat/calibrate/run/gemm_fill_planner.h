// The fill part of a calibration: once the survey has shown which kernel configuration
// cuBLASLt picks where, every configuration measured at fewer than `fill_sizes` sizes is
// forced (its algorithm from one survey shape, the anchor) on more sizes around that shape,
// so that its wave model has enough waves and K-loop lengths to be fitted. Deterministic in
// the survey's results, so a resumed run plans the same fill.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "pm2lat/calibrate/run/calibration_plan.h"
#include "pm2lat/calibrate/run/measurement.h"

namespace pm2lat::calibrate::run {

// The kernel configuration a GEMM run measured: the classifier's configuration of its GEMM
// kernel ("" when none of its kernels is a GEMM of a known family).
std::string gemm_run_config(const GemmRun& run);

// `done` maps task ids to their results (survey and candidates; others are ignored).
std::vector<MeasurementTask> plan_fill(const CalibrationPlan& plan,
                                       const std::map<std::string, const TaskResult*>& done);

}  // namespace pm2lat::calibrate::run
