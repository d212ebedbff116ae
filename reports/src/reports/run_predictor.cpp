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
  for (std::size_t i = 0; i < predictions.size(); ++i)
    table.set_prediction(row, columns_[i], predictions[i]);
}

}  // namespace pm2lat::reports
