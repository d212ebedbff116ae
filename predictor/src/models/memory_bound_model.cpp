#include "pm2lat/models/memory_bound_model.h"

#include <algorithm>

namespace pm2lat {

MemoryBoundFeatures memory_bound_features(const DeviceSpec& spec, double bytes,
                                          double rows) noexcept {
  MemoryBoundFeatures f;
  f.bytes_term = std::max(0.0, bytes) / std::max(1.0, spec.bytes_per_us());
  f.row_term = std::max(0.0, rows) / static_cast<double>(std::max(1, spec.sm_count));
  return f;
}

double memory_bound_kernel_us(const VectorFit& fit, const DeviceSpec& spec, double bytes,
                              double rows) noexcept {
  const MemoryBoundFeatures f = memory_bound_features(spec, bytes, rows);
  return std::max(kMinMemoryKernelUs, fit.c0 + fit.c_byte * f.bytes_term + fit.c_row * f.row_term);
}

double below_range_kernel_us(double fixed_us, double edge_us, double bytes,
                             double edge_bytes) noexcept {
  return fixed_us + std::max(0.0, edge_us - fixed_us) * bytes / edge_bytes;
}

}  // namespace pm2lat
