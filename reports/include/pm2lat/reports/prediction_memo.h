// Predictions of kernels already seen. A training or inference step launches the same few
// hundred (kernel, shape) pairs over and over, and a prediction depends only on what the
// record says about the kernel and its work, so replaying a run predicts each distinct pair
// once per target and reuses it. The key is every field the predictor reads — exact, no
// hashing shortcuts — so a memoised prediction is the one the predictor would give.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/prediction.h"

namespace pm2lat::reports {

class PredictionMemo {
 public:
  // What the predictor's answer for `record` depends on: the kernel's name (which decides its
  // class), launch, op context and time basis, and the GPU it was observed on.
  static void key_of(const KernelRecord& record, const DeviceSpec* source, std::string& key);

  // The predictions stored for `key` (one per target), or nullptr.
  const std::vector<Prediction>* find(const std::string& key) const;
  const std::vector<Prediction>& insert(const std::string& key,
                                        std::vector<Prediction> predictions);

  std::size_t size() const noexcept { return memo_.size(); }
  std::size_t hits() const noexcept { return hits_; }

 private:
  std::unordered_map<std::string, std::vector<Prediction>> memo_;
  mutable std::size_t hits_ = 0;
};

}  // namespace pm2lat::reports
