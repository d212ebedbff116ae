#include "pm2lat/reports/run_summary.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "pm2lat/prediction_error.h"
#include "pm2lat/reports/predicted_timeline.h"

namespace pm2lat::reports {
namespace {
constexpr std::size_t kFamilies = kKernelFamilyCount;

// Whether the measured time lies inside the prediction's band: the band is a quantile of
// |predicted - measured| / measured, so the same ratio is compared here. A time read with a
// coarse timer (`resolution_us`: whole-microsecond timestamps) is any duration within that
// much of the reading: it lies inside when one of those durations does, i.e. when
// [measured - resolution, measured + resolution] meets the durations the band allows,
// [predicted / (1 + band), predicted / (1 - band)].
bool inside_band(double predicted_us, double measured_us, double band_pct, double resolution_us) {
  if (!(measured_us > 0)) return false;
  if (std::fabs(predicted_us - measured_us) / measured_us * 100.0 <= band_pct) return true;
  if (!(resolution_us > 0)) return false;
  const double band = band_pct / 100.0;
  const double shortest = predicted_us / (1.0 + band);
  const double longest = band < 1.0 ? predicted_us / (1.0 - band) : HUGE_VAL;
  return measured_us - resolution_us <= longest && measured_us + resolution_us >= shortest;
}

// Prediction-weighted mean band in percent; NaN when nothing carried a band.
double mean_band_pct(double band_us, double banded_us) noexcept {
  return banded_us > 0 ? band_us / banded_us * 100.0 : std::nan("");
}
}  // namespace

double FamilySummary::error_pct() const noexcept {
  return pm2lat::error_pct(own_predicted_us, own_measured_us);
}
double FamilySummary::ratio() const noexcept {
  return own_measured_us > 0 ? own_predicted_us / own_measured_us : std::nan("");
}
double FamilySummary::band_pct(std::size_t target) const noexcept {
  return target < band_us.size() ? mean_band_pct(band_us[target], banded_us[target]) : std::nan("");
}
double TargetSummary::band_pct() const noexcept { return mean_band_pct(band_us, banded_us); }
double Accuracy::error_pct() const noexcept { return pm2lat::error_pct(predicted_us, measured_us); }
double Accuracy::band_coverage_pct() const noexcept {
  std::size_t n = 0, inside = 0;
  for (std::size_t i = 0; i < kCoverageReasons; ++i) {
    n += banded[i];
    inside += inside_band[i];
  }
  return n > 0 ? 100.0 * static_cast<double>(inside) / static_cast<double>(n) : std::nan("");
}
double Accuracy::band_coverage_pct(CoverageReason reason) const noexcept {
  const auto i = static_cast<std::size_t>(reason);
  return banded[i] > 0
             ? 100.0 * static_cast<double>(inside_band[i]) / static_cast<double>(banded[i])
             : std::nan("");
}

bool is_communication(const RunTable& table, std::size_t row) {
  if (table.kernels()[row].family == KernelFamily::kCollective) return true;
  const std::size_t own = table.own_target(row);
  return own != RunTable::npos && (table.flags(row, own) & prediction_flags::kCommunication) != 0;
}

RunSummary summarize(const RunTable& table) {
  RunSummary s;
  s.targets = table.targets();
  const std::size_t nt = s.targets.size();
  std::array<FamilySummary, kFamilies> fam;
  for (std::size_t f = 0; f < kFamilies; ++f) {
    fam[f].family = static_cast<KernelFamily>(f);
    fam[f].predicted_us.assign(nt, 0.0);
    fam[f].fallback.assign(nt, 0);
    fam[f].band_us.assign(nt, 0.0);
    fam[f].banded_us.assign(nt, 0.0);
  }
  s.per_target.resize(nt);
  for (std::size_t t = 0; t < nt; ++t) s.per_target[t].name = s.targets[t];
  std::vector<std::size_t> scaled(nt, 0), predicted_count(nt, 0);
  s.per_rank.resize(table.ranks().size());
  for (std::size_t r = 0; r < table.ranks().size(); ++r) {
    s.per_rank[r].rank = table.ranks()[r].rank;
    s.per_rank[r].gpu = table.ranks()[r].gpu;
    s.per_rank[r].predicted_us.assign(nt, 0.0);
    s.per_rank[r].predicted_span_us.assign(nt, 0.0);
  }
  ErrorStats per_kernel;
  double covered_us = 0, compute_measured_us = 0;

  const auto& rows = table.kernels();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const KernelRow& k = rows[i];
    FamilySummary& f = fam[std::min(kFamilies - 1, static_cast<std::size_t>(k.family))];
    RankSummary& rk = s.per_rank[static_cast<std::size_t>(k.rank_index)];
    ++f.kernels;
    ++rk.kernels;
    if (k.measured()) {
      f.measured_us += k.measured_us;
      rk.measured_us += k.measured_us;
      s.measured_us += k.measured_us;
      ++s.measured_kernels;
    }
    for (std::size_t t = 0; t < nt; ++t) {
      const double p = table.predicted_us(i, t);
      TargetSummary& ts = s.per_target[t];
      if (std::isnan(p)) {
        ++ts.missing;
        continue;
      }
      const std::uint32_t fl = table.flags(i, t);
      f.predicted_us[t] += p;
      rk.predicted_us[t] += p;
      ts.predicted_us += p;
      ++predicted_count[t];
      if (fl & prediction_flags::kSpecScaled) ++scaled[t];
      if (const double band = table.band_pct(i, t); !std::isnan(band)) {
        f.band_us[t] += p * band / 100.0;
        f.banded_us[t] += p;
        ts.band_us += p * band / 100.0;
        ts.banded_us += p;
      }
      if (fl & prediction_flags::kFallback) {
        ++f.fallback[t];
        ++ts.fallback;
        ts.fallback_us += p;
      }
    }
    const bool comm = is_communication(table, i);
    if (comm) f.communication = true;
    const std::size_t own = table.own_target(i);
    if (!k.measured() || own == RunTable::npos) continue;
    const double p = table.predicted_us(i, own);
    if (std::isnan(p)) continue;
    if (comm) {
      s.accuracy.communication_us += k.measured_us;
      continue;
    }
    const CoverageReason reason = coverage_reason(table.flags(i, own));
    const bool dedicated = reason == CoverageReason::kCovered;
    s.accuracy.reason_us[static_cast<std::size_t>(reason)] += k.measured_us;
    ++f.compared;
    f.own_measured_us += k.measured_us;
    f.own_predicted_us += p;
    if (dedicated) f.covered_us += k.measured_us;
    ++s.accuracy.kernels;
    s.accuracy.measured_us += k.measured_us;
    s.accuracy.predicted_us += p;
    compute_measured_us += k.measured_us;
    if (dedicated) covered_us += k.measured_us;
    per_kernel.add(p, k.measured_us);
    if (const double band = table.band_pct(i, own); !std::isnan(band)) {
      const auto r = static_cast<std::size_t>(reason);
      ++s.accuracy.banded[r];
      const double resolution_us =
          table.ranks()[static_cast<std::size_t>(k.rank_index)].timer_resolution_us;
      if (inside_band(p, k.measured_us, band, resolution_us)) ++s.accuracy.inside_band[r];
    }
  }
  s.kernels = rows.size();
  s.accuracy.available = s.accuracy.kernels > 0;
  s.accuracy.coverage_pct =
      compute_measured_us > 0 ? covered_us / compute_measured_us * 100.0 : 0.0;
  s.accuracy.per_kernel = per_kernel.summary();
  for (std::size_t t = 0; t < nt; ++t) {
    s.per_target[t].spec_scaled =
        table.spec_scaled(t) || (predicted_count[t] > 0 && scaled[t] == predicted_count[t]);
  }

