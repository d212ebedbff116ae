#include "pm2lat/models/roofline_model.h"

#include <algorithm>

namespace pm2lat {

double roofline_kernel_us(const DeviceSpec& spec, double flops, double bytes,
                          DType compute) noexcept {
  const double peak = std::max(1.0, spec.peak_flop_per_us(compute));
  const double bw = std::max(1.0, spec.bytes_per_us());
  return kMinimumKernelUs + std::max(std::max(0.0, flops) / peak, std::max(0.0, bytes) / bw);
}

}  // namespace pm2lat
