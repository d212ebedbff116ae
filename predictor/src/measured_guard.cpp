#include "pm2lat/measured_guard.h"

#include <algorithm>
#include <cmath>

#include "pm2lat/models/physical_bounds.h"

namespace pm2lat {
namespace {

// Kernels the model prices from a stand-in rather than a model of their own.
bool unmodelled(const GuardInput& in) noexcept {
  return in.family == KernelFamily::kUnknown ||
         in.source.has(prediction_flags::kFallback | prediction_flags::kNoShape);
}

}  // namespace

GuardVerdict judge_measurement(const GuardInput& in, const GuardPolicy& policy) noexcept {
  GuardVerdict v;
  if (!(in.measured_us > 0) || !(in.source.us > 0) || !std::isfinite(in.measured_us) ||
      !std::isfinite(in.source.us)) {
    return v;  // kNoMeasure: nothing to compare
  }
  const double host = std::max(0.0, in.source_host_us);
  const double device_predicted = in.source.us - host;
  const double device_measured = in.measured_us - host;
  if (device_predicted < guard_constants::kMinDeviceToHost * host || !(device_measured > 0)) {
    v.reason = GuardReason::kHostBound;
    return v;
  }
  v.scale = device_measured / device_predicted;
  // A shape the predictor rejected is not the work it assumed: its bound says nothing.
  if (in.source_lower_us > 0 && !in.source.has(prediction_flags::kShapeRejected) &&
      in.measured_us < in.source_lower_us) {
    v.reason = GuardReason::kBelowPhysics;
    return v;
  }
  const double factor = unmodelled(in) ? policy.unmodelled_factor : policy.factor;
  v.reason =
      v.scale > factor || v.scale * factor < 1 ? GuardReason::kDisagrees : GuardReason::kAgrees;
  return v;
}

Prediction guarded_forecast(const GuardVerdict& verdict, const Prediction& target,
                            bool target_is_source_gpu, double target_host_us) noexcept {
  if (target_is_source_gpu || !verdict.anchors() || !(target.us > 0)) return target;
  // The target runs a kernel configuration of its own choosing, not the one measured: what
  // the measurement says about the measured kernel says nothing about it.
  if (target.has(prediction_flags::kConfigChosen)) return target;
  const double host = std::clamp(target_host_us, 0.0, target.us);
  Prediction p = target;
  p.us = host + (target.us - host) * verdict.scale;
  p.flags |= prediction_flags::kAnchored;
  return p;
}

double source_lower_bound_us(const KernelRecord& record, const KernelClass& cls,
                             const DeviceSpec& source, TimeBasis basis) noexcept {
  if (!operator_work(record.op, cls).known()) return 0;
  return physical_bounds(record, cls, source, &source, basis).lower_us;
}

}  // namespace pm2lat
