// Attention kernels on a target GPU: picks the calibrated configuration that matches the
// kernel (implementation from the name; head dimension, KV type and window from the shape),
// evaluates the attention model with the target's spec and corrects it by the residuals of
// the nearest calibrated shapes of that configuration.
//
// Where the target has no calibration of that implementation, the configuration comes from
// the most similar GPU that has one, carried over by per-SM math throughput (flag
// spec_scaled); where no GPU has it, the target's own preferred implementation stands in
// (flag config_chosen). Backward and helper kernels are derived from the forward fits.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/model_query.h"
#include "pm2lat/prediction.h"
#include "pm2lat/profile.h"

namespace pm2lat {

class AttentionPredictor {
 public:
  AttentionPredictor();
  // `profiles` must outlive the predictor; their device names are canonical catalogue names.
  AttentionPredictor(const DeviceCatalogue& catalogue, const std::vector<Profile>& profiles);
  // The same, one profile at a time (before any target is added): a profile's attention
  // points are read only here, so a loader may hold one profile's at a time.
  void add_profile(const DeviceCatalogue& catalogue, const Profile& profile);
  AttentionPredictor(AttentionPredictor&&) noexcept;
  AttentionPredictor& operator=(AttentionPredictor&&) noexcept;
  ~AttentionPredictor();

  void add_target(const Target& target);

  // Whether any profile calibrates attention.
  bool calibrated() const noexcept;

  // Always answers, for an attention kernel (family attention, or an unclassified kernel
  // whose context is an attention op). Allocation-free.
  std::optional<Prediction> predict(const ModelQuery& query) const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pm2lat
