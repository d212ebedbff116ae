#include "pm2lat/reports/eval/model_eval.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "pm2lat/prediction_error.h"
#include "pm2lat/reports/eval/model_replay.h"

namespace pm2lat::reports {
namespace {

using calibrate::ModelOpRow;
using calibrate::ModelRun;

std::string truth_key(OpGroup g, Pass p) {
  return std::string(to_string(g)) + "." + std::string(to_string(p));
}

}  // namespace

bool mode_wanted(const std::vector<std::string>& modes, const std::string& mode) {
  return modes.empty() || std::find(modes.begin(), modes.end(), mode) != modes.end();
}

nlohmann::json class_totals_json(const std::array<ClassTotals, kOpClassCount>& classes) {
  nlohmann::json j = nlohmann::json::object();
  for (std::size_t c = 0; c < classes.size(); ++c) {
    j[std::string(to_string(static_cast<OpClass>(c)))] = {{"predicted_ms", classes[c].predicted_ms},
                                                          {"labelled_ms", classes[c].labelled_ms}};
  }
  return j;
}

std::array<double, kOpClassCount> labelled_class_ms(const ModelRun& run) {
  std::array<double, kOpClassCount> ms{};
  for (const ModelOpRow& row : run.ops) {
    ms[static_cast<std::size_t>(op_class_of(row.op_class))] +=
        (row.fw_us + row.bw_us + row.acc_us) * static_cast<double>(row.repeat) / 1e3;
  }
  return ms;
}

ModelEvalResult eval_models(Predictor& predictor, const std::vector<ModelRun>& runs,
                            const ModelEvalOptions& options) {
  ModelEvalResult out;
  ErrorStats overall;
  std::vector<const DeviceSpec*> devices;
  for (const auto& d : options.devices) devices.push_back(&predictor.catalogue().resolve(d));
  for (const ModelRun& run : runs) {
    if (!mode_wanted(options.modes, run.mode)) continue;
    const DeviceSpec* spec = predictor.catalogue().find(run.device);
    if (!devices.empty() && std::find(devices.begin(), devices.end(), spec) == devices.end())
      continue;
    if (run.ops.empty()) {
      ++out.skipped_without_ops;
      continue;
    }
    if (spec == nullptr) {
      ++out.skipped_unknown_device;
      continue;
    }
    const TargetId tid = predictor.add_target(run.device);
    const Target& target = predictor.target(tid);
    const StepReplay replay(predictor, tid);
    const ReplayedStep step = replay.replay(run);

    ModelEvalRun r;
    r.device = target.name;
    r.model = run.model;
    r.mode = run.mode;
    r.seqlen = run.seqlen;
    r.batch = run.batch;
    r.measured_ms = run.measured_e2e_ms;
    r.neusight_error_pct = run.neusight_err_pct;
    r.spec_scaled = target.spec_scaled;
    r.predicted_ms = step.predicted_ms;
    r.predicted_fw_ms = step.forward_ms;
    r.predicted_bw_ms = step.backward_ms;
    r.host_ms = step.host_ms;
    r.kernel_total_ms = step.kernel_total_ms;
    if (run.training()) {
      r.measured_fw_ms = run.measured_fw_ms;
      r.measured_bw_ms = run.measured_bw_ms;
    }
    r.scaled_kernel_ms = step.spec_scaled_kernel_ms;
    r.kernel_ms = step.kernel_ms;
    const std::array<double, kOpClassCount> labelled = labelled_class_ms(run);
    for (std::size_t c = 0; c < kOpClassCount; ++c) {
      r.classes[c].predicted_ms = step.class_kernel_ms[c];
      r.classes[c].labelled_ms = labelled[c];
    }

    const auto contexts = describe_rows(run.ops);
    for (std::size_t i = 0; i < run.ops.size(); ++i) {
      const ModelOpRow& row = run.ops[i];
      const double rep = static_cast<double>(row.repeat);
      for (std::size_t p = 0; p < kPassCount; ++p) {
        const auto pass = static_cast<Pass>(p);
        if (pass != Pass::kForward && !run.training()) continue;
        const double label = pass == Pass::kForward    ? row.fw_us
                             : pass == Pass::kBackward ? row.bw_us
                                                       : row.acc_us;
        auto ops = lower(row, pass, contexts[i]);
        // Gradient sums are autograd's, not part of the operator the files timed alone: they
        // get a line of their own, with no label.
        const auto sums = std::stable_partition(ops.begin(), ops.end(), [](const LoweredOp& op) {
          return op.group != OpGroup::kGradientSum;
        });
        if (sums != ops.end()) {
          const std::vector<LoweredOp> summed(sums, ops.end());
          OperatorTruth& s = r.operators[truth_key(OpGroup::kGradientSum, pass)];
          s.calls += row.repeat * static_cast<std::int64_t>(summed.size());
          s.predicted_ms += replay.call_us(summed) * rep / 1e3;
          ops.erase(sums, ops.end());
        }
        if (ops.empty() && label <= 0) continue;
        OperatorTruth& t = r.operators[truth_key(op_group_of(row, contexts[i]), pass)];
        t.calls += row.repeat;
        t.labelled_ms += label * rep / 1e3;
        if (!ops.empty()) t.predicted_ms += replay.call_us(ops) * rep / 1e3;
      }
    }
    for (const auto& [key, t] : r.operators) {
      OperatorTruth& all = out.operators[key];
      all.calls += t.calls;
      all.labelled_ms += t.labelled_ms;
      all.predicted_ms += t.predicted_ms;
    }
    out.measured_total_ms += r.measured_ms;
    r.error_pct = error_pct(r.predicted_ms, r.measured_ms);
    overall.add_ape(r.error_pct);
    if (r.neusight_error_pct) {
      ++out.cells_with_neusight;
      if (r.error_pct < *r.neusight_error_pct) ++out.cells_better_than_neusight;
    }
    out.runs.push_back(std::move(r));
  }
  out.overall = overall.summary();
  return out;
}

namespace {

void print_operators(std::ostream& os, const std::map<std::string, OperatorTruth>& ops,
                     double measured_ms, const char* indent) {
  fmt::print(os, "{}{:<22} {:>8} {:>12} {:>12} {:>8} {:>10}\n", indent, "operators (isolated)",
             "calls", "labels ms", "forecast ms", "err %", "% of run");
  for (const auto& [key, t] : ops) {
    fmt::print(os, "{}{:<22} {:>8} {:>12.2f} {:>12.2f} {:>8} {:>+10.2f}\n", indent, key, t.calls,
               t.labelled_ms, t.predicted_ms,
               t.labelled_ms > 0 ? fmt::format("{:+.1f}", 100.0 * (t.predicted_ms - t.labelled_ms) /
                                                              t.labelled_ms)
                                 : std::string("-"),
               100.0 * (t.predicted_ms - t.labelled_ms) / measured_ms);
  }
}

}  // namespace

void print_model_eval(std::ostream& os, const ModelEvalResult& res, bool by_class) {
  fmt::print(os, "{:<16} {:<11} {:<5} {:>6} {:>5} {:>12} {:>12} {:>8} {:>10}\n", "device", "model",
             "mode", "seqlen", "batch", "measured ms", "predicted ms", "error%", "NeuSight%");
  for (const auto& r : res.runs) {
    fmt::print(os, "{:<16} {:<11} {:<5} {:>6} {:>5} {:>12.2f} {:>12.2f} {:>8.2f} {:>10}{}\n",
               r.device, r.model, r.mode, r.seqlen, r.batch, r.measured_ms, r.predicted_ms,
               r.error_pct,
               r.neusight_error_pct ? fmt::format("{:.2f}", *r.neusight_error_pct) : "-",
               r.spec_scaled ? "  (spec-scaled: no profile)" : "");
    if (!by_class) continue;
    fmt::print(os, "    replay: GPU busy {:.2f} ms, host dispatch {:.2f} ms\n", r.kernel_total_ms,
               r.host_ms);
    if (r.measured_fw_ms && r.measured_bw_ms) {
      fmt::print(os,
                 "    forward  measured {:>10.2f} ms  predicted {:>10.2f} ms ({:+.1f} %)\n"
                 "    backward measured {:>10.2f} ms  predicted {:>10.2f} ms ({:+.1f} %)\n",
                 *r.measured_fw_ms, r.predicted_fw_ms,
                 100.0 * (r.predicted_fw_ms - *r.measured_fw_ms) / *r.measured_fw_ms,
                 *r.measured_bw_ms, r.predicted_bw_ms,
                 100.0 * (r.predicted_bw_ms - *r.measured_bw_ms) / *r.measured_bw_ms);
    }
    print_operators(os, r.operators, r.measured_ms, "    ");
    for (const auto& [key, ms] : r.kernel_ms) {
      if (key.starts_with("linear.") || key.starts_with("bmm."))
        fmt::print(os, "    kernels {:<26} {:>10.2f} ms\n", key, ms);
    }
  }
  fmt::print(
      os,
      "\ncells {}  mean error {:.2f} %  median error {:.2f} %  better than NeuSight in {} of {}\n",
      res.overall.n, res.overall.mape_pct, res.overall.median_ape_pct,
      res.cells_better_than_neusight, res.cells_with_neusight);
  if (by_class && res.measured_total_ms > 0) {
    fmt::print(os, "\nall runs above ({:.1f} ms measured in total):\n", res.measured_total_ms);
    print_operators(os, res.operators, res.measured_total_ms, "");
  }
  if (res.skipped_without_ops > 0)
    fmt::print(os, "{} runs skipped: no per-operator file\n", res.skipped_without_ops);
  if (res.skipped_unknown_device > 0)
    fmt::print(os, "{} runs skipped: GPU not in the device catalogue\n",
               res.skipped_unknown_device);
}

nlohmann::json model_eval_json(const ModelEvalResult& res, bool by_class) {
  using nlohmann::json;
  auto operators_json = [](const std::map<std::string, OperatorTruth>& ops) {
    json j = json::object();
    for (const auto& [key, t] : ops) {
      j[key] = {{"calls", t.calls},
                {"labelled_ms", t.labelled_ms},
                {"predicted_call_ms", t.predicted_ms}};
    }
    return j;
  };
  json runs = json::array();
  for (const auto& r : res.runs) {
    json j = {
        {"device", r.device},
        {"model", r.model},
        {"mode", r.mode},
        {"seqlen", r.seqlen},
        {"batch", r.batch},
        {"measured_ms", r.measured_ms},
        {"predicted_ms", r.predicted_ms},
        {"error_pct", r.error_pct},
        {"neusight_error_pct", r.neusight_error_pct ? json(*r.neusight_error_pct) : json(nullptr)},
        {"spec_scaled", r.spec_scaled},
        {"spec_scaled_kernel_ms", r.scaled_kernel_ms}};
    if (r.measured_fw_ms && r.measured_bw_ms) {
      j["forward"] = {{"measured_ms", *r.measured_fw_ms}, {"predicted_ms", r.predicted_fw_ms}};
      j["backward"] = {{"measured_ms", *r.measured_bw_ms}, {"predicted_ms", r.predicted_bw_ms}};
    }
    if (by_class) {
      j["classes"] = class_totals_json(r.classes);
      j["operators"] = operators_json(r.operators);
      j["kernels_ms"] = r.kernel_ms;
    }
    runs.push_back(j);
  }
  json overall = {{"cells", res.overall.n},
                  {"mean_error_pct", res.overall.mape_pct},
                  {"median_error_pct", res.overall.median_ape_pct},
                  {"cells_better_than_neusight", res.cells_better_than_neusight},
                  {"skipped_without_ops", res.skipped_without_ops}};
  if (by_class) overall["operators"] = operators_json(res.operators);
  return {{"runs", runs}, {"overall", overall}};
}

}  // namespace pm2lat::reports
