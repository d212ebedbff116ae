// One prediction asked of a model by the predictor's routing (predictor.cpp): every model
// (GEMM, per-operator fits, kernel-family fits, attention, convolution) answers the same
// question through `predict(const ModelQuery&)`, and every model numbers targets as the
// predictor does (in the order add_target was called).
#pragma once

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_class.h"
#include "pm2lat/kernel_record.h"
#include "pm2lat/predict_options.h"
#include "pm2lat/target.h"

namespace pm2lat {

struct ModelQuery {
  const KernelRecord& record;
  const KernelClass& cls;  // may differ from the record's own class (a helper as a copy)
  TargetId target;
  const PredictOptions& options;
  // The record was measured on the target GPU itself: its kernel is one the target runs.
  bool observed_on_target = true;
  // The GPU the record was measured on, when known (resolved from `options`).
  const DeviceSpec* source = nullptr;
};

}  // namespace pm2lat
