// The replay of one whole-model step of a NeuSight model run on one GPU: every operator row
// lowered to its kernels (model_lowering.h), every kernel forecast, and the step run on a
// two-timeline model of eager execution: the host dispatches operators one after another,
// the GPU runs each kernel as soon as it is both launched and free, and a kernel whose
// result the host reads (a count) makes the host wait for the GPU. Training steps are timed
// as the benchmark times them: the forward, then (after a synchronisation) the backward with
// its gradient accumulations, each from an idle GPU.
#pragma once

#include <array>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pm2lat/calibrate/neusight_models.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/host_dispatch.h"
#include "pm2lat/reports/eval/model_lowering.h"

namespace pm2lat::reports {

// One operator of a run as the runtime saw it on the GPU it ran on: the kernels it launched
// (shapes and types) and, when measured, its time there.
struct ObservedOperator {
  const calibrate::ModelOpRow* row = nullptr;
  Pass pass = Pass::kForward;
  std::span<const LoweredOp> kernels;
  std::optional<double> measured_us;   // the file's per-operator latency (isolated call)
  TimeBasis basis = TimeBasis::kCall;  // what measured_us covers
};

// Forecasts the kernels of one operator on the replay's GPU: one prediction per kernel, in
// order (only kernels with has_kernel).
using OperatorForecast =
    std::function<void(const ObservedOperator& op, std::vector<Prediction>& kernels_out)>;

struct ReplayedStep {
  double predicted_ms = 0;
  double forward_ms = 0;   // the timed forward
  double backward_ms = 0;  // the timed backward (training)
  // Predicted kernel time by "<group>.<pass>.<role>[.<cuBLAS layout>]", e.g.
  // "linear.bwd.wgrad.nt", and by coarse operator class.
  std::map<std::string, double> kernel_ms;
  std::array<double, kOpClassCount> class_kernel_ms{};
  double spec_scaled_kernel_ms = 0;  // kernel time taken from another GPU's fits
  double host_ms = 0;                // host dispatch summed over the step
  double kernel_total_ms = 0;        // kernel time summed over the step (the GPU's busy time)
};

// The breakdown key of a kernel.
std::string kernel_key(const LoweredOp& op, Pass pass);

class StepReplay {
 public:
  StepReplay(const Predictor& predictor, TargetId target);

  // Replays `run`'s operator file on the target. Without a forecast, each kernel is
  // predicted from its shape on the target (kernel time).
  ReplayedStep replay(const calibrate::ModelRun& run, const OperatorForecast& forecast = {}) const;

  // Host time to dispatch one lowered operator on the target (µs).
  double dispatch_us(const LoweredOp& op) const;
  // The call-basis forecast of one operator on the target as the operator files time it
  // alone (µs): the first kernel as a call (dispatch, kernel, never under the call floor),
  // each further kernel launched after its own dispatch and run when the GPU is free.
  double call_us(std::span<const LoweredOp> ops) const;

  const Predictor& predictor() const noexcept { return *predictor_; }
  TargetId target() const noexcept { return target_; }

 private:
  const Predictor* predictor_;
  TargetId target_;
  HostDispatch host_;
};

// Every (row, pass) of a run in the order a step executes it: the forward in file order; in
// training, the backward in reverse order, each row's gradient accumulation right after its
// backward. Layer blocks (consecutive rows with the same repeat > 1) are expanded `repeat`
// times. `f(row_index, pass)`.
void for_each_step_operator(const std::vector<calibrate::ModelOpRow>& rows, bool training,
                            const std::function<void(std::size_t, Pass)>& f);

}  // namespace pm2lat::reports
