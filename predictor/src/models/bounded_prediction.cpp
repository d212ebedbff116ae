#include "pm2lat/models/bounded_prediction.h"

namespace pm2lat {

KernelRecord without_stated_work(const KernelRecord& record) {
  KernelRecord r = record;
  r.op.gemm = GemmShape{};
  r.op.conv = ConvShape{};
  r.op.attention = AttentionShape{};
  r.op.vec = VectorShape{};
  return r;
}

AppliedBounds applied_bounds(const KernelRecord& record, const KernelClass& cls,
                             const DeviceSpec& target, const DeviceSpec* source,
                             TimeBasis basis) noexcept {
  BoundsQuery q = bounds_query(record, cls, target, source, basis);
  AppliedBounds out;
  // Work the launch cannot have done is not the kernel's: bound what the launch implies.
  if (!work_consistent_with_launch(q.work.bytes, record.launch.grid, record.launch.block, cls)) {
    q.work = OperatorWork{};
    out.stated_work_rejected = true;
  }
  out.bounds = physical_bounds(q);
  return out;
}

Prediction within_bounds(Prediction p, const PhysicalBounds& bounds) noexcept {
  if (p.has(prediction_flags::kCommunication) || !(p.us > 0)) return p;
  if (bounds.contains(p.us)) return p;
  p.us = bounds.clamp(p.us);
  p.flags |= prediction_flags::kClamped;
  return p;
}

}  // namespace pm2lat
