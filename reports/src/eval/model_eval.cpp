#include "pm2lat/reports/eval/model_eval.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <ostream>

#include "pm2lat/prediction_error.h"

namespace pm2lat::reports {
namespace {

using calibrate::ModelOpRow;
using calibrate::ModelRun;

// Host cost of operators that launch no kernel, relative to the GPU's typical dispatch of a
// kernel-launching operator: a view goes through the framework dispatcher without a
// launch; a Python value (size, getitem of ints) barely touches it.
constexpr double kViewDispatchShare = 0.5;
constexpr double kPythonDispatchShare = 0.15;

double median_dispatch(const Profile* p) {
  if (p == nullptr || p->call_overhead.empty()) return 0;
  std::vector<double> v;
  for (const auto& [op, o] : p->call_overhead) v.push_back(o.pre_us);
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The two-timeline replay of one step.
class StepTimeline {
 public:
  void dispatch(double host_us) { cpu_ += host_us; }
  void run_kernel(double kernel_us) { gpu_ = std::max(gpu_, cpu_) + kernel_us; }
  double end_us() const { return std::max(cpu_, gpu_); }

 private:
  double cpu_ = 0;
  double gpu_ = 0;
};

// Rows in execution order with their layer blocks expanded: a run of consecutive rows with
// the same repeat > 1 is one layer, executed `repeat` times.
template <typename F>
void for_each_in_order(const std::vector<ModelOpRow>& rows, bool reverse, F&& f) {
  struct Block {
    std::size_t begin, end;
    std::int64_t repeat;
  };
  std::vector<Block> blocks;
  for (std::size_t i = 0; i < rows.size();) {
    std::size_t j = i + 1;
    while (j < rows.size() && rows[j].repeat == rows[i].repeat) ++j;
    blocks.push_back({i, j, rows[i].repeat});
    i = j;
  }
  if (reverse) std::reverse(blocks.begin(), blocks.end());
  for (const Block& b : blocks) {
    for (std::int64_t r = 0; r < b.repeat; ++r) {
      if (reverse) {
        for (std::size_t i = b.end; i-- > b.begin;) f(rows[i]);
      } else {
        for (std::size_t i = b.begin; i < b.end; ++i) f(rows[i]);
      }
    }
  }
}

}  // namespace

ModelEvalResult eval_models(Predictor& predictor, const std::vector<ModelRun>& runs) {
  ModelEvalResult out;
  ErrorStats overall;
  for (const ModelRun& run : runs) {
    if (run.ops.empty()) {
      ++out.skipped_without_ops;
      continue;
    }
    TargetId tid = 0;
    try {
      tid = predictor.add_target(run.device);
    } catch (const UnknownDeviceError&) {
      ++out.skipped_unknown_device;
      continue;
    }
    const Target& target = predictor.target(tid);
    const Profile* overheads = target.profiles.empty() ? nullptr : target.profiles.front();
    const double dispatch = median_dispatch(overheads);
    PredictOptions opt;
    opt.basis = TimeBasis::kKernel;
    opt.source_spec = target.profile_spec;

    ModelEvalRun r;
    r.device = target.name;
    r.model = run.model;
    r.mode = run.mode;
    r.seqlen = run.seqlen;
    r.batch = run.batch;
    r.measured_ms = run.measured_e2e_ms;
    r.neusight_error_pct = run.neusight_err_pct;
    r.spec_scaled = target.spec_scaled;

    StepTimeline timeline;
    auto replay = [&](const ModelOpRow& row, Pass pass) {
      for (const LoweredOp& op : lower(row, pass)) {
        double host = 0;
        switch (op.host) {
          case HostWork::kLaunch: {
            const CallOverhead o =
                overheads ? overheads->overhead_for(op.overhead_key) : CallOverhead{};
            host = o.pre_us > 0 ? o.pre_us : dispatch;
            break;
          }
          case HostWork::kView: host = kViewDispatchShare * dispatch; break;
          case HostWork::kPython: host = kPythonDispatchShare * dispatch; break;
        }
        timeline.dispatch(host);
        if (!op.has_kernel) continue;
        const Prediction p = predictor.predict(op.record, op.cls, tid, opt);
        if (p.has(prediction_flags::kSpecScaled)) r.scaled_kernel_ms += p.us / 1e3;
        timeline.run_kernel(p.us);
        r.classes[static_cast<std::size_t>(op.op_class)].predicted_ms += p.us / 1e3;
      }
    };
    for_each_in_order(run.ops, false, [&](const ModelOpRow& row) { replay(row, Pass::kForward); });
    if (run.training()) {
      for_each_in_order(run.ops, true,
                        [&](const ModelOpRow& row) { replay(row, Pass::kBackward); });
      for_each_in_order(run.ops, false,
                        [&](const ModelOpRow& row) { replay(row, Pass::kAccumulate); });
    }
    for (const ModelOpRow& row : run.ops) {
      r.classes[static_cast<std::size_t>(op_class_of(row.op_class))].labelled_ms +=
          (row.fw_us + row.bw_us + row.acc_us) * static_cast<double>(row.repeat) / 1e3;
    }
    r.predicted_ms = timeline.end_us() / 1e3;
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

void print_model_eval(std::ostream& os, const ModelEvalResult& res, bool by_class) {
  fmt::print(os, "{:<16} {:<11} {:<5} {:>6} {:>5} {:>12} {:>12} {:>8} {:>10}\n", "device", "model",
             "mode", "seqlen", "batch", "measured ms", "predicted ms", "error%", "NeuSight%");
  for (const auto& r : res.runs) {
    fmt::print(os, "{:<16} {:<11} {:<5} {:>6} {:>5} {:>12.2f} {:>12.2f} {:>8.2f} {:>10}{}\n",
               r.device, r.model, r.mode, r.seqlen, r.batch, r.measured_ms, r.predicted_ms,
               r.error_pct,
               r.neusight_error_pct ? fmt::format("{:.2f}", *r.neusight_error_pct) : "-",
               r.spec_scaled ? "  (spec-scaled: no profile)" : "");
    if (by_class) {
      for (std::size_t c = 0; c < r.classes.size(); ++c) {
        const auto& t = r.classes[c];
        if (t.predicted_ms == 0 && t.labelled_ms == 0) continue;
        fmt::print(os,
                   "    {:<12} predicted {:>10.2f} ms   per-operator labels {:>10.2f} ms   "
                   "({:+.1f} % of the run)\n",
                   to_string(static_cast<OpClass>(c)), t.predicted_ms, t.labelled_ms,
                   100.0 * (t.predicted_ms - t.labelled_ms) / r.measured_ms);
      }
    }
  }
  fmt::print(
      os,
      "\ncells {}  mean error {:.2f} %  median error {:.2f} %  better than NeuSight in {} of {}\n",
      res.overall.n, res.overall.mape_pct, res.overall.median_ape_pct,
      res.cells_better_than_neusight, res.cells_with_neusight);
  if (res.skipped_without_ops > 0)
    fmt::print(os, "{} runs skipped: no per-operator file\n", res.skipped_without_ops);
  if (res.skipped_unknown_device > 0)
    fmt::print(os, "{} runs skipped: GPU not in the device catalogue\n",
               res.skipped_unknown_device);
}

nlohmann::json model_eval_json(const ModelEvalResult& res, bool by_class) {
  using nlohmann::json;
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
    if (by_class) {
      json classes = json::object();
      for (std::size_t c = 0; c < r.classes.size(); ++c) {
        classes[std::string(to_string(static_cast<OpClass>(c)))] = {
            {"predicted_ms", r.classes[c].predicted_ms}, {"labelled_ms", r.classes[c].labelled_ms}};
      }
      j["classes"] = classes;
    }
    runs.push_back(j);
  }
  return {{"runs", runs},
          {"overall",
           {{"cells", res.overall.n},
            {"mean_error_pct", res.overall.mape_pct},
            {"median_error_pct", res.overall.median_ape_pct},
            {"cells_better_than_neusight", res.cells_better_than_neusight},
            {"skipped_without_ops", res.skipped_without_ops}}}};
}

}  // namespace pm2lat::reports
