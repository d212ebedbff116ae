// Turns a calibration run's measurements into a device profile, through the same builder as
// `pm2lat-calibrate import` (basis 'kernel': the measurements are device time).
//
// Launch overhead: GEMM and memory kernels are timed with events around a CUDA graph of
// back-to-back launches, so the per-launch time is the kernel plus the device's gap between
// two graph nodes, with no host dispatch in it. The gap is measured once (graph of empty
// kernels minus the empty kernel's own time from the profiler) and subtracted per kernel a
// call launches; the other kernels of a call (a split-K reduction) are subtracted with their
// profiled time, leaving the GEMM kernel's own.
//
// Points and fits: the heuristic's picks become the profile's calibration points (the
// predictor chooses a GPU's kernel by nearest calibrated shape, so only real choices may be
// points); candidates and fill runs only add data to their configuration's fit.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/calibrate/run/calibration_runner.h"
#include "pm2lat/device_spec.h"
#include "pm2lat/profile.h"

namespace pm2lat::calibrate::run {

struct FitReport {
  bool launch_measured = false;
  double launch_gap_us = 0;
  std::size_t gemm_points = 0;    // heuristic picks
  std::size_t gemm_fit_only = 0;  // candidate and fill runs
  std::size_t gemm_configs = 0;
  std::size_t memory_rows = 0;
  std::size_t vector_fits = 0;
  std::size_t skipped = 0;  // failed tasks and runs without a GEMM kernel of a known family
  double median_config_mape_pct = 0;
  double max_config_mape_pct = 0;
};

// The launch gap a run's launch task measured (0 when it has none).
double launch_gap_us(const std::vector<MeasuredTask>& measurements);

// The GEMM kernel's own device time in a run: median per-call time, minus the gap per
// launched kernel, minus the other kernels' profiled times. Index of the GEMM kernel in
// run.kernels, or -1 when no kernel is a GEMM of a known family.
int gemm_kernel_index(const GemmRun& run);
double gemm_kernel_us(const GemmRun& run, int gemm_index, double gap_us);

struct CallSets {
  std::vector<MeasuredCall> selectable;  // heuristic picks
  std::vector<MeasuredCall> fit_only;    // candidates and fill
  std::vector<MeasuredCall> memory;
  std::size_t skipped = 0;
};
CallSets measured_calls(const std::vector<MeasuredTask>& measurements, const DeviceSpec& spec,
                        double gap_us);

// One profile per GEMM dtype: the predictor chooses a GPU's kernel for a shape among the
// calibration points of the profile it takes for the record's dtype, so a profile must not
// mix dtypes. Each carries the launch overhead and the memory-bound fits too.
std::vector<DType> gemm_dtypes(const std::vector<MeasuredTask>& measurements);
Profile fit_profile(const std::vector<MeasuredTask>& measurements, const DeviceSpec& spec,
                    const Provenance& provenance, DType gemm_dtype, FitReport* report = nullptr);

// Per shape, the heuristic's pick and each candidate: algorithm, kernel, time, and how much
// slower than the pick. Returns the number of rows written.
std::size_t write_candidates_csv(const std::filesystem::path& file,
                                 const std::vector<MeasuredTask>& measurements);

}  // namespace pm2lat::calibrate::run
