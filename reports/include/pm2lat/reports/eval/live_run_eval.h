// `pm2lat eval models --source A --target B`: the live-run case at model level. For every
// run measured on both A and B (same model, mode, sequence length, batch and option), the
// records are built as the runtime would see them on A (A's operator file: shapes, types,
// A's per-operator measured times), each operator is forecast for B
// (forecast_from_observation), and the step replayed on B is scored against B's measured
// whole-model time. B needs no operator file of its own.
#pragma once

#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "pm2lat/calibrate/neusight_models.h"
#include "pm2lat/measured_guard.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/error_stats.h"
#include "pm2lat/reports/eval/model_eval.h"

namespace pm2lat::reports {

struct LiveRunPair {
  std::string source, target, model, mode;
  std::int64_t seqlen = 0, batch = 0;
  double measured_ms = 0;   // B's measured whole-model time
  double predicted_ms = 0;  // forecast for B from A's records
  double error_pct = 0;
  // The model's forecast without the measurement guard (equal to predicted_ms without it).
  double model_only_ms = 0;
  double model_only_error_pct = 0;
  // By operator class: B's operator file against the forecast for B (indexed by OpClass), so
  // that a total right for the wrong reasons (errors cancelling) shows.
  std::array<ClassTotals, kOpClassCount> classes{};
};

struct LiveRunResult {
  std::vector<LiveRunPair> pairs;
  ErrorSummary overall;
  std::map<std::pair<std::string, std::string>, ErrorSummary> by_pair;  // (source, target)
  // The same without the guard.
  ErrorSummary overall_model_only;
  std::map<std::pair<std::string, std::string>, ErrorSummary> by_pair_model_only;
  bool guarded = false;
  std::size_t skipped_unknown_device = 0;
};

// `source` / `target`: a GPU name (forgiving) or "all". Throws UnknownDeviceError for a name
// the catalogue does not know. `guard`: the measurement guard's policy (each operator's
// measured time on A against the model's forecast of it on A); none = the model only.
LiveRunResult eval_live_runs(Predictor& predictor, const std::vector<calibrate::ModelRun>& runs,
                             std::string_view source, std::string_view target,
                             const std::optional<GuardPolicy>& guard = std::nullopt);

// `by_class`: each pair's operator classes under it.
void print_live_runs(std::ostream& os, const LiveRunResult& r, bool by_class = false);
// Per (source, target): mean and p95 with the guard and without it.
void print_live_run_guard(std::ostream& os, const LiveRunResult& r);
// The source x target matrix of mean error (%).
void print_live_run_matrix(std::ostream& os, const LiveRunResult& r);
// {"pairs":[{source,target,model,mode,seqlen,batch,measured_ms,predicted_ms,error_pct}],
//  "overall":{pairs,mean_error_pct,median_error_pct}}; `by_class`: each pair also has
// "classes": {class: {predicted_ms, labelled_ms}}.
nlohmann::json live_runs_json(const LiveRunResult& r, bool by_class = false);

}  // namespace pm2lat::reports
