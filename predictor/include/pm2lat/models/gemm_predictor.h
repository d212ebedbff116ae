// GEMM kernels on a target GPU: the wave model (models/gemm_wave_model.h) of one kernel
// configuration, corrected by the residuals of the nearest calibrated shapes of that
// configuration.
//
// Which configuration: a kernel observed on the target runs as itself (its own calibration
// on the target, else the same kernel calibrated on a GPU of the same generation, carried
// over by spec ratios). A kernel observed on another GPU is one the target may never run:
// the target's configuration is chosen by a distance-weighted vote of its calibrated shapes
// nearest to the record's (flag config_chosen). Operand types without a calibration of their
// own borrow the closest math path, scaled by peak-throughput ratios; a target without a
// GEMM calibration borrows the most similar GPU's (flag spec_scaled). Launches without a
// shape run the wave model over the observed grid (flag no_shape).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/model_query.h"
#include "pm2lat/prediction.h"
#include "pm2lat/profile.h"

namespace pm2lat {

class GemmPredictor {
 public:
  GemmPredictor();
  // `profiles` must outlive the predictor; their device names are canonical catalogue names.
  GemmPredictor(const DeviceCatalogue& catalogue, const std::vector<Profile>& profiles);
  // The same, profile `i` at a time (each once, before any target is added): a profile's GEMM
  // points are read only here, so a loader may hold one profile's at a time.
  void add_profile(const DeviceCatalogue& catalogue, const std::vector<Profile>& profiles,
                   std::size_t i);
  GemmPredictor(GemmPredictor&&) noexcept;
  GemmPredictor& operator=(GemmPredictor&&) noexcept;
  ~GemmPredictor();

  void add_target(const Target& target);

  // Always answers: a GEMM no calibration covers gets the roofline (flag fallback).
  std::optional<Prediction> predict(const ModelQuery& query) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pm2lat
