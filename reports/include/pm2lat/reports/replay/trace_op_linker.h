// Links each kernel of a Kineto trace to the operator that launched it:
//   kernel.correlation -> launch call (same correlation id) -> innermost CPU op or user
//   annotation on the launching thread whose time range contains the call.
// Kineto's "External id" is not used: in many traces it equals the correlation id on launch
// events and points nowhere useful. ProfilerStep#N ranges are not operators and are skipped.
#pragma once

#include <cstdint>
#include <vector>

#include "pm2lat/reports/replay/kineto_trace.h"

namespace pm2lat::reports {

// Fills TraceOp::parent, TraceKernel::op, ::launched and ::graph_launch.
void link_kernels_to_ops(KinetoTrace& trace);

// The chain of ops around a kernel, innermost first (at most `depth` ops).
std::vector<const TraceOp*> op_chain(const KinetoTrace& trace, const TraceKernel& kernel,
                                     int depth = 6);

}  // namespace pm2lat::reports
