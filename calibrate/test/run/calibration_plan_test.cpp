#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "pm2lat/calibrate/run/calibration_plan.h"
#include "pm2lat/calibrate/run/measurement_cost.h"
#include "pm2lat/device_catalogue.h"

namespace pm2lat::calibrate::run {
namespace {

DeviceSpec h100() {
  return DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json").resolve("H100");
}

std::size_t count(const CalibrationPlan& p, TaskKind k) {
  std::size_t n = 0;
  for (const auto& t : p.tasks) n += t.kind == k;
  return n;
}

TEST(CalibrationPlan, FullFp32Bf16PlanForH100FitsHalfAnHour) {
  PlanOptions o;
  o.dtypes = {DType::kFp32, DType::kBf16};
  o.budget_s = 30 * 60;
  const CalibrationPlan p = plan_calibration(h100(), o);
  EXPECT_LE(p.estimated_s(), 30 * 60);
  EXPECT_EQ(p.density, "fine");  // the densest grid fits
  EXPECT_EQ(p.options.reps, 20);
  // Per dtype: 3 layouts x 16^3 shapes, plus 3 batch counts x 6 x 6 batched shapes.
  EXPECT_EQ(count(p, TaskKind::kGemm), 2u * (3 * 16 * 16 * 16 + 3 * 6 * 6));
  EXPECT_EQ(count(p, TaskKind::kLaunch), 1u);
  EXPECT_GT(count(p, TaskKind::kMemory), 0u);
  EXPECT_GT(count(p, TaskKind::kGemmCandidates), 0u);
  EXPECT_GT(p.fill_tasks_estimate, 0u);
  EXPECT_EQ(p.tasks.front().kind, TaskKind::kLaunch);  // the gap the others are corrected by
  std::set<std::string> ids;
  for (const auto& t : p.tasks) {
    EXPECT_TRUE(ids.insert(t.id).second) << t.id;
    EXPECT_GT(t.estimated_us, 0) << t.id;
  }
}

TEST(CalibrationPlan, ASmallerBudgetBuysACheaperPlan) {
  PlanOptions o;
  o.dtypes = {DType::kFp32, DType::kBf16};
  o.budget_s = 30 * 60;
  const CalibrationPlan full = plan_calibration(h100(), o);
  o.budget_s = 5 * 60;
  const CalibrationPlan small = plan_calibration(h100(), o);
  EXPECT_LE(small.estimated_s(), 5 * 60);
  EXPECT_LT(small.estimated_s(), full.estimated_s());
  EXPECT_TRUE(small.density != full.density || small.options.reps < full.options.reps);
  // Nothing fits one second: the cheapest plan, flagged as over budget.
  o.budget_s = 1;
  const CalibrationPlan tiny = plan_calibration(h100(), o);
  EXPECT_EQ(tiny.density, "coarse");
  EXPECT_EQ(tiny.options.reps, 5);
  EXPECT_NE(describe_plan(tiny).find("exceeds the budget"), std::string::npos);
}

TEST(CalibrationPlan, Fp8RunsTheLinearLayoutOnly) {
  PlanOptions o;
  o.dtypes = {DType::kFp8E4M3};
  o.dims = {256, 1024};
  const CalibrationPlan p = plan_calibration(h100(), o);
  ASSERT_EQ(count(p, TaskKind::kGemm), 8u);
  for (const auto& t : p.tasks) {
    if (t.kind == TaskKind::kGemm) {
      EXPECT_EQ(t.gemm.layout, GemmLayout::kLinear);
    }
  }
}

TEST(CalibrationPlan, OperandsRotateOverMoreThanTwiceL2) {
  const DeviceSpec spec = h100();
  const double l2 = spec.l2_mb * 1024 * 1024;
  for (std::int64_t d : {64, 512, 4096, 16384}) {
    const GemmProblem p{DType::kBf16, GemmLayout::kLinear, 1, d, d, d};
    const TimingPolicy t = gemm_timing(p, spec, 20);
    ASSERT_GE(t.rotation_sets, 1);
    ASSERT_LE(t.rotation_sets, t.launches);
    // Either every launch of a repetition has its own set (the L2 scrub ahead of the
    // repetition evicts them all), or a set comes back after more than 2x L2 of others.
    if (t.rotation_sets < t.launches) {
      EXPECT_GE((t.rotation_sets - 1) * gemm_footprint_bytes(p), 2 * l2) << d;
    }
  }
  // Short kernels are batched up to the repetition target; long ones run alone, fewer times.
  const TimingPolicy small =
      gemm_timing(GemmProblem{DType::kBf16, GemmLayout::kLinear, 1, 64, 64, 64}, spec, 20);
  const TimingPolicy big =
      gemm_timing(GemmProblem{DType::kFp32, GemmLayout::kLinear, 1, 16384, 16384, 16384}, spec, 20);
  EXPECT_GT(small.launches, 10);
  EXPECT_EQ(big.launches, 1);
  EXPECT_LT(big.reps, small.reps);
  EXPECT_GE(big.reps, kCostConstants.min_reps);
}

TEST(CalibrationPlan, MemoryCurvesSpanL2ResidentToFourTimesL2) {
  const DeviceSpec spec = h100();
  PlanOptions o;
  o.dtypes = {DType::kBf16};
  o.dims = {256};
  const CalibrationPlan p = plan_calibration(spec, o);
  const double l2 = spec.l2_mb * 1024 * 1024;
  double lo = 1e30, hi = 0;
  std::set<MemoryPattern> patterns;
  for (const auto& t : p.tasks) {
    if (t.kind != TaskKind::kMemory) continue;
    const double bytes = t.memory.bytes_read() + t.memory.bytes_written();
    lo = std::min(lo, bytes);
    hi = std::max(hi, bytes);
    patterns.insert(t.memory.pattern);
    EXPECT_EQ(t.timing.rotation_sets, 1);
  }
  EXPECT_EQ(patterns.size(), 3u);
  EXPECT_NEAR(lo / l2, 1.0 / 8, 0.02);
  EXPECT_NEAR(hi / l2, 4.0, 0.1);
}

TEST(CalibrationPlan, DescribesItsParts) {
  PlanOptions o;
  o.dims = {256, 1024};
  const std::string text = describe_plan(plan_calibration(h100(), o));
  for (const char* part : {"launch overhead", "memory bandwidth curves", "gemm fp32 survey",
                           "gemm bf16 survey", "gemm fill (estimate)", "total"}) {
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << text;
  }
}

TEST(Durations, ParseAndFormat) {
  EXPECT_DOUBLE_EQ(parse_duration_s("30m"), 1800);
  EXPECT_DOUBLE_EQ(parse_duration_s("1h30m"), 5400);
  EXPECT_DOUBLE_EQ(parse_duration_s("90s"), 90);
  EXPECT_DOUBLE_EQ(parse_duration_s("45"), 2700);
  EXPECT_DOUBLE_EQ(parse_duration_s("1.5h"), 5400);
  for (const char* bad : {"", "abc", "10x", "5m3", "-3m"})
    EXPECT_THROW(parse_duration_s(bad), std::invalid_argument) << bad;
  EXPECT_EQ(format_duration(45), "45s");
  EXPECT_EQ(format_duration(750), "12m30s");
  EXPECT_EQ(format_duration(3900), "1h05m");
}

TEST(Dtypes, ParseTheIssueSpelling) {
  const auto t = parse_dtype_list("fp32,tf32,bf16,fp16,fp8");
  EXPECT_EQ(t, (std::vector<DType>{DType::kFp32, DType::kTf32, DType::kBf16, DType::kFp16,
                                   DType::kFp8E4M3}));
  EXPECT_THROW(parse_dtype_list("fp32,int4"), std::invalid_argument);
  EXPECT_THROW(parse_layout_list("linear,nt"), std::invalid_argument);
}

}  // namespace
}  // namespace pm2lat::calibrate::run
