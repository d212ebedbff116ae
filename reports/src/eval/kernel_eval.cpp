#include "pm2lat/reports/eval/kernel_eval.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <unordered_map>

#include "pm2lat/classifier.h"
#include "pm2lat/median.h"
#include "pm2lat/reports/eval/band_rows.h"
#include "pm2lat/reports/eval/gemm_eval.h"

namespace pm2lat::reports {

std::string family_label(const KernelClass& cls) {
  if (cls.family == KernelFamily::kGemm && cls.gemm.scheme != GemmNameScheme::kNone)
    return std::string(to_string(cls.gemm.scheme));
  return std::string(to_string(cls.family));
}

KernelEvalResult eval_kernels(Predictor& predictor,
                              const std::vector<calibrate::MeasuredCall>& calls,
                              BandRows* band_rows) {
  struct Acc {
    ErrorStats all, gemm;
    bool spec_scaled = false;
    double measured_us = 0, predicted_us = 0;
  };
  struct Group {
    ErrorStats error;
    double measured_us = 0, predicted_us = 0;
  };
  std::map<std::tuple<std::string, std::string, std::string>, Group> groups;
  struct Collection {
    Group totals;
    std::vector<double> ratios;  // predicted over measured
  };
  std::map<std::tuple<std::string, std::string, std::string>, Collection> collections;
  std::map<std::string, Acc> devices;
  ErrorStats overall;
  KernelEvalResult out;
  std::unordered_map<std::string, KernelClass> classes;
  std::unordered_map<std::string, std::optional<TargetId>> targets;
  for (const auto& c : calls) {
    auto t_it = targets.find(c.device);
    if (t_it == targets.end()) {
      std::optional<TargetId> id;
      if (predictor.catalogue().find(c.device) != nullptr) id = predictor.add_target(c.device);
      t_it = targets.emplace(c.device, id).first;
    }
    if (!t_it->second) {
      ++out.unknown_devices;
      continue;
    }
    auto c_it = classes.find(c.record.launch.name);
    if (c_it == classes.end())
      c_it = classes.emplace(c.record.launch.name, classify_kernel(c.record.launch.name)).first;
    const KernelClass& cls = c_it->second;
    PredictOptions opt;
    opt.basis = TimeBasis::kCall;
    opt.source_device = c.device;
    const Prediction p = predictor.predict(c.record, cls, *t_it->second, opt);
    const double measured = *c.record.measured_us;
    if (band_rows != nullptr) band_rows->add(c.shape_key, cls.family, p, true, measured);
    const Target& target = predictor.target(*t_it->second);
    Group& g = groups[{target.name, c.op, family_label(cls)}];
    g.error.add(p.us, measured);
    g.measured_us += measured;
    g.predicted_us += p.us;
    Collection& col = collections[{target.name, c.op, c.split}];
    col.totals.error.add(p.us, measured);
    col.totals.measured_us += measured;
    col.totals.predicted_us += p.us;
    if (measured > 0) col.ratios.push_back(p.us / measured);
    Acc& d = devices[target.name];
    d.all.add(p.us, measured);
    d.measured_us += measured;
    d.predicted_us += p.us;
    d.spec_scaled = target.spec_scaled;
    if (c.record.op.kind == OpKind::kGemm) d.gemm.add(p.us, measured);
    overall.add(p.us, measured);
  }
  for (const auto& [key, g] : groups) {
    out.groups.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), g.error.summary(),
                          g.measured_us, g.predicted_us});
  }
  for (auto& [key, col] : collections) {
    KernelEvalCollection k{std::get<0>(key),       std::get<1>(key),
                           std::get<2>(key),       col.totals.error.summary(),
                           col.totals.measured_us, col.totals.predicted_us};
    k.median_ratio = median(std::move(col.ratios));
    out.collections.push_back(std::move(k));
  }
  for (const auto& [name, a] : devices) {
    KernelEvalDevice d;
    d.device = name;
    d.error = a.all.summary();
    d.measured_us = a.measured_us;
    d.predicted_us = a.predicted_us;
    d.gemm = a.gemm.summary();
    d.spec_scaled = a.spec_scaled;
    out.devices.push_back(std::move(d));
  }
  out.overall = overall.summary();
  return out;
}

