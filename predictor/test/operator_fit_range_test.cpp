// Per-operator fits stop at the edge of the sizes they were calibrated on: outside it the
// bandwidth form takes over from the fit's edge (flag clamped), so a call-time fit made on
// large tensors cannot price a small call at its large calls' floor.
#include <gtest/gtest.h>

#include <optional>

#include "pm2lat/classifier.h"
#include "pm2lat/models/memory_bound_model.h"
#include "pm2lat/predictor.h"

#include "aten_kernel_names.h"

namespace pm2lat {
namespace {

constexpr double kPreUs = 15;    // dispatch before the kernel
constexpr double kCByte = 1.25;  // 80 % of the bandwidth
constexpr double kLoBytes = 100e6;
constexpr double kHiBytes = 400e6;

// An L4 calibrated with relu calls of 100-400 MB only (as NeuSight measured it), timed as
// calls; every point on its fit, so residuals are zero inside the range. Its call floor is
// the shortest call, as calibration's 2nd percentile gives it for a few calls.
class OperatorFitRange : public ::testing::Test {
 protected:
  void SetUp() override { build(std::nullopt); }
  // Another GPU's table that timed relu calls small enough to measure their dispatch.
  struct DispatchDonor {
    const char* device;
    double floor_us, pre_us;
  };
  // `floor_us`: the profile's call floor (default: the shortest call); `lo_bytes`: the smallest
  // call calibrated; `donors`: tables the L4 may borrow a dispatch from; `host_floor_us`: what
  // no call on this host takes less than.
  void build(std::optional<double> floor_us, double lo_bytes = kLoBytes,
             const std::vector<DispatchDonor>& donors = {}, double host_floor_us = 0) {
    DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
    const DeviceSpec spec = cat.resolve("L4");
    bw_ = spec.bytes_per_us();
    host_floor_us_ = host_floor_us;
    floor_us_ = floor_us.value_or(call(lo_bytes));
    Profile p;
    p.device = "L4";
    p.basis = TimeBasis::kCall;
    p.call_overhead["relu"] = CallOverhead{floor_us_, kPreUs};
    VectorFit f;
    f.op = "relu";
    f.c_byte = kCByte;
    p.vector_fits.push_back(f);
    for (double bytes = lo_bytes; bytes <= kHiBytes; bytes *= 2) {
      VectorPoint pt;
      pt.fit = 0;
      pt.rows = static_cast<std::int64_t>(bytes / 8 / 1024);
      pt.cols = 1024;
      pt.bytes = bytes;
      pt.us = call(bytes);
      p.vector_points.push_back(pt);
    }
    std::vector<Profile> profiles{p};
    for (const DispatchDonor& d : donors) {
      Profile donor;
      donor.device = d.device;
      donor.basis = TimeBasis::kCall;
      donor.call_overhead["relu"] = CallOverhead{d.floor_us, d.pre_us};
      donor.vector_fits.push_back(f);
      for (double bytes = 64e3; bytes <= 1e6; bytes *= 2) {
        VectorPoint pt;
        pt.fit = 0;
        pt.rows = static_cast<std::int64_t>(bytes / 8 / 1024);
        pt.cols = 1024;
        pt.bytes = bytes;
        pt.us = d.floor_us;
        donor.vector_points.push_back(pt);
      }
      profiles.push_back(std::move(donor));
    }
    predictor_ = std::make_unique<Predictor>(std::move(cat), std::move(profiles));
    target_ = predictor_->add_target("L4");
  }
  double call(double bytes) const {
    return std::max(host_floor_us_, kPreUs + kCByte * bytes / bw_);
  }
  Prediction predict(double bytes, TimeBasis basis = TimeBasis::kCall) const {
    KernelRecord r;
    r.launch.name = test::kAtenReluKernel;
    r.launch.grid = {static_cast<std::uint32_t>(bytes / 8 / 512), 1, 1};
    r.launch.block = {128, 1, 1};
    r.op.kind = OpKind::kElementwise;
    r.op.name = "aten::relu";
    r.op.vec = {static_cast<std::int64_t>(bytes / 8 / 1024), 1024, bytes / 2, bytes / 2,
                DType::kFp32};
    PredictOptions o;
    o.basis = basis;
    o.source_device = "L4";
    return predictor_->predict(r, classify_kernel(r.launch.name), target_, o);
  }
  std::unique_ptr<Predictor> predictor_;
  TargetId target_ = 0;
  double bw_ = 1;
  double host_floor_us_ = 0;
  double floor_us_ = 0;
};

TEST_F(OperatorFitRange, InsideItsRangeTheFitAnswersAsCalibrated) {
  const Prediction p = predict(200e6);
  EXPECT_FALSE(p.has(prediction_flags::kClamped));
  EXPECT_NEAR(p.us, call(200e6), 1e-6 * call(200e6));
}

TEST_F(OperatorFitRange, ASmallCallIsItsDispatchPlusTrafficNotTheLargeCallsFloor) {
  const double bytes = 2.0 * (1 << 20);
  const Prediction p = predict(bytes);
  EXPECT_TRUE(p.has(prediction_flags::kClamped));
  EXPECT_EQ(p.basis, TimeBasis::kCall);
  const double traffic_us = kCByte * bytes / bw_;
  EXPECT_GT(p.us, kPreUs + traffic_us);
  EXPECT_LT(p.us, kPreUs + 2 * kMinMemoryKernelUs + traffic_us * floor_us_ / (floor_us_ - kPreUs));
  // Twice the bytes, twice the traffic at the edge's efficiency (the dispatch stays).
  const double edge_kernel_us = floor_us_ - kPreUs;  // the 100 MB call is the floor
  EXPECT_NEAR(predict(2 * bytes).us - p.us,
              (edge_kernel_us - kMinMemoryKernelUs) * bytes / kLoBytes, 1e-6 * p.us);
}

// A floor a host dispatch can reach (NeuSight's small calls: up to 64.8 us), on which the
// smallest calls calibrated sit (2 MB: 15 us of dispatch and 8 us of traffic), holds below the
// range too.
TEST_F(OperatorFitRange, ASmallCallKeepsADispatchFloor) {
  constexpr double kDispatchFloorUs = 30;
  build(std::nullopt, 2e6, {}, kDispatchFloorUs);
  ASSERT_DOUBLE_EQ(floor_us_, kDispatchFloorUs);
  const Prediction p = predict(1e5);
  EXPECT_TRUE(p.has(prediction_flags::kClamped));
  EXPECT_NEAR(p.us, kDispatchFloorUs, 1e-9);
}

// A floor no smaller call shows is the traffic of the smallest calls calibrated (a table of
// large tensors only, whatever the floor's size): it does not hold below the range.
TEST_F(OperatorFitRange, AFloorOfLargeCallsIsNotADispatchFloor) {
  // The smallest call, 16 MB, takes 15 us of dispatch and 67 us of traffic: the shortest calls
  // sit at 80 us, a floor a host dispatch could reach.
  constexpr double kTrafficFloorUs = 80;
  build(kTrafficFloorUs, 16e6);
  const double bytes = 1e6;
  const Prediction p = predict(bytes);
  EXPECT_TRUE(p.has(prediction_flags::kClamped));
  EXPECT_LT(p.us, kTrafficFloorUs / 2);
  EXPECT_GT(p.us, kPreUs + kCByte * bytes / bw_);
}

// Below the range a call takes another table's dispatch (this one's intercept of 15 us is no
// measurement); the kernel it adds that dispatch to is the edge's call less that dispatch, so
// a call just below the smallest one calibrated costs what that one does, and less further
// down (a kernel derived with the 15 us intercept, under a 43 us dispatch, priced the call
// 28 us above the edge's).
TEST_F(OperatorFitRange, BelowTheRangeABorrowedDispatchMeetsTheEdgesCall) {
  constexpr double kDonorPreUs = 43;
  build(std::nullopt, kLoBytes, {{"T4", 45, kDonorPreUs}});
  const Prediction edge = predict(kLoBytes);
  const Prediction below = predict(0.99 * kLoBytes);
  EXPECT_FALSE(edge.has(prediction_flags::kClamped));
  EXPECT_TRUE(below.has(prediction_flags::kClamped));
  EXPECT_LE(below.us, edge.us);
  EXPECT_GT(below.us, 0.98 * edge.us);
  // Further down the borrowed dispatch stays and the kernel shrinks with the bytes.
  const Prediction small = predict(1e6);
  EXPECT_GT(small.us, kDonorPreUs);
  EXPECT_LT(small.us,
            kDonorPreUs + 2 * kMinMemoryKernelUs + (edge.us - kDonorPreUs) * 1e6 / kLoBytes);
}

// The dispatch borrowed is the host's, not the GPU's: the median of the tables that timed it,
// not the most similar GPU's (the T4 here, whose host is the quickest).
TEST_F(OperatorFitRange, ABorrowedDispatchIsTheMedianOfTheTablesThatTimedIt) {
  build(std::nullopt, kLoBytes, {{"T4", 30, 20}, {"P4", 35, 25}, {"V100-PCIE-32GB", 70, 60}});
  const double tiny = 64e3;
  EXPECT_NEAR(predict(tiny).us, 35, 1e-9);  // the median floor
  const double bytes = 10e6;
  const double kernel_us =
      kMinMemoryKernelUs + (floor_us_ - 25 - kMinMemoryKernelUs) * bytes / kLoBytes;
  EXPECT_NEAR(predict(bytes).us, 25 + kernel_us, 1e-6 * kernel_us);  // the median dispatch
  // An even count takes the middle two's mean.
  build(std::nullopt, kLoBytes,
        {{"T4", 30, 20}, {"P4", 34, 24}, {"V100-PCIE-32GB", 70, 60}, {"P100-PCIE-16GB", 90, 80}});
  EXPECT_NEAR(predict(tiny).us, (34 + 70) / 2.0, 1e-9);
}

// Calibration's floor is the 2nd percentile of an operator's calls: for a table of ~50 large
// tensors' calls (NeuSight's L4), its second-shortest one. That is traffic, not a floor of
// small calls: the shortest call of the range costs its own traffic, and so does one just below
// it (NeuSight's L4 softmax: a floor of 365 us, its 84 MB call, held its 50 MB call, measured
// at 88 us, at 365, and priced a 34 MB one at 254).
TEST_F(OperatorFitRange, AFloorOnTheSecondShortestCallHoldsNoShorterOne) {
  build(std::nullopt);
  const double second_shortest_us = call(2 * kLoBytes);
  build(second_shortest_us);
  const Prediction edge = predict(kLoBytes);
  EXPECT_FALSE(edge.has(prediction_flags::kClamped));
  EXPECT_NEAR(edge.us, call(kLoBytes), 1e-6 * call(kLoBytes));
  const Prediction below = predict(0.9 * kLoBytes);
  EXPECT_TRUE(below.has(prediction_flags::kClamped));
  EXPECT_LT(below.us, call(kLoBytes));
  EXPECT_GT(below.us, 0.85 * call(kLoBytes));
}

TEST_F(OperatorFitRange, ASmallKernelRunsFromTheFixedCostToTheEdge) {
  const double bytes = 1e6;
  const Prediction p = predict(bytes, TimeBasis::kKernel);
  EXPECT_TRUE(p.has(prediction_flags::kClamped));
  EXPECT_GE(p.us, kMinMemoryKernelUs);
  const double edge_us = kCByte * kLoBytes / bw_;
  EXPECT_NEAR(p.us, kMinMemoryKernelUs + (edge_us - kMinMemoryKernelUs) * bytes / kLoBytes,
              1e-6 * p.us);
}

TEST_F(OperatorFitRange, ALargerCallKeepsTheLastPointsBandwidth) {
  const Prediction p = predict(4 * kHiBytes);
  EXPECT_TRUE(p.has(prediction_flags::kClamped));
  EXPECT_NEAR(p.us, kPreUs + 4 * (call(kHiBytes) - kPreUs), 1e-6 * p.us);
}

}  // namespace
}  // namespace pm2lat
