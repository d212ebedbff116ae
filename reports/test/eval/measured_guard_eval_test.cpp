// The measurement guard judged on the real kernel table (PM2LAT_DATA_DIR): NeuSight's rows
// split by shape as scripts/eval-guard.sh splits them (profiles from 80 % of the shapes; the
// held-out 20 % halved, the guard's factor chosen on one half), scored on the half nobody
// chose anything on, convolutions aside (their fits come from a separate import; the script
// scores them). Per GPU pair: the guard raises neither the mean nor the 95th-percentile error,
// and a pair it never touched keeps the model's forecasts. (With convolutions, the script's
// report half has 6 pairs whose mean the guard raises: predictor/MODELS.md.)
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/calibrate/profile_builder.h"
#include "pm2lat/reports/eval/kernel_eval.h"
#include "pm2lat/test/measurement_data.h"

namespace pm2lat::reports {
namespace {

// The splits of scripts/eval-kernels.sh and scripts/eval-guard.sh (pm2lat-calibrate split).
constexpr double kHeldOutShare = 0.2;
constexpr unsigned kHeldOutSeed = 0;
constexpr double kReportShare = 0.5;
constexpr unsigned kReportSeed = 2;

TEST(MeasuredGuardEval, RaisesNoPairsMeanOrP95OnTheReportHalf) {
  const char* const relative = "neusight/kernels.csv.gz";
  const auto file = test::measurement_file(relative);
  if (!file) GTEST_SKIP() << test::missing_measurements(relative);
  const DeviceCatalogue catalogue =
      DeviceCatalogue::load(std::string(PM2LAT_SHIPPED_PROFILES) + "/devices.json");
  const auto calls = calibrate::read_neusight_kernels(calibrate::CsvTable::read(*file));
  std::map<std::string, std::vector<const calibrate::MeasuredCall*>> train;
  std::vector<calibrate::MeasuredCall> report;
  for (const auto& c : calls) {
    const DeviceSpec* spec = catalogue.find(c.device);
    if (spec == nullptr) continue;
    if (!calibrate::in_holdout(c.shape_key, kHeldOutShare, kHeldOutSeed)) {
      train[spec->name].push_back(&c);
    } else if (calibrate::in_holdout(c.shape_key, kReportShare, kReportSeed) && c.op != "conv") {
      // Convolutions need the separate conv import (import-conv): the script scores them.
      report.push_back(c);
    }
  }
  ASSERT_GE(train.size(), 8u);
  std::vector<Profile> profiles;
  profiles.reserve(train.size());
  for (const auto& [device, rows] : train) {
    profiles.push_back(calibrate::build_profile(rows, catalogue.resolve(device), {}));
  }
  Predictor predictor(catalogue, std::move(profiles));
  const CrossEvalResult r = eval_kernels_cross(predictor, report, "all", "all", false,
                                               CrossGrouping::kByOp, GuardPolicy{});
  ASSERT_TRUE(r.guarded);
  ASSERT_GE(r.totals.size(), 56u);  // 8 GPUs, every ordered pair
  std::size_t anchored = 0;
  for (const CrossGroup& g : r.totals) {
    EXPECT_FALSE(guard_raises_mean(g))
        << g.source << " -> " << g.target << ": mean " << g.error.mape_pct << " % with the guard, "
        << g.model_only.mape_pct << " % without";
    EXPECT_LE(g.error.p95_ape_pct, g.model_only.p95_ape_pct) << g.source << " -> " << g.target;
    anchored += g.anchored;
    // A pair the guard never touched is the model's forecast, row for row.
    if (g.anchored == 0) {
      EXPECT_DOUBLE_EQ(g.error.mape_pct, g.model_only.mape_pct);
    }
  }
  RecordProperty("anchored", static_cast<int>(anchored));
}

}  // namespace
}  // namespace pm2lat::reports
