// What a run comes to: per kernel family and per target GPU, measured and predicted totals;
// per target, the total kernel time and the step time as that GPU would run it; per rank,
// the same; and the accuracy on the GPU the run used (predicted vs measured), with coverage.
//
// Definitions (every report uses these):
//  - error_pct = |sum predicted - sum measured| / sum measured on the run's own GPU, over
//    kernels that were measured and predicted there (pm2lat/prediction_error.h).
//  - coverage = share of measured kernel time whose own-GPU prediction came from a dedicated
//    model inside its calibrated range: not a fallback, anchored, shape-rejected, shape-less,
//    clamped or extrapolated prediction (coverage_reason.h); the rest is kept by reason.
//  - Communication kernels (NCCL; flagged "communication" by the predictor) are kept out of
//    error and coverage: their measured time is mostly waiting for other ranks, not work of
//    this GPU. They are reported on their own (communication_us) and in their family row.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include "pm2lat/kernel_class.h"
#include "pm2lat/reports/coverage_reason.h"
#include "pm2lat/reports/eval/error_stats.h"
#include "pm2lat/reports/run_table.h"

namespace pm2lat::reports {

struct FamilySummary {
  KernelFamily family = KernelFamily::kUnknown;
  std::size_t kernels = 0;
  double measured_us = 0;             // all measured kernels of the family
  std::vector<double> predicted_us;   // per target
  std::vector<std::size_t> fallback;  // per target: kernels predicted by the fallback
  // Per target: sum of predicted x band over the kernels with a band, and their predicted
  // time (band_pct() is the prediction-weighted mean band).
  std::vector<double> band_us;
  std::vector<double> banded_us;
  // On the run's own GPU (kernels both measured and predicted there):
  std::size_t compared = 0;
  double own_measured_us = 0;
  double own_predicted_us = 0;
  double covered_us = 0;  // measured time with a dedicated model inside its range
  bool communication = false;

  double error_pct() const noexcept;
  // predicted / measured on the run's own GPU (NaN when nothing was measured).
  double ratio() const noexcept;
  // The family's band on a target in percent: the prediction-weighted mean of its kernels'
  // bands (a sum's error is at most that when every kernel lies within its band); NaN when
  // no kernel carries one.
  double band_pct(std::size_t target) const noexcept;
};

struct TargetSummary {
  std::string name;
  double predicted_us = 0;  // sum of kernel times
  double span_us = 0;       // step time: the run laid out on this GPU (predicted_timeline.h)
  std::size_t missing = 0;  // kernels without a prediction for this target
  std::size_t fallback = 0;
  double fallback_us = 0;    // predicted time of fallback kernels
  bool spec_scaled = false;  // every prediction for it was spec-scaled (no own profile)
  double band_us = 0;        // as FamilySummary::band_us, over all kernels
  double banded_us = 0;
  double band_pct() const noexcept;  // NaN when no kernel carries a band
};

struct RankSummary {
  std::int32_t rank = 0;
  std::string gpu;
  std::size_t kernels = 0;
  double measured_us = 0;
  double measured_span_us = 0;
  std::vector<double> predicted_us;       // per target
  std::vector<double> predicted_span_us;  // per target
};

struct Accuracy {
  bool available = false;  // some kernels were measured and predicted on their own GPU
  std::size_t kernels = 0;
  double measured_us = 0;
  double predicted_us = 0;
  double coverage_pct = 0;
  CoverageByReason reason_us{};  // measured compute time per CoverageReason
  double communication_us = 0;
  ErrorSummary per_kernel;  // absolute percentage error of single kernels
  // Kernels whose own-GPU prediction carries an error band, and those whose measured time
  // lies inside it (|predicted - measured| <= band x measured, to within the timer's
  // resolution: RankInfo::timer_resolution_us), per CoverageReason.
  std::array<std::size_t, kCoverageReasons> banded{};
  std::array<std::size_t, kCoverageReasons> inside_band{};

  double error_pct() const noexcept;
  // Share of banded kernels inside their band in percent (all of them, or those of one
  // reason); NaN when no kernel carries a band.
  double band_coverage_pct() const noexcept;
  double band_coverage_pct(CoverageReason reason) const noexcept;
};

struct RunSummary {
  std::vector<std::string> targets;
  std::vector<FamilySummary> families;  // by measured time, then predicted time, descending
  std::vector<TargetSummary> per_target;
  std::vector<RankSummary> per_rank;
  Accuracy accuracy;
  std::size_t kernels = 0;
  std::size_t measured_kernels = 0;
  double measured_us = 0;
  double measured_span_us = 0;
};

// `family_filter`: only kernels of this family count (kUnknown with filter=false: all).
RunSummary summarize(const RunTable& table);

// The GPUs the run's ranks ran on, each once, in rank order: one for a run on one GPU model,
// several for ranks on different models or a process that drove two. What a report names as
// the run's GPU, and what its accuracy line compares each kernel with.
std::vector<std::string> rank_gpus(const RunSummary& s);

// Whether a row counts as communication (collective family or flagged by the predictor).
bool is_communication(const RunTable& table, std::size_t row);

}  // namespace pm2lat::reports
