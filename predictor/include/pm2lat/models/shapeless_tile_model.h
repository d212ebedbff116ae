// A tile kernel (GEMM or implicit-GEMM convolution) launched without a recorded shape, whose
// configuration no profile calibrated: its grid and its tile (from the name) are known, its
// reduction length is not. Each block runs a typical K loop of tile steps at a fraction of the
// GPU's per-SM peak for the kernel's math, wave after wave over the SMs. The answer is a guess
// with little information behind it (flags fallback, no_shape: the widest error band), but it
// is the launch's own order of magnitude, where a roofline of no work is one launch floor
// (a TF32 cuDNN-as-GEMM kernel of 512 blocks: 2 µs, measured 77).
#pragma once

#include "pm2lat/device_spec.h"
#include "pm2lat/dtype.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/prediction.h"

namespace pm2lat {

// What a tile kernel runs at without a calibration of its own: each wave's tile steps at half
// of the per-SM peak (what cuDNN's TF32 kernels reach on H100), a launch-sized fixed cost, and
// a reduction of 3x3 taps over 128 channels (1152), a middle-sized convolution layer or linear
// layer's K.
inline constexpr double kUncalibratedInverseEfficiency = 2.0;
inline constexpr double kUncalibratedFixedUs = 4.0;
inline constexpr double kTypicalReduction = 1152;

// The prediction for `record` on `spec` (the math type from the class and `dtype`). Launches
// of a single block, or kernels whose name gives no configuration, take the roofline fallback.
Prediction shapeless_tile_prediction(const KernelRecord& record, const KernelClass& cls,
                                     const DeviceSpec& spec, DType dtype) noexcept;

}  // namespace pm2lat
