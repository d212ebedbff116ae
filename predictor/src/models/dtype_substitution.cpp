#include "pm2lat/models/dtype_substitution.h"

#include <cmath>

#include "pm2lat/prediction.h"

namespace pm2lat {

std::uint32_t dtype_substitution_flags(const DeviceSpec& target, DType calibrated,
                                       DType requested) noexcept {
  if (calibrated == requested) return 0;
  const double a = target.peak_tflops(calibrated), b = target.peak_tflops(requested);
  // Data-sheet peaks of the same path agree to the last digit; 0.1 % leaves room for rounding.
  constexpr double kSameRate = 1e-3;
  if (a > 0 && b > 0 && std::fabs(a / b - 1) < kSameRate)
    return prediction_flags::kDtypeSubstituted;
  return prediction_flags::kSpecScaled;
}

}  // namespace pm2lat
