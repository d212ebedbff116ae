// One GEMM problem on cuBLASLt: descriptors for the row-major problem (as the column-major
// call PyTorch makes), the heuristic's algorithms (or a forced one), and for each algorithm
// the kernels it launches (CUPTI) and its timing over rotated operand sets.
#pragma once

#include <vector>

#include "driver/calibration_module.h"
#include "driver/cublaslt_api.h"
#include "driver/cuda_driver_api.h"
#include "driver/cupti_kernel_trace.h"
#include "driver/graph_timer.h"
#include "driver/operand_pool.h"
#include "pm2lat/calibrate/run/calibration_task.h"
#include "pm2lat/calibrate/run/measurement.h"

namespace pm2lat::calibrate::run::driver {

struct GemmBenchContext {
  const CudaDriverApi& cu;
  const CublasLtApi& lt;
  cublasLtHandle_t handle;
  CUstream stream;
  OperandPool& pool;
  CUdeviceptr workspace;
  std::size_t workspace_bytes;
  CuptiKernelTrace& trace;
  GraphTimer& timer;
};

// kGemm: the heuristic's pick (rank 0); kGemmCandidates: its ranks 1.. up to task.candidates;
// kGemmFill: `forced` (rank -1). Errors of one algorithm are reported in its run.
std::vector<GemmRun> measure_gemm(GemmBenchContext& ctx, const MeasurementTask& task,
                                  const GemmAlgo* forced);

}  // namespace pm2lat::calibrate::run::driver