  // Step times: the run laid out on each target, and as measured.
  const std::vector<std::size_t> order = timeline_order(table);
  const Timeline measured = layout_timeline(table, RunTable::npos, order);
  s.measured_span_us = measured.span_us;
  for (std::size_t r = 0; r < s.per_rank.size(); ++r)
    s.per_rank[r].measured_span_us = measured.rank_span_us[r];
  for (std::size_t t = 0; t < nt; ++t) {
    const Timeline tl = layout_timeline(table, t, order);
    s.per_target[t].span_us = tl.span_us;
    for (std::size_t r = 0; r < s.per_rank.size(); ++r)
      s.per_rank[r].predicted_span_us[t] = tl.rank_span_us[r];
  }

  for (auto& f : fam) {
    if (f.kernels > 0) s.families.push_back(std::move(f));
  }
  std::stable_sort(s.families.begin(), s.families.end(),
                   [](const FamilySummary& a, const FamilySummary& b) {
                     if (a.measured_us != b.measured_us) return a.measured_us > b.measured_us;
                     const double pa = a.predicted_us.empty() ? 0 : a.predicted_us.front();
                     const double pb = b.predicted_us.empty() ? 0 : b.predicted_us.front();
                     return pa > pb;
                   });
  return s;
}

std::vector<std::string> rank_gpus(const RunSummary& s) {
  std::vector<std::string> gpus;
  for (const auto& r : s.per_rank) {
    if (!r.gpu.empty() && std::find(gpus.begin(), gpus.end(), r.gpu) == gpus.end())
      gpus.push_back(r.gpu);
  }
  return gpus;
}

}  // namespace pm2lat::reports
