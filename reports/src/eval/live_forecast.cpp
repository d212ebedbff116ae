#include "pm2lat/reports/eval/live_forecast.h"

namespace pm2lat::reports {

void forecast_from_observation(const Predictor& predictor, const ObservedOperator& op,
                               TargetId source, TargetId target, std::vector<Prediction>& out) {
  PredictOptions opt;
  opt.basis = TimeBasis::kKernel;
  opt.source_spec = predictor.target(source).spec;
  for (const LoweredOp& k : op.kernels) {
    if (k.has_kernel) out.push_back(predictor.predict(k.record, k.cls, target, opt));
  }
}

}  // namespace pm2lat::reports
