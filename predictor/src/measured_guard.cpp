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
  v.source_device_us = device_predicted;
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

GpuTimeRatioRange time_ratio_range(const DeviceSpec& source, const DeviceSpec& target) noexcept {
  const double ratios[] = {
      source.mem_bw_gbps / target.mem_bw_gbps,
      (source.sm_count * source.boost_clock_mhz) / (target.sm_count * target.boost_clock_mhz),
      source.fp32_tflops / target.fp32_tflops};
  GpuTimeRatioRange r{1, 1};  // latency-bound: the same time on both
  for (const double x : ratios) {
    if (!(x > 0) || !std::isfinite(x)) return {};  // a spec without the figure: no range
    r.lo = std::min(r.lo, x);
    r.hi = std::max(r.hi, x);
  }
  return r;
}

Prediction guarded_forecast(const GuardVerdict& verdict, const Prediction& target,
                            bool target_is_source_gpu, double target_host_us,
                            const GpuTimeRatioRange& range, double source_device_us) noexcept {
  if (target_is_source_gpu || !verdict.anchors() || !(target.us > 0)) return target;
  // The target runs a kernel configuration of its own choosing, not the one measured: what
  // the measurement says about the measured kernel says nothing about it.
  if (target.has(prediction_flags::kConfigChosen)) return target;
  const double host = std::clamp(target_host_us, 0.0, target.us);
  double device = (target.us - host) * verdict.scale;
  // The measured device time of this kernel is its source prediction times the scale.
  const double source_device = source_device_us > 0 ? source_device_us : verdict.source_device_us;
  if (source_device > 0) {
    const double measured_device = source_device * verdict.scale;
    device = std::clamp(device, measured_device * range.lo, measured_device * range.hi);
  }
  Prediction p = target;
  p.us = host + device;
  p.flags |= prediction_flags::kAnchored;
  return p;
}

double source_lower_bound_us(const KernelRecord& record, const KernelClass& cls,
                             const DeviceSpec& source, TimeBasis basis) noexcept {
  if (!operator_work(record.op, cls).known()) return 0;
  return physical_bounds(record, cls, source, &source, basis).lower_us;
}

}  // namespace pm2lat
