// A call is its host dispatch plus its kernel. A table of large tensors only (NeuSight's L4 and
// A100-PCIE-80GB) cannot tell the dispatch: its shortest calls are their own traffic, and the
// dispatch its fit intercepts is noise (0 us). Below the sizes such a table timed, a call is
// dispatched as on the most similar GPU whose table timed small calls of the same operator.
#include <gtest/gtest.h>

#include "pm2lat/classifier.h"
#include "pm2lat/predictor.h"

#include "aten_kernel_names.h"

namespace pm2lat {
namespace {

constexpr double kCByte = 1.25;  // 80 % of the bandwidth, on both GPUs

// relu calls from `lo` to 400 MB on `gpu`, timed as calls: max(floor, pre + traffic).
Profile relu_table(const DeviceSpec& spec, double lo, double floor_us, double pre_us) {
  Profile p;
  p.device = spec.name;
  p.basis = TimeBasis::kCall;
  p.call_overhead["relu"] = CallOverhead{floor_us, pre_us};
  VectorFit f;
  f.op = "relu";
  f.c_byte = kCByte;
  p.vector_fits.push_back(f);
  for (double bytes = lo; bytes <= 400e6; bytes *= 2) {
    VectorPoint pt;
    pt.fit = 0;
    pt.rows = static_cast<std::int64_t>(std::max(1.0, bytes / 8 / 1024));
    pt.cols = 1024;
    pt.bytes = bytes;
    pt.us = std::max(floor_us, pre_us + kCByte * bytes / spec.bytes_per_us());
    p.vector_points.push_back(pt);
  }
  return p;
}

KernelRecord relu_call(double bytes) {
  KernelRecord r;
  r.launch.name = test::kAtenReluKernel;
  r.launch.grid = {static_cast<std::uint32_t>(std::max(1.0, bytes / 8 / 512)), 1, 1};
  r.launch.block = {128, 1, 1};
  r.op.kind = OpKind::kElementwise;
  r.op.name = "aten::relu";
  r.op.vec = {static_cast<std::int64_t>(std::max(1.0, bytes / 8 / 1024)), 1024, bytes / 2,
              bytes / 2, DType::kFp32};
  return r;
}

class OperatorCallDispatch : public ::testing::Test {
 protected:
  static constexpr double kDenseFloorUs = 30;  // T4: calls from 4 KB sit on a 30 us floor
  static constexpr double kDensePreUs = 18;
  void build(bool with_dense, const char* target = "L4") {
    DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
    const DeviceSpec l4 = cat.resolve("L4");
    // L4: its floor is its shortest call, 100 MB of traffic.
    sparse_floor_us_ = kCByte * 100e6 / l4.bytes_per_us();
    std::vector<Profile> profiles{relu_table(l4, 100e6, sparse_floor_us_, 0.0)};
    if (with_dense)
      profiles.push_back(relu_table(cat.resolve("T4"), 4096, kDenseFloorUs, kDensePreUs));
    bw_ = l4.bytes_per_us();
    predictor_ = std::make_unique<Predictor>(std::move(cat), std::move(profiles));
    target_ = predictor_->add_target(target);
    target_bw_ = predictor_->target(target_).spec->bytes_per_us();
  }
  Prediction call(double bytes) const {
    const KernelRecord r = relu_call(bytes);
    PredictOptions o;
    o.basis = TimeBasis::kCall;
    o.source_device = "L4";
    return predictor_->predict(r, classify_kernel(r.launch.name), target_, o);
  }
  std::unique_ptr<Predictor> predictor_;
  TargetId target_ = 0;
  double bw_ = 1;
  double target_bw_ = 1;
  double sparse_floor_us_ = 0;
};

TEST_F(OperatorCallDispatch, ASmallCallOnALargeTensorTableIsDispatchedAsOnTheMostSimilarGpu) {
  build(true);
  const double bytes = 1 << 20;
  const Prediction p = call(bytes);
  EXPECT_TRUE(p.has(prediction_flags::kClamped));
  EXPECT_EQ(p.basis, TimeBasis::kCall);
  EXPECT_GE(p.us, kDenseFloorUs);
  EXPECT_LT(p.us, kDensePreUs + 4 * kCByte * bytes / bw_ + 5);
  // Inside the L4's own range its own table answers: the T4's dispatch changes nothing there.
  const double inside = 200e6;
  EXPECT_NEAR(call(inside).us, kCByte * inside / bw_, 1e-6 * inside / bw_);
}

// An RTX 4090 has no table: it borrows the L4's fits, but not the L4's floor, which is the
// traffic of the L4's own smallest calls (100 MB at 300 GB/s), not anything a 4090 waits for.
TEST_F(OperatorCallDispatch, AnotherGpuBorrowingTheTableIsNotHeldToItsLargeCallsFloor) {
  build(true, "RTX 4090");
  const double bytes = 100e6;
  const Prediction p = call(bytes);
  EXPECT_TRUE(p.has(prediction_flags::kSpecScaled));
  EXPECT_LT(p.us, sparse_floor_us_ / 2);
  EXPECT_NEAR(p.us, kDensePreUs + kCByte * bytes / target_bw_, 1e-6 * p.us);
}

TEST_F(OperatorCallDispatch, WithoutATableThatTimedSmallCallsTheDispatchStaysUnknown) {
  build(false);
  const Prediction p = call(1 << 20);
  EXPECT_TRUE(p.has(prediction_flags::kClamped));
  EXPECT_LT(p.us, kDenseFloorUs) << "no dispatch is known, none is invented";
}

// A GPU with no table borrows the most similar GPU's fits, not its host: dispatch is the host's
// and the framework's, and the tables' hosts differ in no order of their GPUs' specs. A P4
// priced with its donor P100's fits is dispatched as the tables' median host, not the P100's.
TEST(OperatorCallDispatchOnAnotherHost, AGpuWithoutATableIsDispatchedAsTheTablesMedianHost) {
  constexpr double kSlowHostFloorUs = 50, kSlowHostPreUs = 35;
  constexpr double kHostFloorUs = 30, kHostPreUs = 18;
  DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  std::vector<Profile> profiles{
      relu_table(cat.resolve("P100"), 4096, kSlowHostFloorUs, kSlowHostPreUs),
      relu_table(cat.resolve("T4"), 4096, kHostFloorUs, kHostPreUs),
      relu_table(cat.resolve("A100-PCIE-40GB"), 4096, kHostFloorUs, kHostPreUs)};
  Predictor predictor(std::move(cat), std::move(profiles));
  const KernelRecord small = relu_call(16384);
  PredictOptions o;
  o.basis = TimeBasis::kCall;
  const auto predict = [&](const char* gpu) {
    return predictor.predict(small, classify_kernel(small.launch.name), predictor.add_target(gpu),
                             o);
  };
  const Prediction p4 = predict("P4");
  ASSERT_TRUE(p4.has(prediction_flags::kSpecScaled));
  EXPECT_EQ(p4.basis, TimeBasis::kCall);
  EXPECT_NEAR(p4.us, kHostFloorUs, 1.0) << "the P100 host's " << kSlowHostFloorUs << " us";
  // The P100 itself keeps its own host.
  EXPECT_NEAR(predict("P100").us, kSlowHostFloorUs, 1.0);
}

}  // namespace
}  // namespace pm2lat
