// A tile kernel (GEMM or implicit-GEMM convolution) launched without a recorded shape, whose
// configuration no profile calibrated: its grid and its tile (from the name) are known, its
// reduction length is not. Each block runs a typical K loop of tile steps at a fraction of the
// GPU's per-SM peak for the kernel's math, wave after wave over the SMs. The answer is a guess
// with little information behind it (flags fallback, no_shape: the widest error band), but it
// is the launch's own order of magnitude, where a roofline of no work is one launch floor
// (a TF32 cuDNN-as-GEMM kernel of 512 blocks: 2 µs, measured 77).
#pragma once

#include <string_view>

#include "pm2lat/device_spec.h"
#include "pm2lat/dtype.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/prediction.h"

namespace pm2lat {

// What a tile kernel runs at without a calibration of its own: a launch-sized fixed cost and a
// reduction of 3x3 taps over 128 channels (1152), a middle-sized convolution layer or linear
// layer's K, each wave's tile steps at a fraction of the GPU's per-SM peak for the kernel's math
// (uncalibrated_inverse_efficiency).
inline constexpr double kUncalibratedFixedUs = 4.0;
inline constexpr double kTypicalReduction = 1152;
// A kernel whose name does not say which GPU generation's MMA it was built for: half the peak.
inline constexpr double kUncalibratedInverseEfficiency = 2.0;
// A kernel built for the target's own generation: NVIDIA's own GEMMs of at least 1e11 FLOPs
// reach a median 0.79 of the BF16 peak on an H100-SXM and 0.85 on an A100-SXM
// (AIConfigurator's gemm_bf16 table, ../shared/data/aiconfigurator).
inline constexpr double kNativeTileEfficiency = 0.8;
// Hopper's tensor-core peak is reached only by its asynchronous warp-group MMA (wgmma); the
// synchronous mma.sync of earlier generations reaches about 2/3 of it (FlashAttention-3, Shah
// et al. 2024, section 2.2). Blackwell's data-centre GPUs (tcgen05) are taken to cap it alike:
// no figure of their own is public.
inline constexpr double kSynchronousMmaCeiling = 2.0 / 3.0;

// The compute-capability major of the MMA a kernel's name says it was built for (the decoded
// GEMM configuration's `arch`: "sm90" -> 9, "cutlass_80" -> 8, "ampere" -> 8, "volta" -> 7);
// 0 when the name does not say.
int kernel_mma_generation(std::string_view arch) noexcept;

// The inverse of the fraction of `target`'s per-SM peak for `math` that an uncalibrated tile
// kernel of class `cls` runs its tile steps at. The generation's ceiling holds only on the GPU
// the kernel ran on (`ran_on_target`): another GPU's library runs a kernel of its own there,
// and a kernel built for a later generation than the target cannot run on it at all.
double uncalibrated_inverse_efficiency(const KernelClass& cls, DType math, const DeviceSpec& target,
                                       bool ran_on_target) noexcept;

// The prediction for `record` on `spec` (the math type from the class and `dtype`). Launches
// of a single block, or kernels whose name gives no configuration, take the roofline fallback.
Prediction shapeless_tile_prediction(const KernelRecord& record, const KernelClass& cls,
                                     const DeviceSpec& spec, DType dtype,
                                     bool ran_on_target) noexcept;

}  // namespace pm2lat
