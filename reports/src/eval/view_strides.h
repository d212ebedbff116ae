// Strides of the views a model file's rows produce (view, permute, transpose), enough to tell
// when torch.matmul must copy an operand before its batched product. Internal to
// reports/src/eval.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pm2lat/calibrate/neusight_models.h"

namespace pm2lat::reports::lowering {

// Elements between neighbours along each dimension.
using Strides = std::vector<std::int64_t>;

// A freshly allocated tensor's strides (row-major).
Strides contiguous_strides(const calibrate::TensorDims& dims);

// The strides of `out`, a permutation of `in`'s dimensions (permute, transpose). The files
// give shapes, not the permutation: each output dimension takes the first unused input
// dimension of its size, which is the permutation whenever sizes differ and keeps equal sizes
// in order otherwise. Nothing when `out` is not a permutation of `in`.
std::optional<Strides> permuted_strides(const calibrate::TensorDims& in, const Strides& in_strides,
                                        const calibrate::TensorDims& out);

// Whether the batch dimensions of a tensor of three or more dimensions (all but the last two)
// fold into one as a view: each, size-1 dimensions aside, steps over exactly the next one.
// torch.matmul reshapes its operands to [batch, rows, cols]; reshape copies a tensor it
// cannot view (aten/src/ATen/native/LinearAlgebra.cpp, _matmul_impl; TensorUtils.cpp,
// computeStride).
bool batch_dims_fold(const calibrate::TensorDims& dims, const Strides& strides);

}  // namespace pm2lat::reports::lowering
