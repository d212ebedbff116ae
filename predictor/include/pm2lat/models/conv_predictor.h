// Convolution kernels on a target GPU (models/conv_model.h): the kernel configuration's own
// wave-model fit where the target (or, carried over by per-SM throughput, a GPU of the same
// architecture) calibrated it, else the class fit of its math path, else a spec estimate
// at a nominal efficiency. cuDNN's helper kernels inside a convolution (layout transforms,
// offset tables, Winograd transforms) are not served here: they are copies or elementwise.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/conv_model.h"
#include "pm2lat/models/model_query.h"
#include "pm2lat/prediction.h"
#include "pm2lat/profile.h"

namespace pm2lat {

class ConvPredictor {
 public:
  ConvPredictor();
  ConvPredictor(const DeviceCatalogue& catalogue, const std::vector<Profile>& profiles);
  ConvPredictor(ConvPredictor&&) noexcept;
  ConvPredictor& operator=(ConvPredictor&&) noexcept;
  ~ConvPredictor();

  void add_target(const Target& target);

  // Always answers. A record observed on another GPU names a kernel the target may not run:
  // when the target's own profile lacks it, the target's configuration is chosen by vote
  // among its calibrated convolutions nearest in shape, of the same pass and data type (flag
  // config_chosen). Call time (host dispatch included) when the options ask for it and the
  // fit was timed that way.
  std::optional<Prediction> predict(const ModelQuery& query) const noexcept;

 private:
  // The target's own configuration for a shape seen on another GPU, how it computes it, and
  // the grid it would launch: the record's grid is another kernel's. A non-fused Winograd
  // GEMM's from the shape; the record's where its kernel runs the same algorithm; else as
  // many blocks as the configuration's calibrated launches have output elements per block
  // (the record's again when its launches give no such figure).
  struct ChosenConfig {
    const KernelClass* cls = nullptr;
    ConvAlgorithm algorithm = ConvAlgorithm::kImplicitGemm;
    Dim3 grid;
  };
  // `source`: the GPU the record was measured on, when known. `chosen`: the configuration
  // chosen for the target, whose launch replaces the record's.
  Prediction predict(const KernelRecord& record, const KernelClass& cls, std::size_t target,
                     bool call_basis, bool choose_config, const DeviceSpec* source,
                     const ChosenConfig* chosen = nullptr) const noexcept;
  // Nothing chosen (cls nullptr) when the target runs the record's kernel itself or has no
  // calibrated convolution to choose from.
  ChosenConfig choose_own_config(const KernelRecord& record, const KernelClass& cls, DType dtype,
                                 std::size_t target) const noexcept;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pm2lat
