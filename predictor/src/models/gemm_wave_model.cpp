#include "pm2lat/models/gemm_wave_model.h"

#include <algorithm>
#include <cmath>

namespace pm2lat {

std::int32_t split_k_from_grid(const Dim3& grid, std::int64_t batch) noexcept {
  if (batch <= 1) return static_cast<std::int32_t>(std::max<std::uint32_t>(1, grid.z));
  if (grid.z >= static_cast<std::uint64_t>(2 * batch) && grid.z % batch == 0)
    return static_cast<std::int32_t>(grid.z / batch);
  return 1;
}

double blocks_from_grid(const Dim3& grid, std::int64_t batch) noexcept {
  const double xy = static_cast<double>(grid.x) * static_cast<double>(grid.y);
  if (batch > 1 && static_cast<std::int64_t>(grid.z) < batch)
    return xy * static_cast<double>(batch);
  return xy * static_cast<double>(std::max<std::uint32_t>(1, grid.z));
}

double blocks_for_shape(const GemmConfigFit& c, const GemmShape& s, std::int32_t split_k) noexcept {
  const double tm = std::max(1, c.tile_m);
  const double tn = std::max(1, c.tile_n);
  const double along_m = c.tile_m_on_n ? tn : tm;
  const double along_n = c.tile_m_on_n ? tm : tn;
  const double tiles =
      std::ceil(static_cast<double>(s.m) / along_m) * std::ceil(static_cast<double>(s.n) / along_n);
  return tiles * static_cast<double>(std::max<std::int64_t>(1, s.batch)) *
         static_cast<double>(std::max(1, split_k));
}

GemmWork gemm_work(const GemmConfigFit& c, const GemmShape& s, double blocks, std::int32_t split_k,
                   double element_bytes) noexcept {
  GemmWork w;
  w.blocks = std::max(1.0, blocks);
  const double k_per_split = static_cast<double>(s.k) / static_cast<double>(std::max(1, split_k));
  w.k_iters = std::ceil(k_per_split / static_cast<double>(std::max(1, c.tile_k)));
  const double b = static_cast<double>(std::max<std::int64_t>(1, s.batch));
  const double m = static_cast<double>(s.m), n = static_cast<double>(s.n),
               k = static_cast<double>(s.k);
  w.bytes = element_bytes * b * (m * k + k * n + m * n);
  return w;
}

GemmWaveFeatures gemm_wave_features(const GemmConfigFit& c, const DeviceSpec& spec,
                                    const GemmWork& w) noexcept {
  const double slots = static_cast<double>(std::max(1, spec.sm_count)) *
                       static_cast<double>(std::max(1, c.blocks_per_sm));
  const double waves = std::ceil(w.blocks / slots);
  GemmWaveFeatures f;
  f.wave_k = waves * w.k_iters;
  f.block_k = w.blocks / static_cast<double>(std::max(1, spec.sm_count)) * w.k_iters;
  f.wave = waves;
  f.mem = w.bytes / std::max(1.0, spec.bytes_per_us());
  return f;
}

double gemm_wave_kernel_us(const GemmConfigFit& c, const DeviceSpec& spec,
                           const GemmWork& w) noexcept {
  const GemmWaveFeatures f = gemm_wave_features(c, spec, w);
  return std::max(0.5, c.c0 + c.c_wave_k * f.wave_k + c.c_block_k * f.block_k + c.c_wave * f.wave +
                           c.c_mem * f.mem);
}

}  // namespace pm2lat
