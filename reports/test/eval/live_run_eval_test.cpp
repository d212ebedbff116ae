// `eval models --source A --target B`: the live-run pairs.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "pm2lat/calibrate/neusight_models.h"
#include "pm2lat/reports/eval/live_run_eval.h"
#include "pm2lat/reports/eval/model_eval.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

// The toy runs (test_support.h) and the shipped profiles.
struct LiveRunEval : ::testing::Test {
  std::filesystem::path dir = test::write_toy_model_runs("live_run");
  Predictor p = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  std::vector<calibrate::ModelRun> runs = calibrate::load_model_runs(dir);
  void TearDown() override { std::filesystem::remove_all(dir); }
};

TEST_F(LiveRunEval, ForecastsEachGpuThatMeasuredTheSameRunFromAnothersRecords) {
  const auto all = eval_live_runs(p, runs, "all", "all");
  // The T4 measured the batch-8 run the V100's records describe; nothing else pairs (the T4
  // has no records, the batch-16 run no partner).
  ASSERT_EQ(all.pairs.size(), 1u);
  const auto& pair = all.pairs[0];
  EXPECT_EQ(pair.source, "V100-PCIE-32GB");
  EXPECT_EQ(pair.target, "T4");
  EXPECT_DOUBLE_EQ(pair.measured_ms, 60.0);
  // The same records replayed on the T4 as on its own: the forecast does not use the V100's
  // times yet, and the T4 is slower than the V100 at every kernel.
  const auto own = eval_models(p, runs);
  EXPECT_GT(pair.predicted_ms, own.runs.at(0).predicted_ms);
  EXPECT_EQ(all.by_pair.size(), 1u);
  EXPECT_TRUE(eval_live_runs(p, runs, "T4", "all").pairs.empty());
  EXPECT_EQ(eval_live_runs(p, runs, "V100-PCIE-32GB", "T4").pairs.size(), 1u);
  EXPECT_THROW(eval_live_runs(p, runs, "T44", "all"), UnknownDeviceError);
  const auto j = live_runs_json(all);
  for (const char* key : {"source", "target", "model", "mode", "seqlen", "batch", "measured_ms",
                          "predicted_ms", "error_pct"})
    EXPECT_TRUE(j["pairs"][0].contains(key)) << key;
  EXPECT_EQ(j["overall"]["pairs"], 1);
  EXPECT_TRUE(j["overall"].contains("mean_error_pct"));
  EXPECT_TRUE(j["overall"].contains("median_error_pct"));
  EXPECT_FALSE(j["pairs"][0].contains("classes"));
}

TEST_F(LiveRunEval, ByClassSplitsEachPairsForecastAgainstTheTargetsOwnOperatorFile) {
  const auto all = eval_live_runs(p, runs, "all", "all");
  ASSERT_EQ(all.pairs.size(), 1u);
  double forecast_ms = 0;
  for (const ClassTotals& c : all.pairs[0].classes) {
    forecast_ms += c.predicted_ms;
    // The labels are the T4's, which has no operator file: the V100's never stand in.
    EXPECT_EQ(c.labelled_ms, 0.0);
  }
  EXPECT_GT(forecast_ms, 0.0);
  EXPECT_LE(forecast_ms, all.pairs[0].predicted_ms * 1.000001);
  const auto j = live_runs_json(all, true);
  ASSERT_TRUE(j["pairs"][0].contains("classes"));
  EXPECT_GT(j["pairs"][0]["classes"]["gemm"]["predicted_ms"].get<double>(), 0.0);
}

}  // namespace
}  // namespace pm2lat::reports
