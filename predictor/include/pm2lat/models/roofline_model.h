// The fallback for kernels no dedicated model covers: the spec roofline, max(FLOPs / peak,
// bytes / bandwidth), above a nominal launch cost. Always flagged `fallback`.
#pragma once

#include "pm2lat/device_spec.h"
#include "pm2lat/dtype.h"

namespace pm2lat {

// Device time of a kernel that does `flops` of `compute`-type math and moves `bytes`.
double roofline_kernel_us(const DeviceSpec& spec, double flops, double bytes,
                          DType compute) noexcept;

// The launch-to-completion time of an empty kernel: what any kernel costs at least.
inline constexpr double kMinimumKernelUs = 2.0;

}  // namespace pm2lat
