// What a GEMM prediction says when the record's operand type had no calibration of its own on
// the target and another type's stood in.
#pragma once

#include <array>
#include <cstdint>

#include "pm2lat/device_spec.h"
#include "pm2lat/dtype.h"

namespace pm2lat {

// Flags of a prediction made with a `calibrated` configuration for a `requested` operand type
// on `target`: none when the types are the same; dtype_substituted when the target runs both
// at the same tensor throughput (FP16 on a BF16 calibration: the GPU's own profile, the same
// tensor cores, nothing scaled); spec_scaled when the math was rescaled by a peak ratio (FP8 on
// a BF16 calibration, TF32 on FP32).
std::uint32_t dtype_substitution_flags(const DeviceSpec& target, DType calibrated,
                                       DType requested) noexcept;

// The operand types whose GEMM calibration stands in for `dtype`'s, in the order tried: the
// same math path first, then the closest one.
std::array<DType, 4> substitution_order(DType dtype) noexcept;

}  // namespace pm2lat
