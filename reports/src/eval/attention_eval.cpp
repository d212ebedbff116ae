#include "pm2lat/reports/eval/attention_eval.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <unordered_map>

#include "pm2lat/classifier.h"

namespace pm2lat::reports {

AttentionEvalResult eval_attention(Predictor& predictor,
                                   const std::vector<calibrate::AttentionMeasurement>& rows) {
  struct Acc {
    ErrorStats all;
    std::map<std::string, ErrorStats> kv;
    bool spec_scaled = false, config_chosen = false;
  };
  AttentionEvalResult out;
  std::map<std::pair<std::string, std::string>, Acc> groups;
  std::unordered_map<std::string, std::optional<TargetId>> targets;
  std::unordered_map<std::string, KernelClass> classes;
  ErrorStats overall;
  for (const auto& m : rows) {
    auto t = targets.find(m.system);
    if (t == targets.end()) {
      std::optional<TargetId> id;
      if (predictor.catalogue().find(m.system) != nullptr) id = predictor.add_target(m.system);
      t = targets.emplace(m.system, id).first;
    }
    if (!t->second) {
      ++out.unknown_devices;
      continue;
    }
    auto c = classes.find(m.record.launch.name);
    if (c == classes.end())
      c = classes.emplace(m.record.launch.name, classify_kernel(m.record.launch.name)).first;
    const Target& target = predictor.target(*t->second);
    PredictOptions opt;
    opt.basis = TimeBasis::kKernel;
    opt.graph_replay = true;  // the tables time calls in replayed CUDA graphs
    opt.source_spec = target.spec;
    const Prediction p = predictor.predict(m.record, c->second, *t->second, opt);
    const double measured = *m.record.measured_us;
    const std::string backend =
        m.op == "context_attention" ? m.backend : m.backend + " [" + m.op + "]";
    Acc& a = groups[{target.name, backend}];
    a.all.add(p.us, measured);
    const DType kv = m.record.op.attention.kv_dtype;
    a.kv[std::string(to_string(kv == DType::kFp8E4M3 ? DType::kFp8E4M3 : kv))].add(p.us, measured);
    a.spec_scaled = a.spec_scaled || p.has(prediction_flags::kSpecScaled);
    a.config_chosen = a.config_chosen || p.has(prediction_flags::kConfigChosen);
    overall.add(p.us, measured);
  }
  for (const auto& [key, a] : groups) {
    AttentionEvalGroup g;
    g.device = key.first;
    g.backend = key.second;
    g.error = a.all.summary();
    for (const auto& [kv, s] : a.kv) g.by_kv_cache.push_back({kv, s.summary()});
    g.spec_scaled = a.spec_scaled;
    g.config_chosen = a.config_chosen;
    out.groups.push_back(std::move(g));
  }
  out.overall = overall.summary();
  return out;
}

void print_attention_eval(std::ostream& os, const AttentionEvalResult& r) {
  fmt::print(os, "{:<20} {:<34} {:<9} {:>7} {:>8} {:>8} {:>8}\n", "system", "backend", "kv cache",
             "n", "MAPE%", "med%", "p90%");
  for (const auto& g : r.groups) {
    std::string note;
    if (g.spec_scaled) note += "  (spec-scaled)";
    if (g.config_chosen) note += "  (other implementation)";
    fmt::print(os, "{:<20} {:<34} {:<9} {:>7} {:>8.2f} {:>8.2f} {:>8.2f}{}\n", g.device, g.backend,
               "all", g.error.n, g.error.mape_pct, g.error.median_ape_pct, g.error.p90_ape_pct,
               note);
    if (g.by_kv_cache.size() > 1) {
      for (const auto& s : g.by_kv_cache) {
        fmt::print(os, "{:<20} {:<34} {:<9} {:>7} {:>8.2f} {:>8.2f} {:>8.2f}\n", "", "",
                   s.kv_cache_dtype, s.error.n, s.error.mape_pct, s.error.median_ape_pct,
                   s.error.p90_ape_pct);
      }
    }
  }
  fmt::print(os, "{:<20} {:<34} {:<9} {:>7} {:>8.2f} {:>8.2f} {:>8.2f}\n", "overall", "", "",
             r.overall.n, r.overall.mape_pct, r.overall.median_ape_pct, r.overall.p90_ape_pct);
  if (r.unknown_devices > 0)
    fmt::print(os, "{} rows skipped: system not in the device catalogue\n", r.unknown_devices);
}

nlohmann::json attention_eval_json(const AttentionEvalResult& r) {
  using nlohmann::json;
  json groups = json::array();
  for (const auto& g : r.groups) {
    json kv = json::array();
    for (const auto& s : g.by_kv_cache) {
      kv.push_back({{"kv_cache_dtype", s.kv_cache_dtype},
                    {"n", s.error.n},
                    {"mape_pct", s.error.mape_pct},
                    {"median_ape_pct", s.error.median_ape_pct}});
    }
    json j = error_summary_json(g.error);
    j.update({{"device", g.device},
              {"backend", g.backend},
              {"by_kv_cache", kv},
              {"spec_scaled", g.spec_scaled},
              {"config_chosen", g.config_chosen}});
    groups.push_back(std::move(j));
  }
  return {{"groups", groups}, {"overall", error_summary_json(r.overall)}};
}

}  // namespace pm2lat::reports
