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
std::string gemm_call_type(const calibrate::MeasuredCall& call) {
  const GemmShape& g = call.record.op.gemm;
  return gemm_type_label(g.a, g.scaling);
}

GemmEvalResult eval_gemm(Predictor& predictor, const std::vector<calibrate::MeasuredCall>& calls,
                         std::ostream* rows_out) {
  GemmEvalResult out;
  if (rows_out != nullptr)
    *rows_out << "system,dtype,m,n,k,measured_us,predicted_us,config,flags\n";
  std::map<std::pair<std::string, std::string>, ErrorStats> groups;
  std::map<std::string, ErrorStats> devices;
  std::map<std::string, bool> scaled;
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
    groups[{target.name, gemm_call_type(c)}].add(p.us, *c.record.measured_us);
    if (rows_out != nullptr) {
      const GemmShape& g = c.record.op.gemm;
      fmt::print(*rows_out, "{},{},{},{},{},{},{:.6g},{},\"{}\"\n", target.name, gemm_call_type(c),
                 g.m, g.n, g.k, *c.record.measured_us, p.us, p.config, flags_to_string(p.flags));
    }
    devices[target.name].add(p.us, *c.record.measured_us);
    scaled[target.name] = scaled[target.name] || p.has(prediction_flags::kSpecScaled);
    overall.add(p.us, *c.record.measured_us);
  }
  for (const auto& [k, s] : groups)
    out.groups.push_back({k.first, k.second, s.summary(), scaled[k.first]});
  for (const auto& [d, s] : devices) out.devices.push_back({d, "", s.summary(), scaled[d]});
  out.overall = overall.summary();
  return out;
}

void print_gemm_eval(std::ostream& os, const GemmEvalResult& r) {
  fmt::print(os, "{:<22} {:<10} {:>7} {:>8} {:>8} {:>8}\n", "system", "dtype", "n", "MAPE%", "med%",
             "p90%");
  for (const auto* list : {&r.groups, &r.devices}) {
    for (const auto& g : *list) {
      fmt::print(os, "{:<22} {:<10} {:>7} {:>8.2f} {:>8.2f} {:>8.2f}{}\n", g.device,
                 g.dtype.empty() ? "all" : g.dtype, g.error.n, g.error.mape_pct,
                 g.error.median_ape_pct, g.error.p90_ape_pct,
                 g.spec_scaled ? "  (spec-scaled: no profile of its own)" : "");
    }
  }
  fmt::print(os, "{:<22} {:<10} {:>7} {:>8.2f} {:>8.2f} {:>8.2f}\n", "overall", "", r.overall.n,
             r.overall.mape_pct, r.overall.median_ape_pct, r.overall.p90_ape_pct);
  if (r.unknown_devices > 0)
    fmt::print(os, "{} rows skipped: system not in the device catalogue\n", r.unknown_devices);
}

nlohmann::json gemm_eval_json(const GemmEvalResult& r) {
  using nlohmann::json;
  json groups = json::array(), devices = json::array();
  for (const auto& g : r.groups) {
    json j = error_summary_json(g.error);
    j["device"] = g.device;
    j["dtype"] = g.dtype;
    j["spec_scaled"] = g.spec_scaled;
    groups.push_back(std::move(j));
  }
  for (const auto& g : r.devices) {
    json j = error_summary_json(g.error);
    j["device"] = g.device;
    j["spec_scaled"] = g.spec_scaled;
    devices.push_back(std::move(j));
  }
  return {{"groups", groups}, {"devices", devices}, {"overall", error_summary_json(r.overall)}};
}

}  // namespace pm2lat::reports
