#include "pm2lat/models/shapeless_tile_model.h"

#include <algorithm>
#include <cmath>

#include "pm2lat/models/conv_model.h"
#include "pm2lat/models/roofline_model.h"

namespace pm2lat {

Prediction shapeless_tile_prediction(const KernelRecord& r, const KernelClass& cls,
                                     const DeviceSpec& spec, DType dtype) noexcept {
  const std::uint64_t blocks = r.launch.grid.volume();
  if (cls.config.empty() || blocks <= 1) return roofline_prediction(r, cls, spec);
  const GemmConfigFit tile = conv_kernel_config(cls, dtype);
  const DType math = conv_math_type(cls, dtype);
  const double waves =
      std::ceil(static_cast<double>(blocks) / static_cast<double>(std::max(1, spec.sm_count)));
  const double k_iters = kTypicalReduction / static_cast<double>(std::max(1, tile.tile_k));
  Prediction p;
  p.model = ModelKind::kGemmWave;
  p.basis = TimeBasis::kKernel;
  p.flags |= prediction_flags::kFallback | prediction_flags::kNoShape;
  p.us = kUncalibratedFixedUs +
         kUncalibratedInverseEfficiency * waves * k_iters * conv_tile_step_us(tile, math, spec);
  return p;
}

}  // namespace pm2lat
