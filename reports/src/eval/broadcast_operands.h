// The reuse of operands an elementwise row broadcasts over its output (a position embedding
// added to every sample, a mask added to every head), for VectorShape's broadcast fields: the
// predictor decides per GPU whether its L2 holds them between reuses
// (pm2lat/models/broadcast_traffic.h). Internal to reports/src/eval.
#pragma once

#include <vector>

#include "pm2lat/calibrate/neusight_models.h"

namespace pm2lat::reports::lowering {

struct BroadcastReuse {
  double reuse_bytes = 0;   // streamed between two uses of one element of a broadcast operand
  double reread_bytes = 0;  // read again if every use misses: the materialised size minus its own
};

// For the operands of `inputs` broadcast over `out` (fewer elements than it, more than one),
// elements of `element_bytes` each. An element of such an operand is used again every step of
// the innermost output dimension it is broadcast over; in between, the kernel streams that
// dimension's inner block of every full-size operand and of the output, and the operand's own
// block. Operands whose distance is under kAlwaysResidentBytes are left out (any L2 holds them);
// of the rest the re-reads add up and the shortest distance stands for them all. Nothing when
// an input does not broadcast to `out`.
BroadcastReuse broadcast_reuse(const std::vector<const calibrate::TensorDims*>& inputs,
                               const calibrate::TensorDims& out, double element_bytes);

// Half the smallest L2 of the GPUs the catalogue knows (the P4's 2 MB), the share of it the
// predictor counts on (models/broadcast_traffic.cpp): an operand reused within it stays.
inline constexpr double kAlwaysResidentBytes = 1024.0 * 1024.0;

}  // namespace pm2lat::reports::lowering
