#include "pm2lat/reports/eval/live_run_eval.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>

#include "pm2lat/prediction_error.h"
#include "pm2lat/reports/eval/live_forecast.h"
#include "pm2lat/reports/eval/model_replay.h"

namespace pm2lat::reports {
namespace {

using calibrate::ModelRun;

bool same_run(const ModelRun& a, const ModelRun& b) {
  return a.model == b.model && a.mode == b.mode && a.seqlen == b.seqlen && a.batch == b.batch &&
         a.option == b.option;
}

// Each class the target's operator file or the forecast has: labelled and forecast time, and
// the difference as a share of the measured run.
void print_classes(std::ostream& os, const LiveRunPair& p) {
  for (std::size_t c = 0; c < kOpClassCount; ++c) {
    const ClassTotals& t = p.classes[c];
    if (t.labelled_ms <= 0 && t.predicted_ms <= 0) continue;
    fmt::print(os, "    {:<12} labels {:>10.2f} ms  forecast {:>10.2f} ms  {:>+8.2f} % of run\n",
               to_string(static_cast<OpClass>(c)), t.labelled_ms, t.predicted_ms,
               p.measured_ms > 0 ? 100.0 * (t.predicted_ms - t.labelled_ms) / p.measured_ms : 0.0);
  }
}

}  // namespace

LiveRunResult eval_live_runs(Predictor& predictor, const std::vector<ModelRun>& runs,
                             std::string_view source, std::string_view target,
                             const std::optional<GuardPolicy>& guard) {
  const DeviceCatalogue& cat = predictor.catalogue();
  const DeviceSpec* only_source = source == "all" ? nullptr : &cat.resolve(source);
  const DeviceSpec* only_target = target == "all" ? nullptr : &cat.resolve(target);
  LiveRunResult out;
  ErrorStats overall, overall_model_only;
  std::map<std::pair<std::string, std::string>, ErrorStats> by_pair, by_pair_model_only;
  out.guarded = guard.has_value();
  for (const ModelRun& b : runs) {
    const DeviceSpec* b_spec = cat.find(b.device);
    if (b_spec == nullptr) {
      ++out.skipped_unknown_device;
      continue;
    }
    if (only_target != nullptr && b_spec != only_target) continue;
    const std::array<double, kOpClassCount> labelled = labelled_class_ms(b);
    for (const ModelRun& a : runs) {
      if (a.ops.empty() || !same_run(a, b)) continue;
      const DeviceSpec* a_spec = cat.find(a.device);
      if (a_spec == nullptr || a_spec == b_spec) continue;
      if (only_source != nullptr && a_spec != only_source) continue;
      const TargetId a_id = predictor.add_target(a_spec->name);
      const TargetId b_id = predictor.add_target(b_spec->name);
      const StepReplay replay(predictor, b_id);
      const StepReplay on_source(predictor, a_id);
      auto forecast_with = [&](const std::optional<GuardPolicy>& policy) {
        return replay.replay(a, [&](const ObservedOperator& op, std::vector<Prediction>& kernels) {
          forecast_from_observation(on_source, op, b_id, policy, kernels);
        });
      };
      const ReplayedStep step = forecast_with(guard);
      const double model_only_ms =
          guard ? forecast_with(std::nullopt).predicted_ms : step.predicted_ms;
      LiveRunPair p;
      p.source = a_spec->name;
      p.target = b_spec->name;
      p.model = b.model;
      p.mode = b.mode;
      p.seqlen = b.seqlen;
      p.batch = b.batch;
      p.measured_ms = b.measured_e2e_ms;
      p.predicted_ms = step.predicted_ms;
      p.error_pct = error_pct(p.predicted_ms, p.measured_ms);
      p.model_only_ms = model_only_ms;
      p.model_only_error_pct = error_pct(model_only_ms, p.measured_ms);
      for (std::size_t c = 0; c < kOpClassCount; ++c) {
        p.classes[c].predicted_ms = step.class_kernel_ms[c];
        p.classes[c].labelled_ms = labelled[c];
      }
      overall.add_ape(p.error_pct);
      by_pair[{p.source, p.target}].add_ape(p.error_pct);
      overall_model_only.add_ape(p.model_only_error_pct);
      by_pair_model_only[{p.source, p.target}].add_ape(p.model_only_error_pct);
      out.pairs.push_back(std::move(p));
    }
  }
  out.overall = overall.summary();
  out.overall_model_only = overall_model_only.summary();
  for (const auto& [key, stats] : by_pair) out.by_pair[key] = stats.summary();
  for (const auto& [key, stats] : by_pair_model_only) out.by_pair_model_only[key] = stats.summary();
  return out;
}

void print_live_runs(std::ostream& os, const LiveRunResult& r, bool by_class) {
  fmt::print(os, "{:<16} {:<16} {:<11} {:<5} {:>6} {:>5} {:>12} {:>12} {:>8}\n", "source", "target",
             "model", "mode", "seqlen", "batch", "measured ms", "predicted ms", "error%");
  for (const auto& p : r.pairs) {
    fmt::print(os, "{:<16} {:<16} {:<11} {:<5} {:>6} {:>5} {:>12.2f} {:>12.2f} {:>8.2f}\n",
               p.source, p.target, p.model, p.mode, p.seqlen, p.batch, p.measured_ms,
               p.predicted_ms, p.error_pct);
    if (by_class) print_classes(os, p);
  }
  fmt::print(os, "\npairs {}  mean error {:.2f} %  median error {:.2f} %  p95 {:.2f} %\n",
             r.overall.n, r.overall.mape_pct, r.overall.median_ape_pct, r.overall.p95_ape_pct);
  if (r.guarded) {
    fmt::print(os, "without the measurement guard: mean {:.2f} %  median {:.2f} %  p95 {:.2f} %\n",
               r.overall_model_only.mape_pct, r.overall_model_only.median_ape_pct,
               r.overall_model_only.p95_ape_pct);
    print_live_run_guard(os, r);
  }
  if (r.skipped_unknown_device > 0)
    fmt::print(os, "{} runs skipped: GPU not in the device catalogue\n", r.skipped_unknown_device);
}

void print_live_run_guard(std::ostream& os, const LiveRunResult& r) {
  fmt::print(os, "\nmeasurement guard, per GPU pair: error % with the guard and without it\n");
  fmt::print(os, "{:<16} {:<16} {:>5} {:>8} {:>8} {:>10} {:>10}\n", "source", "target", "runs",
             "mean", "p95", "mean w/o", "p95 w/o");
  std::size_t p95_lower = 0, mean_raised = 0;
  for (const auto& [key, s] : r.by_pair) {
    const ErrorSummary& m = r.by_pair_model_only.at(key);
    fmt::print(os, "{:<16} {:<16} {:>5} {:>8.2f} {:>8.2f} {:>10.2f} {:>10.2f}\n", key.first,
               key.second, s.n, s.mape_pct, s.p95_ape_pct, m.mape_pct, m.p95_ape_pct);
    p95_lower += s.p95_ape_pct < m.p95_ape_pct ? 1 : 0;
    mean_raised += s.mape_pct > m.mape_pct ? 1 : 0;
  }
  fmt::print(os, "pairs {}: p95 lower in {}, mean raised in {}\n", r.by_pair.size(), p95_lower,
             mean_raised);
}

void print_live_run_matrix(std::ostream& os, const LiveRunResult& r) {
  std::set<std::string> sources, targets;
  for (const auto& [key, s] : r.by_pair) {
    sources.insert(key.first);
    targets.insert(key.second);
  }
  fmt::print(os, "\nmean error % (runs), source (rows) x target (columns)\n{:<16}", "");
  for (const auto& t : targets) fmt::print(os, " {:>16}", t);
  fmt::print(os, "\n");
  for (const auto& s : sources) {
    fmt::print(os, "{:<16}", s);
    for (const auto& t : targets) {
      const auto it = r.by_pair.find({s, t});
      fmt::print(os, " {:>16}",
                 it == r.by_pair.end()
                     ? std::string("-")
                     : fmt::format("{:.1f} ({})", it->second.mape_pct, it->second.n));
    }
    fmt::print(os, "\n");
  }
}

nlohmann::json live_runs_json(const LiveRunResult& r, bool by_class) {
  using nlohmann::json;
  json pairs = json::array();
  for (const auto& p : r.pairs) {
    pairs.push_back({{"source", p.source},
                     {"target", p.target},
                     {"model", p.model},
                     {"mode", p.mode},
                     {"seqlen", p.seqlen},
                     {"batch", p.batch},
                     {"measured_ms", p.measured_ms},
                     {"predicted_ms", p.predicted_ms},
                     {"error_pct", p.error_pct},
                     {"model_only_ms", p.model_only_ms},
                     {"model_only_error_pct", p.model_only_error_pct}});
    if (by_class) pairs.back()["classes"] = class_totals_json(p.classes);
  }
  json matrix = json::array();
  for (const auto& [key, s] : r.by_pair) {
    const ErrorSummary& m = r.by_pair_model_only.at(key);
    matrix.push_back({{"source", key.first},
                      {"target", key.second},
                      {"pairs", s.n},
                      {"mean_error_pct", s.mape_pct},
                      {"median_error_pct", s.median_ape_pct},
                      {"p95_error_pct", s.p95_ape_pct},
                      {"model_only_mean_error_pct", m.mape_pct},
                      {"model_only_p95_error_pct", m.p95_ape_pct}});
  }
  return {{"pairs", pairs},
          {"guarded", r.guarded},
          {"overall",
           {{"pairs", r.overall.n},
            {"mean_error_pct", r.overall.mape_pct},
            {"median_error_pct", r.overall.median_ape_pct}}},
          {"matrix", matrix}};
}

}  // namespace pm2lat::reports
