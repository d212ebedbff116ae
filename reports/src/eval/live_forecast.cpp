#include "pm2lat/reports/eval/live_forecast.h"

#include <algorithm>

#include "pm2lat/models/physical_bounds.h"

namespace pm2lat::reports {
namespace {

// The guard's verdict on one operator: its measured time against the model's forecast of the
// same call on the source GPU; the bound is the sum of its kernels' lower bounds (the call
// runs them one after another).
GuardVerdict judge_operator(const StepReplay& source, const ObservedOperator& op,
                            const GuardPolicy& policy) {
  if (!op.measured_us) return {};
  const Predictor& predictor = source.predictor();
  const Target& gpu = predictor.target(source.target());
  GuardInput in;
  in.measured_us = *op.measured_us;
  PredictOptions kernel_time;
  kernel_time.basis = TimeBasis::kKernel;
  kernel_time.source_spec = gpu.spec;
  double kernels_us = 0, host_us = 0;
  bool first = true;
  for (const LoweredOp& k : op.kernels) {
    host_us += source.dispatch_us(k);
    if (!k.has_kernel) continue;
    if (first) in.family = k.cls.family;
    first = false;
    kernels_us += predictor.predict(k.record, k.cls, source.target(), kernel_time).us;
    in.source_lower_us += source_lower_bound_us(k.record, k.cls, *gpu.spec, TimeBasis::kKernel);
  }
  if (first) return {};  // no kernel: nothing on the GPU to forecast
  in.source.us = host_us + kernels_us;
  in.source_host_us = host_us;
  return judge_measurement(in, policy);
}

}  // namespace

void forecast_from_observation(const StepReplay& source, const ObservedOperator& op,
                               TargetId target, const std::optional<GuardPolicy>& guard,
                               std::vector<Prediction>& out) {
  const Predictor& predictor = source.predictor();
  PredictOptions opt;
  opt.basis = TimeBasis::kKernel;
  opt.source_spec = predictor.target(source.target()).spec;
  const GuardVerdict verdict = guard ? judge_operator(source, op, *guard) : GuardVerdict{};
  const bool same_gpu = target == source.target();
  const bool anchors = verdict.anchors() && !same_gpu;
  const GpuTimeRatioRange range =
      anchors ? time_ratio_range(*opt.source_spec, *predictor.target(target).spec)
              : GpuTimeRatioRange{};
  for (const LoweredOp& k : op.kernels) {
    if (!k.has_kernel) continue;
    const Prediction p = predictor.predict(k.record, k.cls, target, opt);
    // The operator's verdict is on the sum of its kernels: each kernel's share of the
    // measurement is its own source prediction times the verdict's scale.
    const double source_us =
        anchors ? predictor.predict(k.record, k.cls, source.target(), opt).us : 0.0;
    out.push_back(guarded_forecast(verdict, p, same_gpu, 0, range, source_us));
  }
}

}  // namespace pm2lat::reports
