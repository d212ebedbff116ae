#include "pm2lat/target_set.h"

#include <stdexcept>

namespace pm2lat {

TargetSet::TargetSet(const DeviceCatalogue& catalogue) : catalogue_(&catalogue), cache_(0) {}

TargetSet::TargetSet(Predictor& predictor, std::size_t cache_entries)
    : catalogue_(&predictor.catalogue()), predictor_(&predictor), cache_(cache_entries) {}

std::size_t TargetSet::add(std::string_view gpu_name) { return add(catalogue_->resolve(gpu_name)); }

std::size_t TargetSet::add(const DeviceSpec& spec) {
  for (std::size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i] == &spec) return i;
  }
  if (predictor_ != nullptr) ids_.push_back(predictor_->add_target(spec));
  specs_.push_back(&spec);
  names_.push_back(spec.name);
  return names_.size() - 1;
}

const Target& TargetSet::target(std::size_t i) const {
  if (predictor_ == nullptr) throw std::logic_error("TargetSet without a predictor");
  return predictor_->target(ids_.at(i));
}

std::span<const Prediction> TargetSet::predict(const KernelRecord& record, const KernelClass& cls,
                                               const PredictOptions& options) {
  if (predictor_ == nullptr) throw std::logic_error("TargetSet without a predictor");
  PredictionCache::key_of(record, cls, options, key_);
  const std::vector<Prediction>* known = cache_.find(key_);
  if (known == nullptr || known->size() != ids_.size()) {  // new pair, or targets added since
    std::vector<Prediction> fresh;
    fresh.reserve(ids_.size());
    for (TargetId id : ids_) fresh.push_back(predictor_->predict(record, cls, id, options));
    known = &cache_.insert(key_, std::move(fresh));
  }
  return *known;
}

}  // namespace pm2lat
