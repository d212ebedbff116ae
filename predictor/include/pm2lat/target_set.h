// The GPUs one run is predicted for, as the user named them (`pm2lat replay --targets`,
// `pm2lat run --targets`, PM2LAT_TARGETS): each name resolved once in the catalogue, in the
// user's order, a GPU named twice kept once. With a predictor, it predicts a record for every
// target at once, repeated records served from one PredictionCache.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/prediction_cache.h"
#include "pm2lat/predictor.h"

namespace pm2lat {

class TargetSet {
 public:
  // Distinct (kernel, shape) pairs cached by default: a step of a large model launches a few
  // thousand; the cache then holds a few MB.
  static constexpr std::size_t kDefaultCacheEntries = std::size_t{1} << 14;

  // Names only: resolves and keeps targets, predicts nothing (a launcher checking the names
  // before it starts a program). `catalogue` must outlive the set.
  explicit TargetSet(const DeviceCatalogue& catalogue);
  // Targets of `predictor`, which must outlive the set.
  explicit TargetSet(Predictor& predictor, std::size_t cache_entries = kDefaultCacheEntries);

  // Resolves a forgiving GPU name and adds it unless present; returns its index in the set.
  // Throws UnknownDeviceError (naming the closest known GPUs).
  std::size_t add(std::string_view gpu_name);
  // The same for a GPU already resolved in the catalogue.
  std::size_t add(const DeviceSpec& spec);

  std::size_t size() const noexcept { return names_.size(); }
  // Canonical catalogue names, in the order added.
  const std::vector<std::string>& names() const noexcept { return names_; }
  const DeviceSpec& spec(std::size_t i) const { return *specs_.at(i); }
  // The predictor's target (profiles, spec scaling); needs a predictor.
  const Target& target(std::size_t i) const;

  const DeviceCatalogue& catalogue() const noexcept { return *catalogue_; }

  // Predictions of `record` on every target, in order. `options.source_spec`: the GPU the
  // record was observed on, resolved once by the caller (catalogue().find); nullptr when
  // unknown. Needs a predictor.
  std::span<const Prediction> predict(const KernelRecord& record, const KernelClass& cls,
                                      const PredictOptions& options);

  const PredictionCache& cache() const noexcept { return cache_; }

 private:
  const DeviceCatalogue* catalogue_;
  Predictor* predictor_ = nullptr;
  std::vector<std::string> names_;
  std::vector<const DeviceSpec*> specs_;
  std::vector<TargetId> ids_;  // the predictor's ids, parallel to names_
  PredictionCache cache_;
  std::string key_;  // reused key buffer
};

}  // namespace pm2lat
