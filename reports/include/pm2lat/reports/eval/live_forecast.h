// The forecast for another GPU of what the runtime observed on the GPU a program runs on:
// one operator's kernels (shapes, types) and, when measured, its time on that GPU. The single
// place the live-run evaluation (live_run_eval.h) asks for "the time on B given what A
// measured".
#pragma once

#include <optional>
#include <vector>

#include "pm2lat/measured_guard.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/model_replay.h"

namespace pm2lat::reports {

// Appends one kernel-time prediction on `target` per kernel of `op` (those with has_kernel,
// in order): each kernel forecast from its shape on the target, the target's own kernel
// configuration chosen (the record names none). With a guard policy, the operator's measured
// time on the source (an event-timed call) is checked against the model's forecast of that
// call on the source (`source`: the replay on the GPU that measured it): its kernels' time
// plus their dispatch, the dispatch being the host part the guard leaves out of the
// comparison. When they disagree (measured_guard.h) every kernel's forecast for the target is
// anchored to the measurement. A target that is the source GPU itself is never anchored.
void forecast_from_observation(const StepReplay& source, const ObservedOperator& op,
                               TargetId target, const std::optional<GuardPolicy>& guard,
                               std::vector<Prediction>& out);

}  // namespace pm2lat::reports