void print_kernel_eval(std::ostream& out, const KernelEvalResult& r) {
  fmt::print(out, "{:<16} {:<9} {:<18} {:>7} {:>8} {:>8} {:>8}\n", "device", "op", "family", "n",
             "MAPE%", "med%", "p90%");
  for (const auto& g : r.groups) {
    fmt::print(out, "{:<16} {:<9} {:<18} {:>7} {:>8.2f} {:>8.2f} {:>8.2f}\n", g.device, g.op,
               g.family, g.error.n, g.error.mape_pct, g.error.median_ape_pct, g.error.p90_ape_pct);
  }
  fmt::print(out, "\n{:<16} {:>7} {:>8} {:>8} {:>8} {:>7} {:>10} {:>9}\n", "device", "n", "MAPE%",
             "med%", "p90%", "gemm n", "gemm MAPE%", "gemm med%");
  for (const auto& d : r.devices) {
    fmt::print(out, "{:<16} {:>7} {:>8.2f} {:>8.2f} {:>8.2f} {:>7} {:>10.2f} {:>9.2f}{}\n",
               d.device, d.error.n, d.error.mape_pct, d.error.median_ape_pct, d.error.p90_ape_pct,
               d.gemm.n, d.gemm.mape_pct, d.gemm.median_ape_pct,
               d.spec_scaled ? "  (spec-scaled: no profile)" : "");
  }
  fmt::print(out, "{:<16} {:>7} {:>8.2f} {:>8.2f} {:>8.2f}\n", "overall", r.overall.n,
             r.overall.mape_pct, r.overall.median_ape_pct, r.overall.p90_ape_pct);
  if (r.unknown_devices > 0)
    fmt::print(out, "{} rows skipped: GPU not in the device catalogue\n", r.unknown_devices);
}

void print_kernel_eval_collections(std::ostream& out, const KernelEvalResult& r) {
  fmt::print(out, "\n{:<16} {:<9} {:<10} {:>7} {:>8} {:>8} {:>16} {:>15}\n", "device", "op",
             "collection", "n", "MAPE%", "med%", "median pred/meas", "total pred/meas");
  for (const auto& k : r.collections) {
    fmt::print(out, "{:<16} {:<9} {:<10} {:>7} {:>8.2f} {:>8.2f} {:>16.3f} {:>15.3f}\n", k.device,
               k.op, k.collection.empty() ? "-" : k.collection, k.error.n, k.error.mape_pct,
               k.error.median_ape_pct, k.median_ratio,
               k.measured_us > 0 ? k.predicted_us / k.measured_us : 0.0);
  }
}

nlohmann::json kernel_eval_json(const KernelEvalResult& r) {
  using nlohmann::json;
  json groups = json::array(), devices = json::array(), collections = json::array();
  for (const auto& g : r.groups) {
    json j = error_summary_json(g.error);
    j.update({{"device", g.device},
              {"op", g.op},
              {"family", g.family},
              {"measured_us", g.measured_us},
              {"predicted_us", g.predicted_us}});
    groups.push_back(std::move(j));
  }
  for (const auto& k : r.collections) {
    json j = error_summary_json(k.error);
    j.update({{"device", k.device},
              {"op", k.op},
              {"collection", k.collection},
              {"median_ratio", k.median_ratio},
              {"measured_us", k.measured_us},
              {"predicted_us", k.predicted_us}});
    collections.push_back(std::move(j));
  }
  for (const auto& d : r.devices) {
    json j = error_summary_json(d.error);
    j.update({{"device", d.device},
              {"gemm_mape_pct", d.gemm.mape_pct},
              {"gemm_median_ape_pct", d.gemm.median_ape_pct},
              {"measured_us", d.measured_us},
              {"predicted_us", d.predicted_us},
              {"spec_scaled", d.spec_scaled}});
    devices.push_back(std::move(j));
  }
  return {{"groups", groups},
          {"collections", collections},
          {"devices", devices},
          {"overall",
           {{"n", r.overall.n},
            {"mape_pct", r.overall.mape_pct},
            {"median_ape_pct", r.overall.median_ape_pct}}}};
}

}  // namespace pm2lat::reports

