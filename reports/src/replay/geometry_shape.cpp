// Work implied by the launch of ATen's generic kernels when the trace recorded no shapes
// (profiles taken without record_shapes, fused optimizers whose tensor lists are never
// recorded): the predictor's reading of the launch geometry (models/launch_work.h), with the
// operator's tensor lists and name where the trace has them.
#include "op_shape_rules.h"
#include "pm2lat/models/launch_work.h"

namespace pm2lat::reports::trace_rules {

std::optional<MemoryWork> geometry_work(std::string_view name, const KernelClass& cls,
                                        const TraceKernel& kernel, std::size_t tensor_lists,
                                        std::string_view op_name) {
  const auto w = launch_work(name, cls, kernel.grid, kernel.block, tensor_lists, op_name);
  if (!w) return std::nullopt;
  return MemoryWork{w->kind, w->vec};
}

double elementwise_launch_elements(std::string_view name, const TraceKernel& kernel) {
  return pm2lat::elementwise_launch_elements(name, kernel.grid, kernel.block);
}

}  // namespace pm2lat::reports::trace_rules
