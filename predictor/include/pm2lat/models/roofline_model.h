// The fallback for kernels no dedicated model covers: the spec roofline, max(FLOPs / peak,
// bytes / bandwidth), above a nominal launch cost. Always flagged `fallback`.
#pragma once

#include "pm2lat/device_spec.h"
#include "pm2lat/dtype.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/prediction.h"

namespace pm2lat {

// Device time of a kernel that does `flops` of `compute`-type math and moves `bytes`.
double roofline_kernel_us(const DeviceSpec& spec, double flops, double bytes,
                          DType compute) noexcept;

// The launch-to-completion time of an empty kernel: what any kernel costs at least.
inline constexpr double kMinimumKernelUs = 2.0;

// The fallback prediction for a record: its work (FLOPs of a GEMM, convolution or attention
// shape, bytes of a GEMM's operands or of a memory-bound op) on `spec`'s roofline, flagged
// fallback (and no_shape when the record states no work).
Prediction roofline_prediction(const KernelRecord& record, const KernelClass& cls,
                               const DeviceSpec& spec) noexcept;

}  // namespace pm2lat
