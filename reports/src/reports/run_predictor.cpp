#include "pm2lat/reports/run_predictor.h"

#include "pm2lat/device_catalogue.h"
#include "pm2lat/reports/input_file.h"

namespace pm2lat::reports {

std::string canonical_gpu(const Predictor& predictor, std::string_view name) {
  try {
    return predictor.catalogue().resolve(name).name;
  } catch (const UnknownDeviceError& e) {
    std::string msg = "unknown GPU '" + std::string(name) + "'";
    if (!e.close_matches().empty()) {
      msg += " (closest:";
      for (std::size_t i = 0; i < e.close_matches().size(); ++i)
        msg += (i ? ", " : " ") + e.close_matches()[i];
      msg += ")";
    }
    throw InputError(msg + "; known GPUs are listed in devices.json of the profile directory");
  }
}

RunPredictor::RunPredictor(Predictor& predictor, const std::vector<std::string>& targets)
    : predictor_(predictor) {
  for (const auto& t : targets) add_target(t);
}

std::size_t RunPredictor::add_target(std::string_view gpu_name) {
  const std::string canonical = canonical_gpu(predictor_, gpu_name);
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == canonical) return i;
  }
  ids_.push_back(predictor_.add_target(canonical));
  names_.push_back(canonical);
  return names_.size() - 1;
}

bool RunPredictor::spec_scaled(std::size_t target) const {
  return predictor_.target(ids_.at(target)).spec_scaled;
}

void RunPredictor::add_columns(RunTable& table) const {
  columns_.clear();
  for (std::size_t i = 0; i < names_.size(); ++i) {
    columns_.push_back(table.add_target(names_[i]));
    table.set_spec_scaled(columns_.back(), spec_scaled(i));
  }
}

const DeviceSpec* RunPredictor::source_spec(std::string_view gpu) const noexcept {
  return gpu.empty() ? nullptr : predictor_.catalogue().find(gpu);
}

void RunPredictor::predict(const KernelRecord& record, const KernelClass& cls,
                           const DeviceSpec* source, RunTable& table, std::size_t row) const {
  PredictionMemo::key_of(record, source, key_);
  const std::vector<Prediction>* known = memo_.find(key_);
  if (known == nullptr || known->size() != ids_.size()) {  // new pair, or targets added since
    PredictOptions opt;
    opt.basis = record.basis;
    opt.source_spec = source;
    if (source != nullptr) opt.source_device = source->name;
    std::vector<Prediction> fresh;
    fresh.reserve(ids_.size());
    for (TargetId id : ids_) fresh.push_back(predictor_.predict(record, cls, id, opt));
    known = &memo_.insert(key_, std::move(fresh));
  }
  for (std::size_t i = 0; i < ids_.size(); ++i) table.set_prediction(row, columns_[i], (*known)[i]);
}

}  // namespace pm2lat::reports
