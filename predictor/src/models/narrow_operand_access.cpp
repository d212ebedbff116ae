#include "pm2lat/models/narrow_operand_access.h"

#include <algorithm>

namespace pm2lat {

int operand_access_bytes(const GemmConfig& kernel, DType element) noexcept {
  const DType type = kernel.a != DType::kUnknown ? kernel.a : element;
  const double bytes = dtype_bytes(type);
  if (!kernel.tensor_core || kernel.align <= 0 || bytes <= 0) return kVectorAccessBytes;
  const double access = static_cast<double>(kernel.align) * bytes;
  return access >= kVectorAccessBytes ? kVectorAccessBytes : std::max(1, static_cast<int>(access));
}

double narrow_access_slowdown(int ran_bytes, int stand_in_bytes) noexcept {
  const auto cost = [](int bytes) {
    const double per_vector = static_cast<double>(kVectorAccessBytes) / std::max(1, bytes);
    return 1.0 + kNarrowAccessCost * (std::max(1.0, per_vector) - 1.0);
  };
  return std::max(1.0, cost(ran_bytes) / cost(stand_in_bytes));
}

}  // namespace pm2lat
