// Predictions of kernels already seen. A training or inference step launches the same few
// hundred (kernel, shape) pairs over and over, and a prediction depends only on what the
// record says about the kernel and its work, so a run predicts each distinct pair once per
// target and reuses it. The key is every field the predictor reads, byte for byte (no hash
// stands in for it), so a cached prediction is the one the predictor would give.
//
// Bounded: when `capacity` keys are held the cache starts over (a run whose distinct pairs
// outgrow it keeps predicting correctly, only more slowly). Not thread-safe: one owner.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/predict_options.h"
#include "pm2lat/prediction.h"

namespace pm2lat {

class PredictionCache {
 public:
  explicit PredictionCache(std::size_t capacity) : capacity_(capacity) {}

  // What a prediction of `record` depends on: the kernel's name and class, its launch, its
  // call's context, the time basis, where it was observed and how it was timed.
  static void key_of(const KernelRecord& record, const KernelClass& cls,
                     const PredictOptions& options, std::string& key);

  // The predictions stored for `key`, or nullptr.
  const std::vector<Prediction>* find(const std::string& key) const;
  const std::vector<Prediction>& insert(const std::string& key, std::vector<Prediction> values);

  std::size_t size() const noexcept { return entries_.size(); }
  std::size_t hits() const noexcept { return hits_; }

 private:
  std::size_t capacity_;
  // Keys are a few hundred bytes: the standard library's word-at-a-time hash, not FNV-1a's
  // byte-at-a-time chain, keeps a repeat cheaper than a prediction.
  std::unordered_map<std::string, std::vector<Prediction>> entries_;
  mutable std::size_t hits_ = 0;
};

}  // namespace pm2lat
