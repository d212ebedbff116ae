// Memory-bound kernels by operator (add, gelu, softmax, layer-norm, ...): the memory-bound
// model (models/memory_bound_model.h) with the fits calibrated per operator, mostly from
// framework-call tables (the NeuSight elementwise, softmax and layer-norm rows), corrected by
// the residuals of the nearest calibrated (rows, columns).
//
// The most specific fit answers: this operator with this kernel, this operator, the kernel's
// family, then the plain elementwise bandwidth fit. A target without fits of its own uses the
// most similar GPU's that measured many shapes, evaluated with the target's spec (flag
// spec_scaled). Kernel-family fits measured as kernels are another model
// (models/memory_family_predictor.h).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "pm2lat/call_dispatch.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/model_query.h"
#include "pm2lat/prediction.h"
#include "pm2lat/profile.h"

namespace pm2lat {

class OperatorFitPredictor {
 public:
  OperatorFitPredictor();
  // `profiles` must outlive the predictor; their device names are canonical catalogue names.
  // `smallest_calls[i]`: profile i's shortest calls, noted from every point table it holds
  // (call_dispatch.h), since its GEMM points are no longer held when this is built; `hosts`:
  // the dispatch they show (the same profiles' HostDispatchTable), which must outlive it too.
  OperatorFitPredictor(const DeviceCatalogue& catalogue, const std::vector<Profile>& profiles,
                       const std::vector<SmallestCalls>& smallest_calls,
                       const HostDispatchTable& hosts);
  OperatorFitPredictor(OperatorFitPredictor&&) noexcept;
  OperatorFitPredictor& operator=(OperatorFitPredictor&&) noexcept;
  ~OperatorFitPredictor();

  void add_target(const Target& target);

  // nullopt when neither the call nor the kernel's launch (models/launch_work.h) says how
  // many bytes it moves, or when no GPU has a fit for it.
  std::optional<Prediction> predict(const ModelQuery& query) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pm2lat