namespace pm2lat::reports {

namespace {

// One (source, target[, group]) cell of the cross-GPU tables: both forecasts of its rows.
struct CrossAcc {
  ErrorStats forecast, model_only;
  std::size_t anchored = 0;

  void add(const Prediction& forecast_p, const Prediction& model_p, double measured) {
    forecast.add(forecast_p.us, measured);
    model_only.add(model_p.us, measured);
    if (forecast_p.has(prediction_flags::kAnchored)) ++anchored;
  }
  CrossGroup group(std::string source, std::string target, std::string op) const {
    return {std::move(source),  std::move(target),    std::move(op),
            forecast.summary(), model_only.summary(), anchored};
  }
};

// The host part of a call-time prediction (its dispatch): the call less the kernel alone.
double host_part_us(const Predictor& predictor, const calibrate::MeasuredCall& call,
                    const KernelClass& cls, TargetId target, const PredictOptions& options,
                    const Prediction& predicted) {
  if (predicted.basis != TimeBasis::kCall) return 0;
  PredictOptions kernel = options;
  kernel.basis = TimeBasis::kKernel;
  const Prediction k = predictor.predict(call.record, cls, target, kernel);
  return k.basis == TimeBasis::kKernel ? std::max(0.0, predicted.us - k.us) : 0;
}

}  // namespace

CrossEvalResult eval_kernels_cross(Predictor& predictor,
                                   const std::vector<calibrate::MeasuredCall>& calls,
                                   const std::string& source, const std::string& target,
                                   bool graph_replay, CrossGrouping grouping,
                                   const std::optional<GuardPolicy>& guard, BandRows* band_rows) {
  const DeviceCatalogue& cat = predictor.catalogue();
  auto canonical = [&](const std::string& name) -> std::string {
    const DeviceSpec* s = cat.find(name);
    return s ? s->name : std::string();
  };
  const std::string want_source = source == "all" ? "all" : cat.resolve(source).name;
  const std::string want_target = target == "all" ? "all" : cat.resolve(target).name;
  // shape key -> GPU -> call
  std::map<std::string, std::map<std::string, const calibrate::MeasuredCall*>> by_shape;
  for (const auto& c : calls) {
    const std::string gpu = canonical(c.device);
    if (!gpu.empty()) by_shape[c.shape_key].emplace(gpu, &c);
  }
  std::unordered_map<std::string, KernelClass> classes;
  std::map<std::tuple<std::string, std::string, std::string>, CrossAcc> groups;
  std::map<std::pair<std::string, std::string>, CrossAcc> totals;
  std::map<std::string, CrossAcc> by_group;
  ErrorStats overall, gemm;
  std::map<std::string, TargetId> targets;
  auto target_id = [&](const std::string& gpu) {
    auto t = targets.find(gpu);
    if (t == targets.end()) t = targets.emplace(gpu, predictor.add_target(gpu)).first;
    return t->second;
  };
  for (const auto& [key, per_gpu] : by_shape) {
    for (const auto& [a, on_a] : per_gpu) {
      if (want_source != "all" && a != want_source) continue;
      auto c_it = classes.find(on_a->record.launch.name);
      if (c_it == classes.end()) {
        c_it = classes
                   .emplace(on_a->record.launch.name,
                            on_a->kernel_class ? *on_a->kernel_class
                                               : classify_kernel(on_a->record.launch.name))
                   .first;
      }
      const KernelClass& cls = c_it->second;
      const DeviceSpec* a_spec = cat.find(a);
      // The guard's verdict on A's row: the model's prediction for A (from what a forecast
      // for any GPU sees) against A's measured time.
      GuardVerdict verdict;
      bool any_target = false;
      for (const auto& [b, on_b] : per_gpu)
        any_target |= a != b && (want_target == "all" || b == want_target);
      if (guard && any_target && on_a->record.measured_us) {
        PredictOptions own;
        own.basis = on_a->record.basis;
        own.graph_replay = graph_replay;
        own.source_spec = a_spec;
        GuardInput in;
        in.measured_us = *on_a->record.measured_us;
        in.source = predictor.predict(on_a->record, cls, target_id(a), own);
        in.source_host_us = host_part_us(predictor, *on_a, cls, target_id(a), own, in.source);
        in.source_lower_us = source_lower_bound_us(on_a->record, cls, *a_spec, own.basis);
        in.family = cls.family;
        verdict = judge_measurement(in, *guard);
      }
      for (const auto& [b, on_b] : per_gpu) {
        if (a == b || (want_target != "all" && b != want_target)) continue;
        PredictOptions opt;
        opt.basis = on_b->record.basis;
        opt.graph_replay = graph_replay;
        opt.source_spec = a_spec;
        const Prediction model_p = predictor.predict(on_a->record, cls, target_id(b), opt);
        const Prediction p =
            verdict.anchors()
                ? guarded_forecast(verdict, model_p, false,
                                   host_part_us(predictor, *on_a, cls, target_id(b), opt, model_p),
                                   time_ratio_range(a_spec, cat.find(b)))
                : model_p;
        const double measured = *on_b->record.measured_us;
        if (band_rows != nullptr) band_rows->add(key, c_it->second.family, p, false, measured);
        const std::string group =
            grouping == CrossGrouping::kByGemmType ? gemm_call_type(*on_a) : on_a->op;
        groups[{a, b, group}].add(p, model_p, measured);
        totals[{a, b}].add(p, model_p, measured);
        by_group[group].add(p, model_p, measured);
        overall.add(p.us, measured);
        if (on_a->record.op.kind == OpKind::kGemm) gemm.add(p.us, measured);
      }
    }
  }
  CrossEvalResult out;
  out.group_name = grouping == CrossGrouping::kByGemmType ? "dtype" : "op";
  out.guarded = guard.has_value();
  for (const auto& [k, s] : by_group) out.by_group.push_back(s.group("all", "all", k));
  for (const auto& [k, s] : groups)
    out.pairs.push_back(s.group(std::get<0>(k), std::get<1>(k), std::get<2>(k)));
  for (const auto& [k, s] : totals) out.totals.push_back(s.group(k.first, k.second, "all"));
  out.overall = overall.summary();
  out.gemm = gemm.summary();
  return out;
}

void print_cross_eval(std::ostream& out, const CrossEvalResult& r) {
  fmt::print(out, "{:<16} {:<16} {:<9} {:>7} {:>8} {:>8}\n", "source", "target", r.group_name, "n",
             "MAPE%", "med%");
  for (const auto& g : r.pairs) {
    fmt::print(out, "{:<16} {:<16} {:<9} {:>7} {:>8.2f} {:>8.2f}\n", g.source, g.target, g.op,
               g.error.n, g.error.mape_pct, g.error.median_ape_pct);
  }
  fmt::print(out, "\n");
  for (const auto& g : r.totals) {
    fmt::print(out, "{:<16} {:<16} {:<9} {:>7} {:>8.2f} {:>8.2f}\n", g.source, g.target, "all",
               g.error.n, g.error.mape_pct, g.error.median_ape_pct);
  }
  fmt::print(out, "\n");
  for (const auto& g : r.by_group) {
    fmt::print(out, "{:<16} {:<16} {:<9} {:>7} {:>8.2f} {:>8.2f}\n", g.source, g.target, g.op,
               g.error.n, g.error.mape_pct, g.error.median_ape_pct);
  }
  fmt::print(out,
             "overall: n {}  MAPE {:.2f} %  median {:.2f} %   GEMM: n {}  MAPE {:.2f} %  median "
             "{:.2f} %\n",
             r.overall.n, r.overall.mape_pct, r.overall.median_ape_pct, r.gemm.n, r.gemm.mape_pct,
             r.gemm.median_ape_pct);
  if (r.guarded) print_guard_comparison(out, r);
}

void print_guard_comparison(std::ostream& os, const CrossEvalResult& r) {
  fmt::print(os, "\nmeasurement guard, per GPU pair: APE % with the guard and without it\n");
  fmt::print(os, "{:<16} {:<16} {:>7} {:>8} {:>8} {:>8} {:>10} {:>10}\n", "source", "target", "n",
             "anchored", "mean", "p95", "mean w/o", "p95 w/o");
  std::size_t p95_lower = 0, mean_raised = 0;
  for (const auto& g : r.totals) {
    fmt::print(os, "{:<16} {:<16} {:>7} {:>8} {:>8.2f} {:>8.2f} {:>10.2f} {:>10.2f}\n", g.source,
               g.target, g.error.n, g.anchored, g.error.mape_pct, g.error.p95_ape_pct,
               g.model_only.mape_pct, g.model_only.p95_ape_pct);
    p95_lower += guard_lowers_p95(g) ? 1 : 0;
    mean_raised += guard_raises_mean(g) ? 1 : 0;
  }
  fmt::print(os, "pairs {}: p95 lower in {}, mean raised in {}\n", r.totals.size(), p95_lower,
             mean_raised);
}

bool guard_lowers_p95(const CrossGroup& g) noexcept {
  return g.error.p95_ape_pct < g.model_only.p95_ape_pct;
}

bool guard_raises_mean(const CrossGroup& g) noexcept {
  return g.error.mape_pct > g.model_only.mape_pct;
}

void print_cross_matrix(std::ostream& out, const CrossEvalResult& r) {
  std::vector<std::string> names;
  for (const auto& g : r.totals) {
    for (const auto* n : {&g.source, &g.target}) {
      if (std::find(names.begin(), names.end(), *n) == names.end()) names.push_back(*n);
    }
  }
  std::sort(names.begin(), names.end());
  fmt::print(out, "MAPE % (rows: source GPU, columns: target GPU)\n{:<16}", "");
  for (const auto& n : names) fmt::print(out, " {:>10.10}", n);
  fmt::print(out, "\n");
  for (const auto& a : names) {
    fmt::print(out, "{:<16}", a);
    for (const auto& b : names) {
      std::string cell = "-";
      for (const auto& g : r.totals) {
        if (g.source == a && g.target == b) cell = fmt::format("{:.1f}", g.error.mape_pct);
      }
      fmt::print(out, " {:>10}", cell);
    }
    fmt::print(out, "\n");
  }
}

nlohmann::json cross_eval_json(const CrossEvalResult& r) {
  using nlohmann::json;
  json pairs = json::array();
  for (const auto* list : {&r.pairs, &r.totals, &r.by_group}) {
    for (const auto& g : *list) {
      pairs.push_back({{"source", g.source},
                       {"target", g.target},
                       {r.group_name, g.op},
                       {"n", g.error.n},
                       {"mape_pct", g.error.mape_pct},
                       {"median_ape_pct", g.error.median_ape_pct},
                       {"p95_ape_pct", g.error.p95_ape_pct},
                       {"anchored", g.anchored},
                       {"model_only_mape_pct", g.model_only.mape_pct},
                       {"model_only_p95_ape_pct", g.model_only.p95_ape_pct}});
    }
  }
  return {{"pairs", pairs},
          {"guarded", r.guarded},
          {"overall",
           {{"n", r.overall.n},
            {"mape_pct", r.overall.mape_pct},
            {"median_ape_pct", r.overall.median_ape_pct},
            {"gemm_n", r.gemm.n},
            {"gemm_mape_pct", r.gemm.mape_pct},
            {"gemm_median_ape_pct", r.gemm.median_ape_pct}}}};
}

}  // namespace pm2lat::reports
