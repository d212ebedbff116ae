#include "pm2lat/measured_guard.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "pm2lat/classifier.h"
#include "pm2lat/device_catalogue.h"

namespace pm2lat {
namespace {

using guard_constants::kDisagreementFactor;
using guard_constants::kUnmodelledFactor;

Prediction predicted(double us, std::uint32_t flags = 0) {
  Prediction p;
  p.us = us;
  p.model = ModelKind::kGemmWave;
  p.flags = flags;
  return p;
}

GuardInput gemm_measured(double measured, double source_predicted) {
  GuardInput in;
  in.measured_us = measured;
  in.source = predicted(source_predicted);
  in.family = KernelFamily::kGemm;
  return in;
}

TEST(MeasuredGuardTest, AgreementWithinTheFactorLeavesForecastsAlone) {
  const GuardVerdict v = judge_measurement(gemm_measured(100 * kDisagreementFactor * 0.99, 100));
  EXPECT_EQ(v.reason, GuardReason::kAgrees);
  const Prediction target = predicted(40, prediction_flags::kConfigChosen);
  const Prediction f = guarded_forecast(v, target, false);
  EXPECT_DOUBLE_EQ(f.us, 40);
  EXPECT_EQ(f.flags, prediction_flags::kConfigChosen);
}

TEST(MeasuredGuardTest, SlowerThanTheFactorAnchorsOtherGpus) {
  const GuardVerdict v = judge_measurement(gemm_measured(100 * kDisagreementFactor * 1.01, 100));
  EXPECT_EQ(v.reason, GuardReason::kDisagrees);
  EXPECT_DOUBLE_EQ(v.scale, kDisagreementFactor * 1.01);
  const Prediction f = guarded_forecast(v, predicted(40, prediction_flags::kExtrapolated), false);
  // measured x target / source
  EXPECT_DOUBLE_EQ(f.us, 100 * kDisagreementFactor * 1.01 * 40 / 100);
  EXPECT_TRUE(f.has(prediction_flags::kAnchored));
  EXPECT_TRUE(f.has(prediction_flags::kExtrapolated));  // the target's own flags stay
  EXPECT_EQ(f.model, ModelKind::kGemmWave);
}

TEST(MeasuredGuardTest, ATargetRunningAConfigurationOfItsOwnIsNotAnchored) {
  const GuardVerdict v = judge_measurement(gemm_measured(1000, 100));
  ASSERT_TRUE(v.anchors());
  const Prediction f = guarded_forecast(v, predicted(40, prediction_flags::kConfigChosen), false);
  EXPECT_DOUBLE_EQ(f.us, 40);
  EXPECT_FALSE(f.has(prediction_flags::kAnchored));
}

TEST(MeasuredGuardTest, CallTimesAreComparedAndScaledOnTheirDevicePart) {
  // Predicted call 100 us = 20 dispatch + 80 kernel; measured 420 = 20 + 400: the kernel took
  // 5x what the model said.
  GuardInput in = gemm_measured(420, 100);
  in.source_host_us = 20;
  const GuardVerdict v = judge_measurement(in, GuardPolicy::with_factor(4));
  EXPECT_EQ(v.reason, GuardReason::kDisagrees);
  EXPECT_DOUBLE_EQ(v.scale, 5);
  // The target's call: 10 us dispatch + 30 us kernel -> 10 + 5 x 30.
  EXPECT_DOUBLE_EQ(guarded_forecast(v, predicted(40), false, 10).us, 160);
  // A call the model expects to be mostly dispatch is not judged: its measurement says
  // little about its kernels.
  GuardInput host_bound = gemm_measured(420, 100);
  host_bound.source_host_us = 100 / (1 + guard_constants::kMinDeviceToHost) + 1;
  EXPECT_EQ(judge_measurement(host_bound).reason, GuardReason::kHostBound);
  // Measured within the dispatch alone: nothing left to compare.
  GuardInput within = gemm_measured(15, 100);
  within.source_host_us = 20;
  EXPECT_EQ(judge_measurement(within).reason, GuardReason::kHostBound);
}

TEST(MeasuredGuardTest, FasterThanTheFactorAnchorsToo) {
  const GuardVerdict v = judge_measurement(gemm_measured(100 / kDisagreementFactor * 0.99, 100));
  EXPECT_EQ(v.reason, GuardReason::kDisagrees);
  const Prediction f = guarded_forecast(v, predicted(40), false);
  EXPECT_NEAR(f.us, 40 / kDisagreementFactor * 0.99, 1e-9);
  EXPECT_TRUE(f.has(prediction_flags::kAnchored));
}

TEST(MeasuredGuardTest, TheSourceGpuItselfIsNeverAnchored) {
  const GuardInput in = gemm_measured(1000, 100);
  const GuardVerdict v = judge_measurement(in);
  ASSERT_TRUE(v.anchors());
  const Prediction own = guarded_forecast(v, in.source, true);
  EXPECT_DOUBLE_EQ(own.us, 100);  // the model's, not the measurement
  EXPECT_FALSE(own.has(prediction_flags::kAnchored));
}

TEST(MeasuredGuardTest, NothingMeasuredOrNothingPredictedDecidesNothing) {
  EXPECT_EQ(judge_measurement(gemm_measured(0, 100)).reason, GuardReason::kNoMeasure);
  EXPECT_EQ(judge_measurement(gemm_measured(100, 0)).reason, GuardReason::kNoMeasure);
  EXPECT_EQ(judge_measurement(gemm_measured(std::numeric_limits<double>::infinity(), 1)).reason,
            GuardReason::kNoMeasure);
  const GuardVerdict v = judge_measurement(gemm_measured(-5, 100));
  EXPECT_FALSE(v.anchors());
  EXPECT_DOUBLE_EQ(guarded_forecast(v, predicted(7), false).us, 7);
}

TEST(MeasuredGuardTest, MeasuredFasterThanPhysicsAllowsAnchorsEvenWithinTheFactor) {
  GuardInput in = gemm_measured(90, 100);  // agrees within any factor
  in.source_lower_us = 95;                 // but the assumed work cannot move in 90 us
  const GuardVerdict v = judge_measurement(in);
  EXPECT_EQ(v.reason, GuardReason::kBelowPhysics);
  EXPECT_TRUE(guarded_forecast(v, predicted(50), false).has(prediction_flags::kAnchored));
  // A shape the predictor rejected is not the work it priced: its bound does not count.
  in.source.flags |= prediction_flags::kShapeRejected;
  EXPECT_EQ(judge_measurement(in).reason, GuardReason::kAgrees);
}

TEST(MeasuredGuardTest, UnknownFallbackAndShapelessKernelsTakeTheUnmodelledFactor) {
  const GuardPolicy policy{.factor = 4, .unmodelled_factor = 1.2};
  GuardInput known = gemm_measured(150, 100);
  EXPECT_EQ(judge_measurement(known, policy).reason, GuardReason::kAgrees);
  GuardInput unknown = known;
  unknown.family = KernelFamily::kUnknown;
  EXPECT_EQ(judge_measurement(unknown, policy).reason, GuardReason::kDisagrees);
  GuardInput fallback = known;
  fallback.source.flags = prediction_flags::kFallback;
  EXPECT_EQ(judge_measurement(fallback, policy).reason, GuardReason::kDisagrees);
  GuardInput shapeless = known;
  shapeless.source.flags = prediction_flags::kNoShape;
  EXPECT_EQ(judge_measurement(shapeless, policy).reason, GuardReason::kDisagrees);
  // The shipped constants: the unmodelled kernels are guarded at least as tightly.
  EXPECT_LE(kUnmodelledFactor, kDisagreementFactor);
  EXPECT_GT(kDisagreementFactor, 1.0);
}

TEST(MeasuredGuardTest, TimeRatioRangeSpansTheGpusBandwidthIssueRateAndFp32RatiosAndOne) {
  const DeviceCatalogue cat =
      DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  const DeviceSpec& a100_40 = cat.resolve("A100-SXM4-40GB");
  const DeviceSpec& a100_80 = cat.resolve("A100-SXM");
  const DeviceSpec& h100 = cat.resolve("H100");
  // The same SMs, clock and FP32 units; more bandwidth: no slower, at most the bandwidth's
  // gain faster.
  const GpuTimeRatioRange same_die = time_ratio_range(a100_40, a100_80);
  EXPECT_DOUBLE_EQ(same_die.hi, 1.0);
  EXPECT_DOUBLE_EQ(same_die.lo, a100_40.mem_bw_gbps / a100_80.mem_bw_gbps);
  // A GPU larger in every respect: no slower (a latency-bound kernel), at most its largest
  // gain faster.
  const GpuTimeRatioRange up = time_ratio_range(a100_40, h100);
  EXPECT_DOUBLE_EQ(up.hi, 1.0);
  EXPECT_DOUBLE_EQ(up.lo, a100_40.fp32_tflops / h100.fp32_tflops);
  // And back: the inverse ratios.
  const GpuTimeRatioRange down = time_ratio_range(h100, a100_40);
  EXPECT_DOUBLE_EQ(down.lo, 1.0);
  EXPECT_DOUBLE_EQ(down.hi, 1 / up.lo);
  const GpuTimeRatioRange unknown = time_ratio_range(&h100, nullptr);
  EXPECT_EQ(unknown.lo, 0);
  EXPECT_TRUE(std::isinf(unknown.hi));
}

TEST(MeasuredGuardTest, AnAnchoredForecastStaysWithinWhatTheTwoGpusAllow) {
  // A split-K reduction measured at 15 us where the source model says 1.5 (a launch floor of
  // one table); the target's model says 3.1 (another table's floor). Its ratio, 2.07, would
  // put the kernel at 31 us on a GPU at least as large in every respect.
  const GuardVerdict v = judge_measurement(gemm_measured(15, 1.5));
  ASSERT_TRUE(v.anchors());
  const GpuTimeRatioRange range{0.76, 1.0};
  const Prediction capped = guarded_forecast(v, predicted(3.1), false, 0, range);
  EXPECT_DOUBLE_EQ(capped.us, 15 * range.hi);
  EXPECT_TRUE(capped.has(prediction_flags::kAnchored));
  // Too fast for the range is raised to its low end.
  EXPECT_DOUBLE_EQ(guarded_forecast(v, predicted(0.3), false, 0, range).us, 15 * range.lo);
  // Within it, the model's ratio stands: measured x target / source.
  EXPECT_DOUBLE_EQ(guarded_forecast(v, predicted(1.35), false, 0, range).us, 15 * 1.35 / 1.5);
  // Without a range, the model's ratio alone.
  EXPECT_DOUBLE_EQ(guarded_forecast(v, predicted(3.1), false).us, 15 * 3.1 / 1.5);
}

TEST(MeasuredGuardTest, AKernelOfAJudgedOperatorIsBoundedByItsOwnShareOfTheMeasurement) {
  // An operator of two kernels predicted 10 + 30 on the source, measured 400 (10x): the
  // second kernel's share of the measurement is 300, so a range of [0.5, 1] keeps its
  // forecast within 150-300 whatever the target's model says.
  GuardInput in = gemm_measured(400, 40);
  const GuardVerdict v = judge_measurement(in);
  ASSERT_TRUE(v.anchors());
  const GpuTimeRatioRange range{0.5, 1.0};
  EXPECT_DOUBLE_EQ(guarded_forecast(v, predicted(90), false, 0, range, 30).us, 300);
  EXPECT_DOUBLE_EQ(guarded_forecast(v, predicted(24), false, 0, range, 30).us, 240);
  EXPECT_DOUBLE_EQ(guarded_forecast(v, predicted(3), false, 0, range, 30).us, 150);
}

TEST(MeasuredGuardTest, SourceLowerBoundIsTheRecordsWorkAtPeakOnTheSourceGpu) {
  const DeviceCatalogue cat =
      DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  const DeviceSpec& h100 = cat.resolve("H100");
  KernelRecord r;
  r.op.kind = OpKind::kElementwise;
  r.op.vec.rows = 1;
  r.op.vec.cols = 1;
  r.op.vec.bytes_read = 1e9;
  r.op.vec.bytes_written = 1e9;
  r.launch.grid = {100000, 1, 1};
  r.launch.block = {256, 1, 1};
  KernelClass cls;
  cls.family = KernelFamily::kElementwise;
  const double lower = source_lower_bound_us(r, cls, h100, TimeBasis::kKernel);
  // 2 GB at no more than the margin over the H100's DRAM bandwidth: hundreds of µs.
  EXPECT_GT(lower, 2e9 / (1.2 * h100.bytes_per_us()));
  EXPECT_EQ(source_lower_bound_us(KernelRecord{}, cls, h100, TimeBasis::kKernel), 0);
}

}  // namespace
}  // namespace pm2lat
