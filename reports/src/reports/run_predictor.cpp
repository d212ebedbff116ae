#include "pm2lat/reports/run_predictor.h"

namespace pm2lat::reports {

RunPredictor::RunPredictor(Predictor& predictor, const std::vector<std::string>& targets)
    : targets_(predictor, kCacheEntries) {
  for (const auto& t : targets) targets_.add(t);
}

std::size_t RunPredictor::add_target(std::string_view gpu_name) { return targets_.add(gpu_name); }
std::size_t RunPredictor::add_target(const DeviceSpec& spec) { return targets_.add(spec); }

bool RunPredictor::spec_scaled(std::size_t target) const {
  return targets_.target(target).spec_scaled;
}

void RunPredictor::add_columns(RunTable& table) const {
  columns_.clear();
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    columns_.push_back(table.add_target(targets_.names()[i]));
    table.set_spec_scaled(columns_.back(), spec_scaled(i));
  }
}

const DeviceSpec* RunPredictor::source_spec(std::string_view gpu) const noexcept {
  return gpu.empty() ? nullptr : targets_.catalogue().find(gpu);
}

void RunPredictor::predict(const KernelRecord& record, const KernelClass& cls,
                           const DeviceSpec* source, RunTable& table, std::size_t row) const {
  PredictOptions options;
  options.basis = record.basis;
  options.source_spec = source;
  if (source != nullptr) options.source_device = source->name;
  const auto predictions = targets_.predict(record, cls, options);
  const GuardVerdict verdict = judge(record, cls, source, predictions);
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    const bool own = targets_.target(i).spec == source;
    const GpuTimeRatioRange range = verdict.anchors() && !own
                                        ? time_ratio_range(source, &targets_.spec(i))
                                        : GpuTimeRatioRange{};
    table.set_prediction(row, columns_[i],
                         guarded_forecast(verdict, predictions[i], own, 0, range));
  }
}

GuardVerdict RunPredictor::judge(const KernelRecord& record, const KernelClass& cls,
                                 const DeviceSpec* source,
                                 std::span<const Prediction> predictions) const {
  // Only a kernel's device time compares with kernel-time predictions; the run's GPU must be
  // among the targets for its own prediction to exist.
  if (!guard_ || source == nullptr || !record.measured_us || record.basis != TimeBasis::kKernel)
    return {};
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    if (targets_.target(i).spec != source) continue;
    GuardInput in;
    in.measured_us = *record.measured_us;
    in.source = predictions[i];
    in.source_lower_us = source_lower_bound_us(record, cls, *source, record.basis);
    in.family = cls.family;
    return judge_measurement(in, *guard_);
  }
  return {};
}

}  // namespace pm2lat::reports
