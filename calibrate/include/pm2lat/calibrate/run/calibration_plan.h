// The planner of an on-GPU calibration: device spec + dtypes + time budget -> the list of
// measurements to run, each with its estimated cost. Pure: it needs no GPU, which is what
// `pm2lat-calibrate run --dry-run` prints.
//
// What a plan measures (in this order):
//  1. launch overhead (empty kernels: alone, timed with events, and back to back in a graph);
//  2. memory-bound kernels of our own (copy, add, softmax rows) over sizes from L2-resident
//     (L2/8) to 4x L2, for the bandwidth curves;
//  3. per dtype and layout, a survey grid of GEMM shapes (M, N, K over the budget's density,
//     plus batched shapes) with the kernel cuBLASLt's heuristic picks;
//  4. for every n-th survey shape, the heuristic's next candidates;
//  5. fill: every kernel configuration the survey found at fewer than enough sizes is forced
//     on more sizes around the shapes where it was found (planned once the survey is done:
//     the plan only estimates it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "pm2lat/calibrate/run/calibration_task.h"
#include "pm2lat/device_spec.h"

namespace pm2lat::calibrate::run {

struct PlanOptions {
  std::vector<DType> dtypes{DType::kFp32, DType::kBf16};
  std::vector<GemmLayout> layouts{GemmLayout::kLinear, GemmLayout::kMatmul,
                                  GemmLayout::kWeightGrad};
  double budget_s = 30 * 60;
  // Grid and repetitions; empty / 0 = the densest the budget allows. Tests give their own.
  std::vector<std::int64_t> dims;     // values M, N and K each take
  std::vector<std::int64_t> batches;  // batch counts of the batched (bmm) shapes; {} = none
  std::int32_t reps = 0;
  std::int32_t candidate_stride = 16;  // every n-th survey shape also gets its candidates
  std::int32_t candidates = 8;         // heuristic results requested for those shapes
  std::int32_t fill_sizes = 8;         // sizes a kernel configuration's fit wants at least
  bool memory = true;                  // bandwidth curves
};

struct PlanPart {
  std::string name;
  std::size_t tasks = 0;
  double estimated_s = 0;
};

struct CalibrationPlan {
  DeviceSpec spec;
  PlanOptions options;                 // resolved: dims, batches and reps filled in
  std::string density;                 // "fine", "medium", "coarse" or "custom"
  std::vector<MeasurementTask> tasks;  // everything but the fill
  // The fill depends on the kernels the survey finds; the estimate assumes this many
  // configurations per dtype and layout, each forced on options.fill_sizes sizes.
  std::int32_t assumed_configs_per_group = 0;
  std::size_t fill_tasks_estimate = 0;
  double fill_estimated_s = 0;

  std::vector<PlanPart> parts() const;
  double estimated_s() const;  // including the fill estimate
};

CalibrationPlan plan_calibration(const DeviceSpec& spec, PlanOptions options);

// What --dry-run prints: options, grid, per-part task counts and estimated time.
std::string describe_plan(const CalibrationPlan& plan);

// "30m", "1h30m", "90s", "2h"; a bare number is minutes. Throws std::invalid_argument.
double parse_duration_s(std::string_view text);
std::string format_duration(double seconds);  // "1h05m", "12m30s", "45s"
// "fp32,tf32,bf16,fp16,fp8". Throws std::invalid_argument naming the bad entry.
std::vector<DType> parse_dtype_list(std::string_view text);
std::vector<GemmLayout> parse_layout_list(std::string_view text);

}  // namespace pm2lat::calibrate::run
