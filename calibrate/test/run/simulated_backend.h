// A measurement backend for tests that needs no driver: a simulated H100 whose GEMM kernels
// take the fake stack's GEMM law (tests/fake/common/fake_gemm_law.h) and whose heuristic picks
// like the fake cuBLASLt does (the nvjet kernel for large outputs, the xmma kernel otherwise,
// split-K for long reductions, SIMT for strict FP32). It adds a known gap per launch to the
// timings, as a GPU does between graph nodes, so that its removal can be checked.
#pragma once

#include <cstddef>
#include <map>
#include <string>

#include "pm2lat/calibrate/run/measurement_backend.h"

namespace pm2lat::calibrate::run::test {

class SimulatedBackend : public MeasurementBackend {
 public:
  static constexpr double kGapUs = 0.7;          // between two kernels of a graph
  static constexpr double kEmptyKernelUs = 1.9;  // an empty kernel's own time

  std::string device_name() override { return "NVIDIA H100 80GB HBM3"; }
  Environment environment() override;
  void prepare(const CalibrationPlan&) override { ++prepared; }
  TaskResult measure(const MeasurementTask& task, const GemmAlgo* forced) override;

  // The kernels one call runs, as the profiler would report them (no gap, no noise).
  std::vector<KernelObservation> gemm_kernels(const GemmProblem& p, const GemmAlgo& algo) const;
  GemmAlgo heuristic(const GemmProblem& p, int rank) const;  // rank 0 = the pick; invalid id = none

  std::size_t measured = 0;  // measure() calls
  std::size_t prepared = 0;
  std::map<std::string, std::size_t> measured_ids;
};

}  // namespace pm2lat::calibrate::run::test
