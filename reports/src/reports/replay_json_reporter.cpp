#include "pm2lat/reports/replay_json_reporter.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "pm2lat/reports/replay/trace_replay.h"

namespace pm2lat::reports {
namespace {

using nlohmann::json;

json number_or_null(double v) { return std::isnan(v) ? json(nullptr) : json(v); }
json ms(double us) { return number_or_null(us / 1000.0); }

json trace_json(const TraceReplay& r) {
  const RunSummary& s = r.summary;
  const Accuracy& a = s.accuracy;
  const std::size_t own = r.table.target_index(r.gpu);
  json families = json::array();
  for (const auto& f : s.families) {
    json fj = {{"family", std::string(to_string(f.family))}, {"kernels", f.kernels}};
    if (a.available && !f.communication) {
      fj["measured_ms"] = ms(f.own_measured_us);
      fj["predicted_ms"] = ms(f.own_predicted_us);
      fj["error_pct"] = number_or_null(f.error_pct());
      fj["coverage_time_pct"] =
          f.own_measured_us > 0 ? json(f.covered_us / f.own_measured_us * 100.0) : json(nullptr);
    } else {
      fj["measured_ms"] = ms(f.measured_us);
      fj["predicted_ms"] = own != RunTable::npos ? ms(f.predicted_us[own]) : json(nullptr);
      fj["error_pct"] = nullptr;
    }
    if (f.communication) fj["communication"] = true;
    json by_target = json::object();
    for (std::size_t t = 0; t < s.targets.size(); ++t)
      by_target[s.targets[t]] = ms(f.predicted_us[t]);
    fj["predicted_ms_by_target"] = by_target;
    families.push_back(std::move(fj));
  }
  json targets = json::array();
  for (const auto& t : s.per_target) {
    targets.push_back({{"gpu", t.name},
                       {"predicted_ms", ms(t.predicted_us)},
                       {"step_ms", ms(t.span_us)},
                       {"fallback_kernels", t.fallback},
                       {"spec_scaled", t.spec_scaled}});
  }
  json j = {{"trace", r.trace},
            {"device", r.device},
            {"gpu", r.gpu.empty() ? json(nullptr) : json(r.gpu)},
            {"kernels", s.kernels},
            {"coverage_time_pct", a.available ? json(a.coverage_pct) : json(nullptr)},
            {"measured_ms", a.available ? ms(a.measured_us) : ms(s.measured_us)},
            {"predicted_ms", a.available ? ms(a.predicted_us) : json(nullptr)},
            {"error_pct", a.available ? number_or_null(a.error_pct()) : json(nullptr)},
            {"kernel_time_ms", ms(s.measured_us)},
            {"communication_ms", ms(a.communication_us)},
            {"measured_step_ms", ms(s.measured_span_us)},
            {"own_gpu_spec_scaled", r.own_spec_scaled},
            {"kernels_linked_to_ops", r.linked},
            {"kernels_with_shapes", r.with_shape},
            {"kernels_from_geometry", r.from_geometry},
            {"per_kernel_mape_pct", a.available ? json(a.per_kernel.mape_pct) : json(nullptr)},
            {"notes", r.notes},
            {"families", families},
            {"targets", targets}};
  return j;
}

}  // namespace

nlohmann::json replay_json(const std::vector<const TraceReplay*>& traces) {
  json list = json::array();
  for (const TraceReplay* r : traces) list.push_back(trace_json(*r));
  return {{"traces", list}};
}

}  // namespace pm2lat::reports
