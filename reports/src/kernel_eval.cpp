#include "pm2lat/reports/kernel_eval.h"

#include <fmt/core.h>
#include <fmt/ostream.h>

#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <unordered_map>

#include "pm2lat/classifier.h"

namespace pm2lat::reports {

std::string family_label(const KernelClass& cls) {
  if (cls.family == KernelFamily::kGemm && cls.gemm.scheme != GemmNameScheme::kNone)
    return std::string(to_string(cls.gemm.scheme));
  return std::string(to_string(cls.family));
}

KernelEvalResult eval_kernels(Predictor& predictor, const std::vector<calibrate::MeasuredCall>& calls) {
  struct Acc {
    ErrorStats all, gemm;
    bool spec_scaled = false;
  };
  std::map<std::tuple<std::string, std::string, std::string>, ErrorStats> groups;
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
    if (c_it == classes.end()) c_it = classes.emplace(c.record.launch.name, classify_kernel(c.record.launch.name)).first;
    const KernelClass& cls = c_it->second;
    PredictOptions opt;
    opt.basis = TimeBasis::kCall;
    opt.source_device = c.device;
    const Prediction p = predictor.predict(c.record, cls, *t_it->second, opt);
    const double measured = *c.record.measured_us;
    const Target& target = predictor.target(*t_it->second);
    groups[{target.name, c.op, family_label(cls)}].add(p.us, measured);
    Acc& d = devices[target.name];
    d.all.add(p.us, measured);
    d.spec_scaled = target.spec_scaled;
    if (c.record.op.kind == OpKind::kGemm) d.gemm.add(p.us, measured);
    overall.add(p.us, measured);
  }
  for (const auto& [key, s] : groups) {
    out.groups.push_back({std::get<0>(key), std::get<1>(key), std::get<2>(key), s.summary()});
  }
  for (const auto& [name, a] : devices) {
    out.devices.push_back({name, a.all.summary(), a.gemm.summary(), a.spec_scaled});
  }
  out.overall = overall.summary();
  return out;
}

void print_kernel_eval(std::ostream& os, const KernelEvalResult& r) {
  fmt::print(os, "{:<16} {:<9} {:<18} {:>7} {:>8} {:>8} {:>8}\n", "device", "op", "family", "n",
             "MAPE%", "med%", "p90%");
  for (const auto& g : r.groups) {
    fmt::print(os, "{:<16} {:<9} {:<18} {:>7} {:>8.2f} {:>8.2f} {:>8.2f}\n", g.device, g.op, g.family,
               g.error.n, g.error.mape_pct, g.error.median_ape_pct, g.error.p90_ape_pct);
  }
  fmt::print(os, "\n{:<16} {:>7} {:>8} {:>8} {:>8} {:>7} {:>10} {:>9}\n", "device", "n", "MAPE%", "med%",
             "p90%", "gemm n", "gemm MAPE%", "gemm med%");
  for (const auto& d : r.devices) {
    fmt::print(os, "{:<16} {:>7} {:>8.2f} {:>8.2f} {:>8.2f} {:>7} {:>10.2f} {:>9.2f}{}\n", d.device, d.error.n,
               d.error.mape_pct, d.error.median_ape_pct, d.error.p90_ape_pct, d.gemm.n, d.gemm.mape_pct,
               d.gemm.median_ape_pct, d.spec_scaled ? "  (spec-scaled: no profile)" : "");
  }
  fmt::print(os, "{:<16} {:>7} {:>8.2f} {:>8.2f} {:>8.2f}\n", "overall", r.overall.n, r.overall.mape_pct,
             r.overall.median_ape_pct, r.overall.p90_ape_pct);
  if (r.unknown_devices > 0)
    fmt::print(os, "{} rows skipped: GPU not in the device catalogue\n", r.unknown_devices);
}

nlohmann::json kernel_eval_json(const KernelEvalResult& r) {
  using nlohmann::json;
  json groups = json::array(), devices = json::array();
  for (const auto& g : r.groups) {
    groups.push_back({{"device", g.device}, {"op", g.op}, {"family", g.family}, {"n", g.error.n},
                      {"mape_pct", g.error.mape_pct}, {"median_ape_pct", g.error.median_ape_pct},
                      {"p90_ape_pct", g.error.p90_ape_pct}});
  }
  for (const auto& d : r.devices) {
    devices.push_back({{"device", d.device}, {"n", d.error.n}, {"mape_pct", d.error.mape_pct},
                       {"median_ape_pct", d.error.median_ape_pct}, {"p90_ape_pct", d.error.p90_ape_pct},
                       {"gemm_mape_pct", d.gemm.mape_pct}, {"gemm_median_ape_pct", d.gemm.median_ape_pct},
                       {"spec_scaled", d.spec_scaled}});
  }
  return {{"groups", groups},
          {"devices", devices},
          {"overall", {{"n", r.overall.n}, {"mape_pct", r.overall.mape_pct},
                       {"median_ape_pct", r.overall.median_ape_pct}}}};
}

}  // namespace pm2lat::reports
