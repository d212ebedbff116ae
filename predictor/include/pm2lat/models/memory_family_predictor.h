// Memory-bound kernel families measured as kernels (CUPTI durations from real runs):
// reductions (ATen reduce, batch norm, pooling, CUB scans and sorts), copies and layout
// transforms, memsets, embedding gathers/scatters (ATen and FBGEMM), optimizer
// multi-tensor-apply kernels, and Triton pointwise/reduction kernels. Each is the
// memory-bound model (models/memory_bound_model.h) with a fit per family and, where enough
// kernels of one configuration were measured, per kernel configuration.
//
// Bytes come from the record's shapes; when the record has none, a "geometry" fit of the
// same family relates time to the launched threads instead (flag no_shape). A target with
// no fits of its own uses the most similar GPU's, evaluated with the target's spec (its
// bandwidth and SM count: flag spec_scaled). A geometry fit forecast for a GPU other than
// the one the kernel ran on is the fit that GPU would take, carried by spec.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/model_query.h"
#include "pm2lat/prediction.h"
#include "pm2lat/profile.h"

namespace pm2lat {

// Bytes a launched thread stands for in geometry fits (a nominal 4-element read and write):
// the fit's coefficient absorbs the kernel's real per-thread traffic.
inline constexpr double kGeometryBytesPerThread = 16.0;

// The fit key of a family's geometry fits ("reduction#geometry").
std::string geometry_fit_name(KernelFamily family);

// The family whose fits answer for a family that has none of its own: Triton kernels take
// the nearest ATen family's (pointwise -> elementwise, reductions -> reduction).
KernelFamily kernel_family_stand_in(KernelFamily family) noexcept;

class MemoryFamilyPredictor {
 public:
  MemoryFamilyPredictor();
  MemoryFamilyPredictor(const DeviceCatalogue& catalogue, const std::vector<Profile>& profiles);
  MemoryFamilyPredictor(MemoryFamilyPredictor&&) noexcept;
  MemoryFamilyPredictor& operator=(MemoryFamilyPredictor&&) noexcept;
  ~MemoryFamilyPredictor();

  void add_target(const Target& target);

  // nullopt when no GPU has a fit for the kernel's family. A record without a shape is sized
  // by what its launch states where it states it (models/launch_work.h; flag no_shape), else
  // by the geometry fit over its launched threads.
  std::optional<Prediction> predict(const ModelQuery& query) const noexcept;

  // The same from the target's own fits only, and only where they know the kernel (its own
  // configuration, at sizes near those measured): nullopt otherwise. Layer-norm and softmax
  // kernels are fitted per operator from framework-call tables too; a GPU's own kernel fits
  // answer for that GPU only, where the per-operator tables transfer better to others.
  std::optional<Prediction> predict_own(const ModelQuery& query) const noexcept;

  // An elementwise, softmax or layer-norm kernel whose record has no shape, the last resort
  // of its route (after the launch's stated work): its family's geometry fit from the
  // target's own kernels, else from the most similar GPU that measured
  // the family (flags no_shape, spec_scaled). nullopt for a record with a shape (the
  // per-operator tables serve it) or when no GPU measured the family.
  std::optional<Prediction> predict_row_without_shape(const ModelQuery& query) const noexcept;

  // The fixed cost the target's own kernels show for the kernel's configuration (the intercept
  // of its own fit by shape, never under kMinMemoryKernelUs): how short a launch of it gets on
  // that GPU. nullopt when the target measured no kernel of that configuration.
  std::optional<double> own_fixed_cost_us(const ModelQuery& query) const noexcept;

 private:
  std::optional<Prediction> predict_from(const KernelRecord& record, const KernelClass& cls,
                                         std::size_t target, const DeviceSpec* source,
                                         bool own_only, bool read_launch) const noexcept;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pm2lat
