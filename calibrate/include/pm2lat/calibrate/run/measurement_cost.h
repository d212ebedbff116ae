// How long a measurement takes, before it has run: a roofline guess of the kernel's time on
// the device spec, the timing policy that guess implies (launches per repetition,
// repetitions, operand sets), and the wall time of the whole task. The planner sums these
// into the plan's estimate; the progress meter corrects them with the time actually spent.
#pragma once

#include "pm2lat/calibrate/run/calibration_task.h"
#include "pm2lat/device_spec.h"

namespace pm2lat::calibrate::run {

// Host-side fixed costs, per task and per repetition. Guesses from the CUDA documentation's
// orders of magnitude (descriptor set-up and heuristic query, a graph capture and
// instantiation, a CUPTI flush); the run measures the real ones.
struct CostConstants {
  double gemm_task_setup_us = 3000;
  double memory_task_setup_us = 1500;
  double launch_task_us = 200000;  // the launch-overhead task as a whole
  double rep_overhead_us = 80;     // busy kernel ahead of the start event, events, sync
  double kernel_floor_us = 3;      // no kernel runs shorter
  double rep_target_us = 500;      // device time one repetition aims at
  double warmup_target_us = 2000;  // device time of the warm-up repetitions
  int max_launches = 64;
  int min_reps = 5;
  double long_kernel_us = 1000;  // kernels longer than this get fewer repetitions
};

inline constexpr CostConstants kCostConstants{};

// Roofline guess of one kernel: the slower of math at 70 % of the dtype's peak and memory at
// 75 % of the DRAM bandwidth, plus the floor.
double estimated_kernel_us(const GemmProblem& p, const DeviceSpec& spec);
double estimated_kernel_us(const MemoryProblem& p, const DeviceSpec& spec);

// Launches per repetition fill rep_target_us; kernels longer than long_kernel_us get fewer
// repetitions (their relative noise is small), never fewer than min_reps. GEMM operands
// rotate over enough sets that each launch's inputs were evicted from L2 (more than 2x L2 of
// other operands between two uses of one set); memory kernels keep one set on purpose (the
// bandwidth curve is the point).
TimingPolicy gemm_timing(const GemmProblem& p, const DeviceSpec& spec, int base_reps);
TimingPolicy memory_timing(const MemoryProblem& p, const DeviceSpec& spec, int base_reps);

// Wall time of one task under its policy; `results` is the number of algorithms it runs
// (candidates).
double estimated_task_us(double kernel_us, const TimingPolicy& t, double setup_us, int results = 1);

// Bytes of one operand set (A, B and C) of a GEMM.
double gemm_footprint_bytes(const GemmProblem& p);

}  // namespace pm2lat::calibrate::run
