// Accuracy statistics of predicted vs measured latencies: n, MAPE, median, p90 and p95 of the
// absolute percentage error (pm2lat/prediction_error.h). Shared by every evaluation harness.
#pragma once

#include <cstddef>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace pm2lat::reports {

struct ErrorSummary {
  std::size_t n = 0;
  double mape_pct = 0;
  double median_ape_pct = 0;
  double p90_ape_pct = 0;
  double p95_ape_pct = 0;
};

// n, MAPE, median and p90 APE under the names every evaluation's JSON gives them.
nlohmann::json error_summary_json(const ErrorSummary& e);

class ErrorStats {
 public:
  // A prediction and its measurement; nothing is counted when nothing was measured.
  void add(double predicted, double measured);
  void add_ape(double ape_pct) { apes_.push_back(ape_pct); }
  std::size_t size() const noexcept { return apes_.size(); }
  ErrorSummary summary() const;

 private:
  std::vector<double> apes_;
};

}  // namespace pm2lat::reports
