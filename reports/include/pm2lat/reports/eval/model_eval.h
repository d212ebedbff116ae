// `pm2lat eval models`: whole-model forecasts of NeuSight's transformer benchmark from
// shapes and device profiles only, each run on its own GPU. The step is replayed on the
// run's GPU (model_replay.h) in kernel time and scored against the measured end-to-end
// latency. The files' per-operator latencies are read only for the diagnosis: each is an
// isolated call timed with CUDA events (host dispatch included, floor ~7-30 µs), so it is
// compared with the call-basis forecast of the same operator, group by group ("<operator
// group>.<pass>"), which shows a total that is right for the wrong reasons.
#pragma once

#include <array>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pm2lat/calibrate/neusight_models.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/error_stats.h"
#include "pm2lat/reports/eval/model_lowering.h"

namespace pm2lat::reports {

struct ClassTotals {
  double predicted_ms = 0;  // predicted device time of the class's kernels
  double labelled_ms = 0;   // the file's measured per-operator latencies (diagnosis)
};

// One operator group in one pass ("linear.bwd", "softmax.fwd", ...) of a run, layers
// included: the files' isolated-call latencies against call-basis forecasts of the same
// operators.
struct OperatorTruth {
  std::int64_t calls = 0;
  double labelled_ms = 0;
  double predicted_ms = 0;
};

struct ModelEvalRun {
  std::string device, model, mode;
  std::int64_t seqlen = 0, batch = 0;
  double measured_ms = 0, predicted_ms = 0, error_pct = 0;
  // Training: the benchmark times the forward and the backward separately.
  std::optional<double> measured_fw_ms, measured_bw_ms;
  double predicted_fw_ms = 0, predicted_bw_ms = 0;
  double host_ms = 0, kernel_total_ms = 0;  // the replay's host and GPU busy time
  std::optional<double> neusight_error_pct;
  bool spec_scaled = false;     // the GPU has no profile of its own
  double scaled_kernel_ms = 0;  // predicted kernel time taken from another GPU's fits
  std::array<ClassTotals, kOpClassCount> classes{};  // indexed by OpClass
  std::map<std::string, OperatorTruth> operators;    // by "<group>.<pass>"
  std::map<std::string, double> kernel_ms;           // replay breakdown (model_replay.h)
};

struct ModelEvalOptions {
  std::vector<std::string> devices;  // only runs on these GPUs (forgiving names); empty = all
  std::vector<std::string> modes;    // only these modes ("inf", "train"); empty = all
};

struct ModelEvalResult {
  std::vector<ModelEvalRun> runs;
  std::size_t skipped_without_ops = 0;
  std::size_t skipped_unknown_device = 0;
  ErrorSummary overall;
  std::size_t cells_better_than_neusight = 0;
  std::size_t cells_with_neusight = 0;
  // Over every run: operator groups, and the measured total they are a share of.
  std::map<std::string, OperatorTruth> operators;
  double measured_total_ms = 0;
};

ModelEvalResult eval_models(Predictor& predictor, const std::vector<calibrate::ModelRun>& runs,
                            const ModelEvalOptions& options = {});

// A run's per-operator latencies (forward, backward and accumulation, layers included) summed
// by operator class (ms): what its operator file says each class took, for comparison with a
// replay's class_kernel_ms.
std::array<double, kOpClassCount> labelled_class_ms(const calibrate::ModelRun& run);
// {class: {predicted_ms, labelled_ms}} for every operator class.
nlohmann::json class_totals_json(const std::array<ClassTotals, kOpClassCount>& classes);
// Whether a run of `mode` is among `modes` (empty: every mode).
bool mode_wanted(const std::vector<std::string>& modes, const std::string& mode);

void print_model_eval(std::ostream& os, const ModelEvalResult& res, bool by_class);
nlohmann::json model_eval_json(const ModelEvalResult& r, bool by_class);

}  // namespace pm2lat::reports
