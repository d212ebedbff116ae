#include "broadcast_operands.h"

#include <algorithm>
#include <cstddef>
#include <limits>

namespace pm2lat::reports::lowering {

namespace {

double product(const calibrate::TensorDims& d, std::size_t from) {
  double p = 1;
  for (std::size_t i = from; i < d.size(); ++i) p *= static_cast<double>(d[i]);
  return p;
}

}  // namespace

BroadcastReuse broadcast_reuse(const std::vector<const calibrate::TensorDims*>& inputs,
                               const calibrate::TensorDims& out, double element_bytes) {
  const double n_out = product(out, 0);
  double full = 0;
  for (const calibrate::TensorDims* d : inputs) {
    if (d->size() > out.size()) return {};
    if (product(*d, 0) == n_out) ++full;
  }
  BroadcastReuse r;
  double shortest = std::numeric_limits<double>::infinity();
  for (const calibrate::TensorDims* d : inputs) {
    const double n = product(*d, 0);
    if (n <= 1 || n >= n_out) continue;
    // Right-aligned, as broadcasting aligns shapes; the innermost dimension the operand
    // lacks (size 1 or absent) and the output has decides its reuse.
    const std::size_t pad = out.size() - d->size();
    std::ptrdiff_t inner = -1;
    for (std::size_t i = out.size(); i-- > 0;) {
      const std::int64_t own = i < pad ? 1 : (*d)[i - pad];
      if (own != out[i] && own != 1) return {};  // not broadcastable to `out`
      if (own == 1 && out[i] > 1 && inner < 0) inner = static_cast<std::ptrdiff_t>(i);
    }
    if (inner < 0) continue;
    const auto step = static_cast<std::size_t>(inner) + 1;
    const double own_block = step > pad ? product(*d, step - pad) : 1.0;
    const double distance = (product(out, step) * (1 + full) + own_block) * element_bytes;
    if (distance < kAlwaysResidentBytes) continue;
    r.reread_bytes += (n_out - n) * element_bytes;
    shortest = std::min(shortest, distance);
  }
  if (r.reread_bytes > 0) r.reuse_bytes = shortest;
  return r;
}

}  // namespace pm2lat::reports::lowering
