// The models for the long tail of kernel families, behind one entry point for the
// predictor's dispatch: fused attention, convolution, collectives (NCCL), and the
// memory-bound families measured as kernels (reductions, copies, memsets, gathers and
// scatters, optimizer and Triton kernels). GEMM, elementwise and normalisation kernels are
// served by the predictor's own GEMM wave and memory-bound models.
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

class LongTailModels {
 public:
  LongTailModels();
  // `catalogue` and `profiles` must outlive the models.
  LongTailModels(const DeviceCatalogue& catalogue, const std::vector<Profile>& profiles);
  LongTailModels(LongTailModels&&) noexcept;
  LongTailModels& operator=(LongTailModels&&) noexcept;
  ~LongTailModels();

  // Registers the next target; targets are numbered in the order they are added, as the
  // predictor numbers them.
  void add_target(const DeviceSpec& spec);

  // The prediction when the kernel belongs to a family these models serve, nullopt when
  // another model should take it. `observed_on_target`: the record was measured on the
  // target GPU itself (its kernels are ones the target runs).
  std::optional<Prediction> predict(const KernelRecord& record, const KernelClass& cls,
                                    std::size_t target, const PredictOptions& options,
                                    bool observed_on_target = true) const noexcept;

  // An elementwise, softmax or layer-norm kernel with no shape and no reading of its launch
  // geometry (models/launch_work.h): its family's geometry fit over the launched threads,
  // from the target or the most similar GPU that measured the family. nullopt otherwise.
  std::optional<Prediction> predict_row_without_shape(const KernelRecord& record,
                                                      const KernelClass& cls,
                                                      std::size_t target) const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace pm2lat
