#include "pm2lat/models/roofline_model.h"

#include <algorithm>

namespace pm2lat {

double roofline_kernel_us(const DeviceSpec& spec, double flops, double bytes,
                          DType compute) noexcept {
  const double peak = std::max(1.0, spec.peak_flop_per_us(compute));
  const double bw = std::max(1.0, spec.bytes_per_us());
  return kMinimumKernelUs + std::max(std::max(0.0, flops) / peak, std::max(0.0, bytes) / bw);
}

Prediction roofline_prediction(const KernelRecord& r, const KernelClass& cls,
                               const DeviceSpec& spec) noexcept {
  Prediction p;
  p.model = ModelKind::kRoofline;
  p.flags |= prediction_flags::kFallback;
  p.basis = TimeBasis::kKernel;
  double flops = 0, bytes = 0;
  DType compute = DType::kFp32;
  switch (r.op.kind) {
    case OpKind::kGemm:
      flops = r.op.gemm.flops();
      bytes = dtype_bytes(r.op.gemm.a) * static_cast<double>(r.op.gemm.batch) *
              static_cast<double>(r.op.gemm.m * r.op.gemm.k + r.op.gemm.k * r.op.gemm.n +
                                  r.op.gemm.m * r.op.gemm.n);
      compute = r.op.gemm.compute != DType::kUnknown ? r.op.gemm.compute : r.op.gemm.a;
      break;
    case OpKind::kConv:
      flops = r.op.conv.flops();
      compute = r.op.conv.dtype;
      break;
    case OpKind::kAttention:
      flops = r.op.attention.flops();
      compute = r.op.attention.dtype;
      break;
    default: bytes = r.op.vec.bytes(); break;
  }
  if (cls.gemm.tensor_core && compute == DType::kFp32) compute = DType::kTf32;
  if (flops <= 0 && bytes <= 0) p.flags |= prediction_flags::kNoShape;
  p.us = roofline_kernel_us(spec, flops, bytes, compute);
  return p;
}

}  // namespace pm2lat
