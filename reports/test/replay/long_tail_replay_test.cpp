// The long-tail kernel families on shipped traces replayed with the shipped profiles: every
// kernel lands in a dedicated model and the families stay near the measurement. The family
// fits were calibrated on these traces, so the bounds catch breakage, not progress
// (out-of-sample figures: predictor/MODELS.md).
#include <gtest/gtest.h>

#include <string>

#include "pm2lat/predictor.h"
#include "pm2lat/reports/replay/trace_replay.h"

namespace pm2lat::reports {
namespace {

const std::string kTraces = std::string(PM2LAT_SHIPPED_PROFILES) + "/../measurements/traces/";

TraceReplay replay(const std::string& name, Predictor& predictor) {
  ReplayOptions o;
  o.targets = {"H100-SXM"};
  return replay_trace(kTraces + name, predictor, o);
}

const FamilySummary* family(const TraceReplay& r, KernelFamily f) {
  for (const auto& s : r.summary.families) {
    if (s.family == f) return &s;
  }
  return nullptr;
}

TEST(LongTailReplay, Vgg13OnH100LandsInDedicatedModels) {
  Predictor predictor = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  const TraceReplay r = replay("triosim_vgg13_iter41.json.gz", predictor);
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
  Predictor predictor = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  const TraceReplay nccl = replay("hta_nccl_data.json.gz", predictor);
  const FamilySummary* c = family(nccl, KernelFamily::kCollective);
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->communication);
  EXPECT_GT(nccl.summary.accuracy.communication_us, 0);

  const TraceReplay bert = replay("tracelens_h100_bert-small.json.gz", predictor);
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
