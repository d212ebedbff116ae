#include "collect/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "pm2lat/prediction_error.h"
#include "pm2lat/text.h"

namespace pm2lat::shim {

void Summary::add(const PredictedRecord& r, std::uint64_t measured_ns) {
  const std::string family(to_string(r.family));
  FamilyTotals& f = families_[family];
  ++f.count;
  const bool measured = r.record.measured_us.has_value();
  if (measured) {
    ++f.measured_count;
    f.measured_ms += *r.record.measured_us / 1000.0;
  }
  for (const auto& [target, p] : r.predictions) f.predicted_ms[target] += p.us / 1000.0;
  if (!r.gpu.empty() && std::find(ran_on_.begin(), ran_on_.end(), r.gpu) == ran_on_.end())
    ran_on_.push_back(r.gpu);
  // Each kernel against the GPU it ran on (the record's own: a process may drive two models).
  if (measured && !r.gpu.empty() && *r.record.measured_us > 0) {
    if (const Prediction* p = r.prediction_for(r.gpu)) {
      ++f.compared;
      f.compared_measured_ms += *r.record.measured_us / 1000.0;
      f.compared_predicted_ms += p->us / 1000.0;
      f.error_pct_sum += error_pct(p->us, *r.record.measured_us);
    }
  }
  KernelTotals& k = kernels_[r.record.launch.name];
  if (k.count == 0) k.family = family;
  ++k.count;
  if (measured) {
    ++k.measured_count;
    k.measured_ns += measured_ns;
  }
}

void Summary::add_transfer(std::string_view kind, std::uint64_t bytes, std::uint64_t measured_ns) {
  auto it = transfers_.find(kind);
  if (it == transfers_.end()) it = transfers_.emplace(std::string(kind), TransferTotals{}).first;
  ++it->second.count;
  it->second.bytes += bytes;
  it->second.measured_ms += static_cast<double>(measured_ns) / 1e6;
}

std::string Summary::to_json(const std::string& mode, const std::vector<std::string>& targets,
                             const std::vector<std::string>& warnings,
                             std::size_t top_kernels) const {
  using nlohmann::json;
  const ShimCounters& c = counters_;
  json j = {{"schema", "pm2lat.summary"},
            {"version", 1},
            {"mode", mode},
            {"gpu", ran_on_.empty() ? source_ : join_list(ran_on_)},
            {"targets", targets},
            {"counters",
             {{"launches", c.launches},
              {"records", c.records},
              {"measured", c.measured},
              {"unmeasured", c.unmeasured},
              {"unhooked", c.unhooked},
              {"runtime_only", c.runtime_only},
              {"captured", c.captured},
              {"graph_replays", c.graph_replays},
              {"failed_launches", c.failed_launches},
              {"dropped", c.dropped},
              {"cupti_dropped", c.cupti_dropped},
              {"timing_lost", c.timing_lost},
              {"passed_through", c.passed_through},
              {"library_calls", c.library_calls}}},
            {"warnings", warnings}};
  json fams = json::array();
  for (const auto& [name, f] : families_) {
    json fj = {{"family", name},
               {"count", f.count},
               {"measured_count", f.measured_count},
               {"measured_ms", f.measured_ms},
               {"predicted_ms", f.predicted_ms}};
    if (f.compared > 0 && f.compared_measured_ms > 0) {
      fj["source_error"] = {
          {"kernels", f.compared},
          {"measured_ms", f.compared_measured_ms},
          {"predicted_ms", f.compared_predicted_ms},
          {"total_error_pct", error_pct(f.compared_predicted_ms, f.compared_measured_ms)},
          {"mean_abs_error_pct", f.error_pct_sum / double(f.compared)}};
    }
    fams.push_back(std::move(fj));
  }
  j["families"] = std::move(fams);
  std::vector<const std::pair<const std::string, KernelTotals>*> ks;
  ks.reserve(kernels_.size());
  for (const auto& kv : kernels_) ks.push_back(&kv);
  std::sort(ks.begin(), ks.end(), [](const auto* a, const auto* b) {
    if (a->second.measured_ns != b->second.measured_ns)
      return a->second.measured_ns > b->second.measured_ns;
    if (a->second.count != b->second.count) return a->second.count > b->second.count;
    return a->first < b->first;
  });
  json kj = json::array();
  for (std::size_t i = 0; i < ks.size() && i < top_kernels; ++i) {
    const auto& [name, k] = *ks[i];
    kj.push_back({{"name", name},
                  {"family", k.family},
                  {"count", k.count},
                  {"measured_count", k.measured_count},
                  {"measured_ns", k.measured_ns}});
  }
  j["kernels"] = std::move(kj);
  j["kernels_total"] = kernels_.size();
  json tj = json::array();
  for (const auto& [kind, t] : transfers_) {
    tj.push_back(
        {{"kind", kind}, {"count", t.count}, {"bytes", t.bytes}, {"measured_ms", t.measured_ms}});
  }
  j["transfers"] = std::move(tj);
  return j.dump(1, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string Summary::to_text(const std::vector<std::string>& targets) const {
  std::string out =
      fmt::format("pm2lat: {} kernel records ({} measured, {} unhooked, {} dropped)\n",
                  counters_.records, counters_.measured, counters_.unhooked, counters_.dropped);
  // Without a single measured kernel (predict-only) the measured and error columns would only
  // hold zeros and dashes: forecasts alone are shown.
  const bool measured = std::any_of(families_.begin(), families_.end(),
                                    [](const auto& kv) { return kv.second.measured_count > 0; });
  std::string head =
      measured ? fmt::format("pm2lat: {:<18} {:>9} {:>12}", "family", "kernels", "measured ms")
               : fmt::format("pm2lat: {:<18} {:>9}", "family", "kernels");
  for (const auto& t : targets) head += fmt::format(" {:>14}", t.substr(0, 14));
  const bool error_column = measured && !source_.empty();
  if (error_column) head += fmt::format(" {:>10}", "error");
  out += head + "\n";
  for (const auto& [name, f] : families_) {
    std::string line =
        measured ? fmt::format("pm2lat: {:<18} {:>9} {:>12.3f}", name, f.count, f.measured_ms)
                 : fmt::format("pm2lat: {:<18} {:>9}", name, f.count);
    for (const auto& t : targets) {
      auto it = f.predicted_ms.find(t);
      line += it == f.predicted_ms.end() ? fmt::format(" {:>14}", "-")
                                         : fmt::format(" {:>14.3f}", it->second);
    }
    if (error_column) {
      line += f.compared_measured_ms > 0
                  ? fmt::format(" {:>9.1f}%",
                                error_pct(f.compared_predicted_ms, f.compared_measured_ms))
                  : fmt::format(" {:>10}", "-");
    }
    out += line + "\n";
  }
  if (!transfers_.empty()) out += transfers_line();
  return out;
}

std::string Summary::transfers_line() const {
  // What the forecasts leave out of the GPU's measured time: its copies and memsets.
  double copies_ms = 0, memsets_ms = 0, kernels_ms = 0;
  std::uint64_t copies = 0, memsets = 0;
  std::string kinds;
  for (const auto& [kind, t] : transfers_) {
    if (kind == "memset") {
      memsets += t.count;
      memsets_ms += t.measured_ms;
      continue;
    }
    copies += t.count;
    copies_ms += t.measured_ms;
    kinds += fmt::format("{}{} {:.3f}", kinds.empty() ? "" : ", ", kind, t.measured_ms);
  }
  for (const auto& kv : families_) kernels_ms += kv.second.measured_ms;
  const double gpu_ms = kernels_ms + copies_ms + memsets_ms;
  std::string line = fmt::format("pm2lat: not forecast: {} memory copies ({:.3f} ms{}{})", copies,
                                 copies_ms, kinds.empty() ? "" : ": ", kinds);
  line += fmt::format(" and {} memsets ({:.3f} ms)", memsets, memsets_ms);
  if (kernels_ms > 0)
    line += fmt::format(", {:.1f} % of the GPU time measured",
                        100.0 * (copies_ms + memsets_ms) / gpu_ms);
  return line + "\n";
}

}  // namespace pm2lat::shim
