#include "view_strides.h"

#include <algorithm>
#include <cstddef>

namespace pm2lat::reports::lowering {

Strides contiguous_strides(const calibrate::TensorDims& dims) {
  Strides s(dims.size(), 1);
  for (std::size_t i = dims.size(); i-- > 1;) s[i - 1] = s[i] * std::max<std::int64_t>(1, dims[i]);
  return s;
}

std::optional<Strides> permuted_strides(const calibrate::TensorDims& in, const Strides& in_strides,
                                        const calibrate::TensorDims& out) {
  if (in.size() != out.size() || in_strides.size() != in.size()) return std::nullopt;
  std::vector<bool> used(in.size(), false);
  Strides s(out.size(), 0);
  for (std::size_t o = 0; o < out.size(); ++o) {
    std::size_t i = 0;
    while (i < in.size() && (used[i] || in[i] != out[o])) ++i;
    if (i == in.size()) return std::nullopt;
    used[i] = true;
    s[o] = in_strides[i];
  }
  return s;
}

bool batch_dims_fold(const calibrate::TensorDims& dims, const Strides& strides) {
  if (dims.size() < 3 || strides.size() != dims.size()) return true;
  // The batch dimensions that hold more than one element, outermost first.
  std::optional<std::size_t> previous;
  for (std::size_t i = 0; i + 2 < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (previous && strides[*previous] != strides[i] * dims[i]) return false;
    previous = i;
  }
  return true;
}

}  // namespace pm2lat::reports::lowering
