// Predictions for low-precision GEMMs (FP8 per-tensor, block-scaled FP8, NVFP4, ...) from the
// backends calibrated in the profiles' scaled_gemm sections (models/scaled_gemm_model.h), and
// for the activation quantisation kernels that run before them.
//
// Per target and per operand type with its scaling, the backends come from the target's own
// profile, else from the most similar calibrated GPU (same architecture generation first),
// carried over by spec ratios (flag spec_scaled). The backend serving a shape is the one the
// record names when it was observed on the target, else the target's own choice for the
// nearest calibrated shapes (flag config_chosen when that differs from the record's). A
// record that names a GEMM kernel (a library kernel name) gets the GEMM kernel's time; a
// record of a whole framework call (no kernel name, or a backend's name) gets the call's.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/prediction.h"
#include "pm2lat/profile.h"

namespace pm2lat {

struct PredictOptions;

class ScaledGemmPredictor {
 public:
  ScaledGemmPredictor();
  // `catalogue` and `profiles` must outlive the predictor.
  ScaledGemmPredictor(const DeviceCatalogue& catalogue, const std::vector<Profile>& profiles);
  // The same, one profile at a time (before any target is added): a profile's low-precision
  // points are read only here, so a loader may hold one profile's at a time.
  void add_profile(const DeviceCatalogue& catalogue, const Profile& profile);
  ScaledGemmPredictor(ScaledGemmPredictor&&) noexcept;
  ScaledGemmPredictor& operator=(ScaledGemmPredictor&&) noexcept;
  ~ScaledGemmPredictor();

  // Registers the next target (numbered in the order added, as the predictor numbers them).
  void add_target(const DeviceSpec& spec);

  // The prediction for a low-precision GEMM or quantisation kernel whose type some profile
  // calibrated; nullopt for anything else (another model takes it).
  std::optional<Prediction> predict(const KernelRecord& record, const KernelClass& cls,
                                    std::size_t target, const PredictOptions& options,
                                    bool observed_on_target) const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pm2lat
