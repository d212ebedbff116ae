#include "pm2lat/reports/eval/error_stats.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>

#include "pm2lat/prediction_error.h"

namespace pm2lat::reports {

nlohmann::json error_summary_json(const ErrorSummary& e) {
  return {{"n", e.n},
          {"mape_pct", e.mape_pct},
          {"median_ape_pct", e.median_ape_pct},
          {"p90_ape_pct", e.p90_ape_pct}};
}

void ErrorStats::add(double predicted, double measured) {
  if (measured > 0) apes_.push_back(error_pct(predicted, measured));
}

namespace {
double quantile(std::vector<double>& v, double q) {
  // Linear interpolation between closest ranks (numpy's default).
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(v.size() - 1, lo + 1);
  return v[lo] + (v[hi] - v[lo]) * (pos - static_cast<double>(lo));
}
}  // namespace

ErrorSummary ErrorStats::summary() const {
  ErrorSummary s;
  s.n = apes_.size();
  if (apes_.empty()) return s;
  std::vector<double> v = apes_;
  s.mape_pct = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  s.median_ape_pct = quantile(v, 0.5);
  s.p90_ape_pct = quantile(v, 0.9);
  s.p95_ape_pct = quantile(v, 0.95);
  return s;
}

}  // namespace pm2lat::reports
