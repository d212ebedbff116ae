#include "pm2lat/reports/replay_json_reporter.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "pm2lat/reports/replay/trace_replay.h"

namespace pm2lat::reports {
namespace {

using nlohmann::json;

json number_or_null(double v) { return std::isnan(v) ? json(nullptr) : json(v); }
json ms(double us) { return number_or_null(us / 1000.0); }

// Families this large a share of the compared kernel time are the ones whose error decides
// whether a forecast of the whole run can be trusted (the accuracy goals are stated on them).
constexpr double kMajorFamilyShare = 0.05;

// Share of the compared (compute) kernel time per coverage reason, in percent.
json coverage_by_reason(const Accuracy& a) {
  json out = json::object();
  double total = 0;
  for (double us : a.reason_us) total += us;
  for (std::size_t i = 0; i < kCoverageReasons; ++i) {
    out[std::string(to_string(static_cast<CoverageReason>(i)))] =
        total > 0 ? json(a.reason_us[i] / total * 100.0) : json(nullptr);
  }
  return out;
}

json band_coverage(const Accuracy& a) {
  return a.available ? number_or_null(a.band_coverage_pct()) : json(nullptr);
}

// Per coverage reason: the share of its banded kernels inside their band, and how many.
json band_coverage_by_reason(const Accuracy& a) {
  if (!a.available) return nullptr;
  json out = json::object();
  for (std::size_t i = 0; i < kCoverageReasons; ++i) {
    if (a.banded[i] == 0) continue;
    const auto reason = static_cast<CoverageReason>(i);
    out[std::string(to_string(reason))] = {{"pct", a.band_coverage_pct(reason)},
                                           {"kernels", a.banded[i]}};
  }
  return out;
}

// The family with >= kMajorFamilyShare of the compared time whose predicted/measured ratio is
// furthest from 1 (in log terms: 0.5x and 2x are equally far).
json worst_major_family(const RunSummary& s) {
  double total = 0;
  for (const auto& f : s.families) {
    if (!f.communication) total += f.own_measured_us;
  }
  const FamilySummary* worst = nullptr;
  for (const auto& f : s.families) {
    if (f.communication || !(total > 0) || f.own_measured_us < kMajorFamilyShare * total ||
        !(f.own_predicted_us > 0))
      continue;
    if (worst == nullptr || std::fabs(std::log(f.ratio())) > std::fabs(std::log(worst->ratio())))
      worst = &f;
  }
  if (worst == nullptr) return nullptr;
  return {{"family", std::string(to_string(worst->family))},
          {"ratio", worst->ratio()},
          {"share_pct", worst->own_measured_us / total * 100.0}};
}

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
      fj["ratio"] = number_or_null(f.ratio());
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
            {"kernels_work_rejected", r.work_rejected},
            {"per_kernel_mape_pct", a.available ? json(a.per_kernel.mape_pct) : json(nullptr)},
            {"per_kernel_median_ape_pct",
             a.available ? json(a.per_kernel.median_ape_pct) : json(nullptr)},
            {"coverage_by_reason_pct", a.available ? coverage_by_reason(a) : json(nullptr)},
            {"worst_major_family", a.available ? worst_major_family(s) : json(nullptr)},
            // Share of kernels whose measured time lies inside their own-GPU error band
            // (null when the predictions carry no bands), overall and per coverage reason.
            {"band_coverage_pct", band_coverage(a)},
            {"band_coverage_by_reason_pct", band_coverage_by_reason(a)},
            // How finely the trace's times were read (the band check allows for it).
            {"timer_resolution_us",
             r.table.ranks().empty() ? 0.0 : r.table.ranks().front().timer_resolution_us},
            {"notes", r.notes},
            {"families", families},
            {"targets", targets}};
  return j;
}

}  // namespace

nlohmann::json replay_json(const std::vector<const TraceReplay*>& traces,
                           const std::vector<FailedTrace>& failed) {
  json list = json::array();
  // Over all traces: each kernel counts once, whatever its trace.
  std::size_t banded = 0, inside = 0;
  for (const TraceReplay* r : traces) {
    list.push_back(trace_json(*r));
    for (std::size_t i = 0; i < kCoverageReasons; ++i) {
      banded += r->summary.accuracy.banded[i];
      inside += r->summary.accuracy.inside_band[i];
    }
  }
  const json overall = banded > 0
                           ? json(100.0 * static_cast<double>(inside) / static_cast<double>(banded))
                           : json(nullptr);
  json unread = json::array();
  for (const FailedTrace& f : failed) unread.push_back({{"trace", f.trace}, {"error", f.error}});
  return {{"traces", list},
          {"band_coverage_pct", overall},
          {"banded_kernels", banded},
          {"failed", unread}};
}

}  // namespace pm2lat::reports
