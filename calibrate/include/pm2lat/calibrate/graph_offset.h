// The offset between GEMM tables timed in replayed CUDA graphs and isolated kernels.
//
// AIConfigurator times each call back to back inside a replayed CUDA graph and stores the
// mean per call: each kernel's launch and drain overlap its neighbours'. CUPTI durations of an
// eager program's kernels include them. On a GPU with measured kernels (profiler traces, or
// the runtime's records), the difference is the median of (measured - graph-table
// prediction) over small tensor-core GEMMs, where it dominates and a wrong configuration
// choice matters least. The predictor adds it to graph-timed predictions of isolated kernels.
#pragma once

#include <vector>

#include "pm2lat/kernel_record.h"
#include "pm2lat/predictor.h"

namespace pm2lat::calibrate {

// `graph_tables`: a predictor over graph-timed profiles only. Returns 0 when fewer than a
// handful of small BF16/FP16 GEMM kernels were measured on the GPU.
double graph_kernel_offset_us(Predictor& graph_tables, const DeviceSpec& spec,
                              const std::vector<const KernelRecord*>& kernels);

}  // namespace pm2lat::calibrate
