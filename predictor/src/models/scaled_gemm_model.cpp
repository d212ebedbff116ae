#include "pm2lat/models/scaled_gemm_model.h"

#include <algorithm>
#include <cmath>

namespace pm2lat {
namespace {

// Weight of the wave count in the residual neighbourhood (as for the BF16 GEMMs).
constexpr double kWaveCoordinateWeight = 2.0;
// Distance, in octaves, between a token count aligned for the activation scales and one that
// is not.
constexpr double kAlignmentCoordinate = 1.0;

double log2_pos(double v) { return std::log2(std::max(1.0, v)); }

}  // namespace

double scaled_gemm_quant_bytes(DType dtype, GemmScaling scaling, double m, double k) noexcept {
  return m * k * (kScaledGemmInputBytes + dtype_bytes(dtype)) +
         activation_scale_bytes(scaling, m, k);
}

ScaledGemmWork scaled_gemm_work(const ScaledGemmFit& fit, std::int64_t m, std::int64_t n,
                                std::int64_t k) noexcept {
  ScaledGemmWork w;
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  const double md = static_cast<double>(m), nd = static_cast<double>(n),
               kd = static_cast<double>(k);
  w.gemm = gemm_work(fit.gemm, s, blocks_for_shape(fit.gemm, s, 1), 1, dtype_bytes(fit.dtype));
  w.gemm.bytes = dtype_bytes(fit.dtype) * (md * kd + nd * kd) + kScaledGemmOutputBytes * md * nd +
                 activation_scale_bytes(fit.scaling, md, kd) +
                 weight_scale_bytes(fit.scaling, nd, kd);
  w.quant_bytes = scaled_gemm_quant_bytes(fit.dtype, fit.scaling, md, kd);
  w.m_aligned = m % kScaleRowAlignment == 0;
  return w;
}

ScaledGemmFeatures scaled_gemm_features(const ScaledGemmFit& fit, const DeviceSpec& spec,
                                        const ScaledGemmWork& work) noexcept {
  ScaledGemmFeatures f;
  f.wave = gemm_wave_features(fit.gemm, spec, work.gemm);
  f.quant = work.quant_bytes / std::max(1.0, spec.bytes_per_us());
  return f;
}

double scaled_gemm_quant_us(const ScaledGemmFit& fit, const DeviceSpec& spec,
                            double quant_bytes) noexcept {
  return fit.quant_c0 + fit.quant_c_byte * quant_bytes / std::max(1.0, spec.bytes_per_us());
}

ScaledGemmTime scaled_gemm_time(const ScaledGemmFit& fit, const DeviceSpec& spec,
                                const ScaledGemmWork& work) noexcept {
  ScaledGemmTime t;
  t.quant_us = scaled_gemm_quant_us(fit, spec, work.quant_bytes);
  t.gemm_us = gemm_wave_kernel_us(fit.gemm, spec, work.gemm);
  t.host_us = work.m_aligned || fit.host_unaligned_us <= 0 ? fit.host_us : fit.host_unaligned_us;
  return t;
}

std::array<double, 5> scaled_gemm_residual_key(const ScaledGemmFit& f, const DeviceSpec& spec,
                                               std::int64_t m, std::int64_t n,
                                               std::int64_t k) noexcept {
  const ScaledGemmWork w = scaled_gemm_work(f, m, n, k);
  const GemmWaveFeatures x = gemm_wave_features(f.gemm, spec, w.gemm);
  return {log2_pos(static_cast<double>(m)), log2_pos(static_cast<double>(n)),
          log2_pos(static_cast<double>(k)),
          kWaveCoordinateWeight * std::log2(std::max(1.0, x.wave)),
          w.m_aligned ? 0.0 : kAlignmentCoordinate};
}

}  // namespace pm2lat
