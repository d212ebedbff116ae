// Operand values for GEMM and memory measurements. Zeros would measure the wrong thing (the
// math units draw less power and may clock higher on zeros), NaN, Inf and denormals slow some
// paths down: values are random magnitudes in [1/16, 1) with random signs, in the storage
// format of the dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "pm2lat/dtype.h"

namespace pm2lat::calibrate::run {

// `bytes` rounded down to whole elements of `type` (fp32, tf32, bf16, fp16, fp8_e4m3).
std::vector<unsigned char> random_operand_bytes(DType type, std::size_t bytes, std::uint64_t seed);

}  // namespace pm2lat::calibrate::run
