#include "pm2lat/models/memory_bound_model.h"

#include <algorithm>

namespace pm2lat {

bool pays_per_row(KernelFamily family) noexcept {
  return family != KernelFamily::kElementwise && family != KernelFamily::kMemset &&
         family != KernelFamily::kTritonPointwise;
}

MemoryBoundFeatures memory_bound_features(const DeviceSpec& spec, double bytes,
                                          double rows) noexcept {
  MemoryBoundFeatures f;
  f.bytes_term = std::max(0.0, bytes) / std::max(1.0, spec.bytes_per_us());
  f.row_term = std::max(0.0, rows) / static_cast<double>(std::max(1, spec.sm_count));
  return f;
}

bool rows_beyond_range(const VectorFit& fit, double rows) noexcept {
  return fit.c_row > 0 && fit.rows_max > 0 && rows > fit.rows_max;
}

double memory_bound_kernel_us(const VectorFit& fit, const DeviceSpec& spec, double bytes,
                              double rows) noexcept {
  const double fitted_rows = rows_beyond_range(fit, rows) ? fit.rows_max : rows;
  const MemoryBoundFeatures f = memory_bound_features(spec, bytes, fitted_rows);
  return std::max(kMinMemoryKernelUs, fit.c0 + fit.c_byte * f.bytes_term + fit.c_row * f.row_term);
}

double below_range_kernel_us(double fixed_us, double edge_us, double bytes,
                             double edge_bytes) noexcept {
  return fixed_us + std::max(0.0, edge_us - fixed_us) * bytes / edge_bytes;
}

double below_range_fixed_us(const VectorFit& fit, bool over_threads) noexcept {
  const bool identified = fit.bytes_max >= kMinSizeSpanForFixedCost * fit.bytes_min;
  const double c0 = over_threads && !identified ? std::min(fit.c0, kNominalMemoryFixedUs) : fit.c0;
  return std::max(kMinMemoryKernelUs, c0);
}

double above_range_kernel_us(const VectorFit& fit, const DeviceSpec& spec, double bytes,
                             double rows) noexcept {
  const double edge = fit.bytes_max;
  if (!(edge > 0) || !(bytes > edge)) return memory_bound_kernel_us(fit, spec, bytes, rows);
  const double edge_us = memory_bound_kernel_us(fit, spec, edge, rows * edge / bytes);
  const double per_byte = fit.c_byte > 0 ? fit.c_byte : 1.0;
  return edge_us + per_byte * memory_bound_features(spec, bytes - edge, 0).bytes_term;
}

}  // namespace pm2lat
