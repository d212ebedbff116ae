// `pm2lat eval models`: whole-model forecasts of NeuSight's transformer benchmark from
// shapes and device profiles only. Each operator row is lowered to the kernels it launches
// (model_lowering.h), each kernel predicted on the run's GPU, and the step replayed on a
// two-timeline model of eager execution: the host dispatches operators one after another,
// the GPU runs each kernel as soon as it is both launched and free. The measured
// per-operator latencies in the files are read only for the --by-class diagnosis.
#pragma once

#include <array>
#include <iosfwd>
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

struct ModelEvalRun {
  std::string device, model, mode;
  std::int64_t seqlen = 0, batch = 0;
  double measured_ms = 0, predicted_ms = 0, error_pct = 0;
  std::optional<double> neusight_error_pct;
  bool spec_scaled = false;              // the GPU has no profile of its own
  double scaled_kernel_ms = 0;           // predicted kernel time taken from another GPU's fits
  std::array<ClassTotals, 6> classes{};  // indexed by OpClass
};

struct ModelEvalResult {
  std::vector<ModelEvalRun> runs;
  std::size_t skipped_without_ops = 0;
  std::size_t skipped_unknown_device = 0;
  ErrorSummary overall;
  std::size_t cells_better_than_neusight = 0;
  std::size_t cells_with_neusight = 0;
};

ModelEvalResult eval_models(Predictor& predictor, const std::vector<calibrate::ModelRun>& runs);

void print_model_eval(std::ostream& out, const ModelEvalResult& r, bool by_class);
nlohmann::json model_eval_json(const ModelEvalResult& r, bool by_class);

}  // namespace pm2lat::reports
