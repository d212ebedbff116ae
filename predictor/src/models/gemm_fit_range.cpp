#include "pm2lat/models/gemm_fit_range.h"

#include <algorithm>
#include <limits>

namespace pm2lat {

void extend_fit_range(GemmFitRange& range, const GemmWork& point) noexcept {
  range.max_k_iters = std::max(range.max_k_iters, point.k_iters);
}

RangedGemmTime gemm_kernel_us_in_range(const GemmConfigFit& fit, const DeviceSpec& spec,
                                       const GemmWork& work, const GemmFitRange& range,
                                       double flops, double launch_blocks,
                                       bool gemv_product) noexcept {
  RangedGemmTime t;
  t.us = gemm_wave_kernel_us(fit, spec, work);
  if (range.max_k_iters <= 0 || work.k_iters <= range.max_k_iters) return t;
  t.beyond_range = true;
  const double peak = spec.peak_flop_per_us(fit.dtype);
  const double bandwidth = std::max(1.0, spec.bytes_per_us());
  const bool memory_bound = peak <= 0 || work.bytes / bandwidth > flops / peak;
  if (!memory_bound) return t;
  const GemmWaveFeatures f = gemm_wave_features(fit, spec, work);
  const double sms = static_cast<double>(std::max(1, spec.sm_count));
  const bool observed = launch_blocks > 0;
  const double occupied = observed ? std::min(1.0, launch_blocks / sms) : 1.0;
  t.library_gemv = !observed && gemv_product;
  const double efficiency = t.library_gemv ? gemm_range_constants::kGemvBandwidthEfficiency
                                           : gemm_range_constants::kMeasuredGemvEfficiency;
  t.us = std::max(0.0, fit.c0) + std::max(0.0, fit.c_wave) * f.wave +
         work.bytes / (efficiency * bandwidth * occupied);
  if (observed || fit.nominal_launch) {
    GemmWork edge = work;
    edge.k_iters = range.max_k_iters;
    edge.bytes = work.bytes * range.max_k_iters / work.k_iters;
    t.us = std::max(t.us, gemm_wave_kernel_us(fit, spec, edge));
  }
  return t;
}

double chosen_gemv_us(const GemmConfigFit& fit, const DeviceSpec& spec, double operand_bytes,
                      double flops, DType math) noexcept {
  const double peak = spec.peak_flop_per_us(math);
  const double bandwidth = std::max(1.0, spec.bytes_per_us());
  const bool memory_bound = peak <= 0 || operand_bytes / bandwidth > flops / peak;
  if (!memory_bound) return std::numeric_limits<double>::infinity();
  return std::max(0.0, fit.c0) +
         operand_bytes / (gemm_range_constants::kMeasuredGemvEfficiency * bandwidth);
}

}  // namespace pm2lat
