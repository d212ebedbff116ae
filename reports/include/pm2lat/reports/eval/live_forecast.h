// The forecast for another GPU of what the runtime observed on the GPU a program runs on:
// one operator's kernels (shapes, types) and, when measured, its time on that GPU. The single
// place the live-run evaluation (live_run_eval.h) asks for "the time on B given what A
// measured", so that a forecast which uses A's measurement plugs in here.
#pragma once

#include <vector>

#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/model_replay.h"

namespace pm2lat::reports {

// Appends one kernel-time prediction on `target` per kernel of `op` (those with has_kernel,
// in order). Today every kernel is forecast from its shape on the target, the target's own
// kernel configuration chosen (the record names none); the source's measurement is not used.
void forecast_from_observation(const Predictor& predictor, const ObservedOperator& op,
                               TargetId source, TargetId target, std::vector<Prediction>& out);

}  // namespace pm2lat::reports
