// Lowering one traced operator (a NeuSight model-file row) to the GPU work it launches:
// GEMMs with the right shape convention, memory-bound kernels with the bytes they move, and
// CPU-only operators (views, Python values) that cost dispatch time but no kernel. For
// training, the backward pass and the gradient accumulation are derived from the forward
// shapes: input-gradient and weight-gradient GEMMs, elementwise/softmax/layer-norm
// backward kernels, and one accumulation per parameter.
#pragma once

#include <string>
#include <vector>

#include "pm2lat/calibrate/neusight_models.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"

namespace pm2lat::reports {

// What the host does for an operator: launch kernels, or dispatch without a kernel.
enum class HostWork : std::uint8_t {
  kLaunch,  // framework dispatch ending in a kernel launch
  kView,    // framework dispatch without a kernel (view, permute, expand, ...)
  kPython,  // a Python-level value (size, getitem of ints): almost free
};

// Operator classes of the --by-class breakdown.
enum class OpClass : std::uint8_t { kGemm, kElementwise, kSoftmax, kLayerNorm, kEmbedding, kOther };
std::string_view to_string(OpClass c) noexcept;
OpClass op_class_of(const std::string& neusight_class) noexcept;

struct LoweredOp {
  OpClass op_class = OpClass::kOther;
  HostWork host = HostWork::kLaunch;
  bool has_kernel = false;
  KernelRecord record;       // op context filled; no kernel name (the target's kernel is chosen)
  KernelClass cls;           // family set from the operator
  std::string overhead_key;  // profile call-overhead key ("linear", "bmm", "add", ...)
};

enum class Pass : std::uint8_t { kForward, kBackward, kAccumulate };

// The work of one row in one pass (empty when the pass has none for this operator).
std::vector<LoweredOp> lower(const calibrate::ModelOpRow& row, Pass pass);

}  // namespace pm2lat::reports
