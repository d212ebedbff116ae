// How a caller wants one prediction made: time basis, where the record was observed, timing.
#pragma once

#include <string_view>

#include "pm2lat/device_spec.h"
#include "pm2lat/kernel_record.h"

namespace pm2lat {

struct PredictOptions {
  // Kernel time (CUPTI-like) or whole-call time with host dispatch (CUDA events around a
  // framework call, as in the NeuSight tables).
  TimeBasis basis = TimeBasis::kKernel;
  // The GPU the record was observed on (canonical or forgiving name); empty = unknown.
  // When it is not the target, the target's own kernel configuration is chosen from its
  // profile instead of the one in the record.
  std::string_view source_device;
  // The same, already resolved (Predictor::catalogue().find): saves the name lookup on a hot
  // path. Takes precedence over source_device when set.
  const DeviceSpec* source_spec = nullptr;
  // Time per kernel as a replayed CUDA graph runs it back to back (the AIConfigurator
  // tables' timing) rather than as an isolated kernel (CUPTI in an eager program).
  bool graph_replay = false;
};

}  // namespace pm2lat
