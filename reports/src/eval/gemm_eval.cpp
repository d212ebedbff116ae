#include "pm2lat/reports/eval/gemm_eval.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <unordered_map>

#include "pm2lat/classifier.h"

namespace pm2lat::reports {

GemmEvalResult eval_gemm(Predictor& predictor, const std::vector<calibrate::MeasuredCall>& calls) {
  GemmEvalResult out;
  std::map<std::pair<std::string, std::string>, ErrorStats> groups;
  std::map<std::pair<std::string, std::string>, bool> scaled;
  std::unordered_map<std::string, std::optional<TargetId>> targets;
  ErrorStats overall;
  for (const auto& c : calls) {
    auto t = targets.find(c.device);
    if (t == targets.end()) {
      std::optional<TargetId> id;
      if (predictor.catalogue().find(c.device) != nullptr) id = predictor.add_target(c.device);
      t = targets.emplace(c.device, id).first;
    }
    if (!t->second) {
      ++out.unknown_devices;
      continue;
    }
    const Target& target = predictor.target(*t->second);
    PredictOptions opt;
    opt.basis = c.record.basis;
    opt.graph_replay = true;  // the tables time calls in replayed CUDA graphs
    opt.source_spec = target.spec;
    const KernelClass cls =
        c.kernel_class ? *c.kernel_class : classify_kernel(c.record.launch.name);
    const Prediction p = predictor.predict(c.record, cls, *t->second, opt);
    const std::pair<std::string, std::string> key{target.name,
                                                  std::string(to_string(c.record.op.gemm.a))};
    groups[key].add(p.us, *c.record.measured_us);
    scaled[key] = scaled[key] || p.has(prediction_flags::kSpecScaled);
    overall.add(p.us, *c.record.measured_us);
  }
  for (const auto& [k, s] : groups)
    out.devices.push_back({k.first, k.second, s.summary(), scaled[k]});
  out.overall = overall.summary();
  return out;
}

void print_gemm_eval(std::ostream& os, const GemmEvalResult& r) {
  fmt::print(os, "{:<22} {:<6} {:>7} {:>8} {:>8} {:>8}\n", "system", "dtype", "n", "MAPE%", "med%",
             "p90%");
  for (const auto& g : r.devices) {
    fmt::print(os, "{:<22} {:<6} {:>7} {:>8.2f} {:>8.2f} {:>8.2f}{}\n", g.device, g.dtype,
               g.error.n, g.error.mape_pct, g.error.median_ape_pct, g.error.p90_ape_pct,
               g.spec_scaled ? "  (spec-scaled: no profile of its own)" : "");
  }
  fmt::print(os, "{:<22} {:<6} {:>7} {:>8.2f} {:>8.2f} {:>8.2f}\n", "overall", "", r.overall.n,
             r.overall.mape_pct, r.overall.median_ape_pct, r.overall.p90_ape_pct);
  if (r.unknown_devices > 0)
    fmt::print(os, "{} rows skipped: system not in the device catalogue\n", r.unknown_devices);
}

nlohmann::json gemm_eval_json(const GemmEvalResult& r) {
  using nlohmann::json;
  json devices = json::array();
  for (const auto& g : r.devices) {
    devices.push_back({{"device", g.device},
                       {"dtype", g.dtype},
                       {"n", g.error.n},
                       {"mape_pct", g.error.mape_pct},
                       {"median_ape_pct", g.error.median_ape_pct},
                       {"p90_ape_pct", g.error.p90_ape_pct},
                       {"spec_scaled", g.spec_scaled}});
  }
  return {{"devices", devices},
          {"overall",
           {{"n", r.overall.n},
            {"mape_pct", r.overall.mape_pct},
            {"median_ape_pct", r.overall.median_ape_pct},
            {"p90_ape_pct", r.overall.p90_ape_pct}}}};
}

}  // namespace pm2lat::reports
