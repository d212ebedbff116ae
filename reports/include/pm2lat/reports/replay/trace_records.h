// A Kineto trace as kernel records: one KernelRecord per kernel event, with the launch as
// the trace gives it, the operator context (trace_op_context.h) and the CUPTI duration as
// the measured kernel time (TimeBasis::kKernel).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/reports/replay/kernel_class_cache.h"
#include "pm2lat/reports/replay/kineto_trace.h"

namespace pm2lat::reports {

struct TraceRecords {
  std::string source;
  std::string gpu;  // the GPU the trace ran on, as the trace names it ("" = not recorded)
  // What the trace's device properties say of that GPU (0 = not recorded): what finds the
  // GPU that stands in when the catalogue does not know the name.
  GpuHardware gpu_hardware;
  std::int32_t rank = 0;
  std::vector<KernelRecord> records;
  std::vector<const KernelClass*> classes;  // parallel to records, owned by the cache
  // How much the trace said about its kernels.
  std::size_t linked = 0;         // launch call found inside an operator
  std::size_t with_shape = 0;     // operator shapes gave the kernel's work
  std::size_t from_geometry = 0;  // work estimated from the launch geometry
  std::size_t work_rejected = 0;  // the operator described more than the launch can do
};

// Links kernels to operators (if not yet done) and builds the records. Timestamps become
// nanoseconds from the first kernel.
TraceRecords records_from_trace(KinetoTrace& trace, KernelClassCache& classes);

}  // namespace pm2lat::reports
