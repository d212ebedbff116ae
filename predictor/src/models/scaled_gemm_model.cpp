#include "pm2lat/models/scaled_gemm_model.h"

#include <algorithm>
#include <cmath>

#include "octaves.h"
#include "pm2lat/models/gemm_neighbourhood.h"

namespace pm2lat {
namespace {

// A gain in peak tensor throughput is realised at ratio^(2/3) (see scaled_gemm_k_step_scale).
constexpr double kThroughputGainExponent = 2.0 / 3.0;
// Weight of the wave count in the residual neighbourhood: the other GEMMs'.
using gemm_neighbourhood::kWaveCoordinateWeight;
// Distance, in octaves, between a token count aligned for the activation scales and one that
// is not.
constexpr double kAlignmentCoordinate = 1.0;

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
                                const ScaledGemmWork& work, double k_loop_scale) noexcept {
  ScaledGemmTime t;
  t.quant_us = scaled_gemm_quant_us(fit, spec, work.quant_bytes);
  const GemmConfigFit& c = fit.gemm;
  const GemmWaveFeatures f = gemm_wave_features(c, spec, work.gemm);
  // The wave model (gemm_wave_kernel_us) with its K loop scaled.
  t.gemm_us =
      std::max(0.5, c.c0 + k_loop_scale * (c.c_wave_k * f.wave_k + c.c_block_k * f.block_k) +
                        c.c_wave * f.wave + c.c_mem * f.mem);
  t.host_us = work.m_aligned || fit.host_unaligned_us <= 0 ? fit.host_us : fit.host_unaligned_us;
  return t;
}

double scaled_gemm_k_step_scale(const ScaledGemmFit& fit, const DeviceSpec& from,
                                const DeviceSpec& to, std::int64_t m, std::int64_t n,
                                std::int64_t k) noexcept {
  const double peak_from = from.peak_flop_per_us(fit.dtype),
               peak_to = to.peak_flop_per_us(fit.dtype);
  if (peak_from <= 0 || peak_to <= 0 || from.bytes_per_us() <= 0 || to.bytes_per_us() <= 0)
    return 1.0;
  const double md = static_cast<double>(m), nd = static_cast<double>(n),
               kd = static_cast<double>(k);
  // The call's own FLOPs, not its nominal tiles': small-token kernels swap the operands or run
  // narrow tiles, so padding a few tokens to a whole tile would overstate their tensor work.
  const double flops = 2.0 * md * nd * kd;
  const double bytes = dtype_bytes(fit.dtype) * (md + nd) * kd +
                       activation_scale_bytes(fit.scaling, md, kd) +
                       weight_scale_bytes(fit.scaling, nd, kd);
  const double tensor_us = flops / peak_from, stream_us = bytes / from.bytes_per_us();
  const double tensor_share = tensor_us / std::max(1e-12, tensor_us + stream_us);
  const double per_sm =
      (peak_from / std::max(1, from.sm_count)) / (peak_to / std::max(1, to.sm_count));
  return tensor_share * std::pow(per_sm, kThroughputGainExponent) +
         (1 - tensor_share) * from.bytes_per_us() / to.bytes_per_us();
}

std::array<double, 5> scaled_gemm_residual_key(const ScaledGemmFit& f, const DeviceSpec& spec,
                                               std::int64_t m, std::int64_t n,
                                               std::int64_t k) noexcept {
  const ScaledGemmWork w = scaled_gemm_work(f, m, n, k);
  const GemmWaveFeatures x = gemm_wave_features(f.gemm, spec, w.gemm);
  return {octaves(static_cast<double>(m)), octaves(static_cast<double>(n)),
          octaves(static_cast<double>(k)), kWaveCoordinateWeight * octaves(x.wave),
          w.m_aligned ? 0.0 : kAlignmentCoordinate};
}

}  // namespace pm2lat
