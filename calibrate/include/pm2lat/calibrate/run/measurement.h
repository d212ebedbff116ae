// What a measurement backend returns for a task: raw observations, before any correction.
// The fitting step (calibration_fit.h) turns them into kernel times; keeping them raw in the
// journal means a better correction can be applied to an old run.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pm2lat/calibrate/run/calibration_task.h"
#include "pm2lat/kernel_launch.h"

namespace pm2lat::calibrate::run {

// A kernel as the profiler (CUPTI activity records) saw it execute once.
struct KernelObservation {
  std::string name;  // as CUPTI gives it (mangled)
  Dim3 grid, block, cluster;
  double duration_us = 0;  // device time of that one execution
};

// Events around repetitions of `launches` back-to-back launches (one graph per repetition):
// per-launch device time, median and spread over the repetitions.
struct TimingSample {
  std::int32_t launches = 0;
  std::int32_t reps = 0;
  double median_us = 0;  // per launch
  double min_us = 0;
  double max_us = 0;
};

// A cuBLASLt algorithm: the opaque descriptor (to run it again) and what it says about itself.
struct GemmAlgo {
  std::array<std::uint64_t, 8> data{};
  std::int32_t id = -1;
  std::int32_t tile = 0;    // cublasLtMatmulTile_t
  std::int32_t stages = 0;  // cublasLtMatmulStages_t
  std::int32_t split_k = 0;
  std::int32_t swizzle = 0;
  std::int32_t custom = 0;
  std::int32_t cluster = 0;  // cublasLtClusterShape_t
  std::uint64_t workspace_bytes = 0;
};

// One algorithm run on one GEMM problem.
struct GemmRun {
  std::int32_t rank = 0;  // position in the heuristic's list (0 = its pick; -1 = forced)
  GemmAlgo algo;
  std::vector<KernelObservation> kernels;  // what one call launches, in order
  TimingSample timing;                     // the whole call
  std::string error;                       // non-empty: the algorithm did not run
};

struct LaunchOverhead {
  std::string kernel;              // the empty kernel's name
  double kernel_us = 0;            // its device time (CUPTI)
  double graph_per_launch_us = 0;  // back to back in a graph: kernel + gap to the next
  double single_call_us = 0;       // events around one launch: dispatch + kernel
  double host_launch_us = 0;       // host time of one launch call
};

struct TaskResult {
  std::string task_id;
  TaskKind kind = TaskKind::kGemm;
  std::string error;                // non-empty: the task could not be measured
  std::vector<GemmRun> gemm;        // GEMM kinds: the heuristic's pick first, or the forced run
  KernelObservation memory_kernel;  // kMemory
  TimingSample memory_timing;
  LaunchOverhead launch;  // kLaunch
  double wall_s = 0;      // time the task took
};

// What a backend reports about the machine, recorded in the profile's provenance.
using Environment = std::map<std::string, std::string>;

}  // namespace pm2lat::calibrate::run
