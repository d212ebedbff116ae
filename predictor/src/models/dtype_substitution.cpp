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

std::array<DType, 4> substitution_order(DType dtype) noexcept {
  using Order = std::array<DType, 4>;
  switch (dtype) {
    case DType::kTf32: return Order{DType::kTf32, DType::kBf16, DType::kFp16, DType::kFp32};
    case DType::kFp16: return Order{DType::kFp16, DType::kBf16, DType::kTf32, DType::kFp32};
    case DType::kBf16: return Order{DType::kBf16, DType::kFp16, DType::kTf32, DType::kFp32};
    case DType::kFp8E4M3:
    case DType::kFp8E5M2:
    case DType::kFp4E2M1:
    case DType::kInt8: return Order{dtype, DType::kBf16, DType::kFp16, DType::kTf32};
    default: return Order{DType::kFp32, DType::kTf32, DType::kBf16, DType::kFp16};
  }
}

}  // namespace pm2lat
