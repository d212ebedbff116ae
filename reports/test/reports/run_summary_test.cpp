#include <gtest/gtest.h>

#include "pm2lat/reports/predicted_timeline.h"
#include "pm2lat/reports/run_summary.h"
#include "support/run_fixture.h"

namespace pm2lat::reports {
namespace {

const FamilySummary* family(const RunSummary& s, KernelFamily f) {
  for (const auto& x : s.families) {
    if (x.family == f) return &x;
  }
  return nullptr;
}

TEST(RunSummary, AccuracyAndCoverageOnTheOwnGpuLeaveCommunicationOut) {
  const RunTable t = test::fixture_run(test::standard_kernels());
  const RunSummary s = summarize(t);
  ASSERT_TRUE(s.accuracy.available);
  EXPECT_EQ(s.accuracy.kernels, 3u) << "the NCCL kernel is not compared";
  EXPECT_DOUBLE_EQ(s.accuracy.measured_us, 250);
  EXPECT_DOUBLE_EQ(s.accuracy.predicted_us, 260);
  EXPECT_NEAR(s.accuracy.error_pct(), 4.0, 1e-9);
  EXPECT_NEAR(s.accuracy.coverage_pct, 200.0 / 250.0 * 100.0, 1e-9)
      << "the fallback kernel is not covered";
  EXPECT_DOUBLE_EQ(s.accuracy.communication_us, 400);
  EXPECT_NEAR(s.accuracy.per_kernel.mape_pct, (10.0 + 10.0 + 20.0) / 3.0, 1e-9);
}

TEST(RunSummary, UncoveredTimeIsKeptByItsFirstReason) {
  RunTable t;
  t.add_target("H100-SXM");
  RankInfo r;
  r.gpu = "H100-SXM";
  t.add_rank(r);
  using namespace prediction_flags;
  const std::pair<double, std::uint32_t> kernels[] = {
      {100, 0},                        // covered
      {50, kFallback | kClamped},      // a fallback first
      {30, kNoShape | kExtrapolated},  // no shape before extrapolated
      {20, kClamped},
      {10, kSpecScaled},  // a dedicated model carried from another GPU still covers
  };
  for (const auto& [us, flags] : kernels) {
    const std::size_t row = t.add_kernel("k", KernelFamily::kElementwise, 0, 1, 0, us);
    t.set_prediction(row, 0, test::prediction(us, flags));
  }
  const RunSummary s = summarize(t);
  auto at = [&](CoverageReason reason) {
    return s.accuracy.reason_us[static_cast<std::size_t>(reason)];
  };
  EXPECT_DOUBLE_EQ(at(CoverageReason::kCovered), 110);
  EXPECT_DOUBLE_EQ(at(CoverageReason::kFallback), 50);
  EXPECT_DOUBLE_EQ(at(CoverageReason::kNoShape), 30);
  EXPECT_DOUBLE_EQ(at(CoverageReason::kClamped), 20);
  EXPECT_DOUBLE_EQ(at(CoverageReason::kExtrapolated), 0);
  EXPECT_NEAR(s.accuracy.coverage_pct, 110.0 / 210.0 * 100.0, 1e-9);
  EXPECT_EQ(to_string(coverage_reason(kAnchored | kShapeRejected)), "anchored");
}

TEST(RunSummary, FamiliesAndTargetsAddUp) {
  const RunTable t = test::fixture_run(test::standard_kernels());
  const RunSummary s = summarize(t);
  ASSERT_EQ(s.families.size(), 3u);
  EXPECT_EQ(s.families.front().family, KernelFamily::kCollective) << "sorted by measured time";
  const FamilySummary* gemm = family(s, KernelFamily::kGemm);
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->kernels, 2u);
  EXPECT_DOUBLE_EQ(gemm->error_pct(), 0.0);
  EXPECT_DOUBLE_EQ(gemm->predicted_us[1], 400);
  EXPECT_TRUE(family(s, KernelFamily::kCollective)->communication);
  EXPECT_EQ(family(s, KernelFamily::kElementwise)->fallback[0], 1u);
  ASSERT_EQ(s.per_target.size(), 2u);
  EXPECT_DOUBLE_EQ(s.per_target[0].predicted_us, 90 + 110 + 60 + 30);
  EXPECT_DOUBLE_EQ(s.per_target[1].predicted_us, 200 + 200 + 80 + 40);
  EXPECT_FALSE(s.per_target[0].spec_scaled);
  EXPECT_TRUE(s.per_target[1].spec_scaled) << "every A100 prediction was spec-scaled";
  EXPECT_DOUBLE_EQ(s.measured_us, 650);
}

TEST(RunSummary, NoOwnGpuColumnMeansNoAccuracy) {
  RunTable t;
  t.add_target("A100-SXM");
  RankInfo r;
  r.gpu = "H100-SXM";
  t.add_rank(r);
  const std::size_t row = t.add_kernel("k", KernelFamily::kGemm, 0, 1, 0, 10.0);
  t.set_prediction(row, 0, test::prediction(20, 0));
  const RunSummary s = summarize(t);
  EXPECT_FALSE(s.accuracy.available);
  EXPECT_DOUBLE_EQ(s.per_target[0].predicted_us, 20);
}

TEST(PredictedTimeline, QueuedKernelsCompressHostGapsStay) {
  using F = KernelFamily;
  // Stream 7: two back-to-back kernels, then one that waited 300 µs for the host.
  const RunTable t = test::fixture_run({
      {"a", F::kGemm, 0, 7, 0, 100, 50, 200},
      {"b", F::kGemm, 0, 7, 100, 100, 50, 200},
      {"c", F::kGemm, 0, 7, 500, 100, 50, 200},
  });
  const Timeline fast = layout_timeline(t, 0);
  EXPECT_DOUBLE_EQ(fast.start_us[1], 50) << "a queued kernel starts when its predecessor ends";
  EXPECT_DOUBLE_EQ(fast.start_us[2], 500)
      << "a kernel launched late by the host cannot start earlier";
  EXPECT_DOUBLE_EQ(fast.span_us, 550);
  const Timeline slow = layout_timeline(t, 1);
  EXPECT_DOUBLE_EQ(slow.start_us[1], 200);
  EXPECT_DOUBLE_EQ(slow.start_us[2], 500) << "400 µs of GPU work ends before the host launches c";
  EXPECT_DOUBLE_EQ(slow.span_us, 700);
  const Timeline measured = layout_timeline(t, RunTable::npos);
  EXPECT_DOUBLE_EQ(measured.span_us, 600);
}

TEST(PredictedTimeline, StreamsRunSideBySideAndRanksEachStartAtZero) {
  using F = KernelFamily;
  const RunTable t = test::fixture_run(
      {
          {"a", F::kGemm, 0, 7, 0, 100, 100, 100},
          {"b", F::kGemm, 0, 8, 0, 300, 300, 300},
          {"c", F::kGemm, 1, 7, 1000000, 100, 150, 100},
      },
      2);
  const Timeline tl = layout_timeline(t, 0);
  EXPECT_DOUBLE_EQ(tl.rank_span_us[0], 300);
  EXPECT_DOUBLE_EQ(tl.rank_span_us[1], 150);
  EXPECT_DOUBLE_EQ(tl.span_us, 300) << "the slowest rank sets the step time";
  const RunSummary s = summarize(t);
  ASSERT_EQ(s.per_rank.size(), 2u);
  EXPECT_DOUBLE_EQ(s.per_rank[1].predicted_span_us[0], 150);
  EXPECT_DOUBLE_EQ(s.per_target[0].span_us, 300);
}

TEST(RunTable, TargetsAddedLaterKeepEarlierPredictions) {
  RunTable t;
  t.add_target("H100-SXM");
  RankInfo r;
  r.gpu = "L4";
  t.add_rank(r);
  const std::size_t row = t.add_kernel("k", KernelFamily::kGemm, 0, 1, 0, std::nullopt);
  t.set_prediction(row, 0, test::prediction(5, 0));
  EXPECT_EQ(t.own_target(row), RunTable::npos);
  const std::size_t l4 = t.add_target("L4");
  EXPECT_EQ(t.own_target(row), l4) << "the rank's own GPU became a column";
  EXPECT_DOUBLE_EQ(t.predicted_us(row, 0), 5);
  EXPECT_TRUE(std::isnan(t.predicted_us(row, l4)));
  EXPECT_FALSE(t.kernels()[row].measured());
}

}  // namespace
}  // namespace pm2lat::reports
