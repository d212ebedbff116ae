// The long-tail kernel families on the public traces (PM2LAT_DATA_DIR; skipped without them)
// replayed with the shipped profiles: every kernel lands in a dedicated model and the
// families stay near the measurement. The family fits were calibrated on these traces, so the
// bounds catch breakage, not progress (out-of-sample figures: predictor/MODELS.md).
#include <gtest/gtest.h>

#include <string>

#include "pm2lat/predictor.h"
#include "pm2lat/reports/replay/trace_replay.h"
#include "pm2lat/test/measurement_data.h"

namespace pm2lat::reports {
namespace {

TraceReplay replay(const std::filesystem::path& trace, Predictor& predictor) {
  ReplayOptions o;
  o.targets = {"H100-SXM"};
  return replay_trace(trace, predictor, o);
}

const FamilySummary* family(const TraceReplay& r, KernelFamily f) {
  for (const auto& s : r.summary.families) {
    if (s.family == f) return &s;
  }
  return nullptr;
}

TEST(LongTailReplay, Vgg13OnH100LandsInDedicatedModels) {
  const char* const relative = "traces/triosim_vgg13_iter41.json.gz";
  const auto trace = test::measurement_file(relative);
  if (!trace) GTEST_SKIP() << test::missing_measurements(relative);
  Predictor predictor = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  const TraceReplay r = replay(*trace, predictor);
  ASSERT_TRUE(r.summary.accuracy.available);
  // Covered: a dedicated model inside its calibrated range. A few cuDNN configurations of
  // this run are calibrated nowhere and run on their math path's class fit (extrapolated).
  EXPECT_GE(r.summary.accuracy.coverage_pct, 95.0);
  EXPECT_LT(r.summary.accuracy.error_pct(), 20.0);
  for (KernelFamily f : {KernelFamily::kConv, KernelFamily::kCopy, KernelFamily::kReduction}) {
    const FamilySummary* s = family(r, f);
    ASSERT_NE(s, nullptr) << to_string(f);
    EXPECT_GE(s->covered_us, 0.9 * s->own_measured_us) << to_string(f);
    EXPECT_LT(s->error_pct(), 25.0) << to_string(f);
  }
}

TEST(LongTailReplay, CollectivesAreCommunicationAndAttentionIsModelled) {
  const char* const nccl_trace = "traces/hta_nccl_data.json.gz";
  const char* const bert_trace = "traces/tracelens_h100_bert-small.json.gz";
  const auto nccl_file = test::measurement_file(nccl_trace);
  if (!nccl_file) GTEST_SKIP() << test::missing_measurements(nccl_trace);
  const auto bert_file = test::measurement_file(bert_trace);
  if (!bert_file) GTEST_SKIP() << test::missing_measurements(bert_trace);
  Predictor predictor = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  const TraceReplay nccl = replay(*nccl_file, predictor);
  const FamilySummary* c = family(nccl, KernelFamily::kCollective);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->communication);
  EXPECT_GT(nccl.summary.accuracy.communication_us, 0);

  const TraceReplay bert = replay(*bert_file, predictor);
  const FamilySummary* a = family(bert, KernelFamily::kAttention);
  ASSERT_NE(a, nullptr);
  // A dedicated model (not the roofline fallback); FA2 on an H100 borrows the A100's
  // calibration at another head dimension, so it is not counted as covered.
  const std::size_t own = bert.table.target_index(bert.gpu);
  ASSERT_NE(own, RunTable::npos);
  EXPECT_EQ(a->fallback[own], 0u);
  EXPECT_LT(a->error_pct(), 50.0);
}

}  // namespace
}  // namespace pm2lat::reports
