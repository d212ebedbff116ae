#include "pm2lat/models/bounded_prediction.h"

#include <gtest/gtest.h>

#include "shipped_catalogue_test.h"

namespace pm2lat {
namespace {

class BoundedPredictionTest : public ShippedCatalogueTest {
 protected:
  // A copy of `bytes` launched as `grid` blocks of 256 threads.
  static KernelRecord copy(double bytes, std::uint32_t blocks) {
    KernelRecord r;
    r.launch.grid = {blocks, 1, 1};
    r.launch.block = {256, 1, 1};
    r.op.kind = OpKind::kCopy;
    r.op.name = "aten::copy_";
    r.op.vec = {1, 1, bytes / 2, bytes / 2, DType::kFp32};
    return r;
  }
};

TEST_F(BoundedPredictionTest, AnswersOutsideTheBoundsBecomeTheBoundAndSaySo) {
  PhysicalBounds b;
  b.lower_us = 5;
  b.upper_us = 50;
  Prediction p;
  p.us = 1;
  p.flags = prediction_flags::kExtrapolated;
  const Prediction low = within_bounds(p, b);
  EXPECT_DOUBLE_EQ(low.us, 5);
  EXPECT_TRUE(low.has(prediction_flags::kClamped));
  EXPECT_TRUE(low.has(prediction_flags::kExtrapolated));  // other flags kept
  p.us = 500;
  EXPECT_DOUBLE_EQ(within_bounds(p, b).us, 50);
  p.us = 20;
  const Prediction inside = within_bounds(p, b);
  EXPECT_DOUBLE_EQ(inside.us, 20);
  EXPECT_FALSE(inside.has(prediction_flags::kClamped));
}

TEST_F(BoundedPredictionTest, CommunicationAndEmptyAnswersPassUnchanged) {
  PhysicalBounds b;
  b.lower_us = 5;
  Prediction link;
  link.us = 1;
  link.flags = prediction_flags::kCommunication;
  EXPECT_DOUBLE_EQ(within_bounds(link, b).us, 1);
  EXPECT_DOUBLE_EQ(within_bounds(Prediction{}, b).us, 0);
}

TEST_F(BoundedPredictionTest, WorkTheLaunchCannotHaveDoneIsDroppedFromTheBounds) {
  const DeviceSpec& h100 = gpu("H100");
  const KernelClass cls = family(KernelFamily::kCopy);
  // 64 blocks of 256 threads cannot loop over 100 GB; they can over 100 MB.
  const KernelRecord impossible = copy(100e9, 64);
  const KernelRecord possible = copy(100e6, 64);
  const AppliedBounds rejected = applied_bounds(impossible, cls, h100, &h100, TimeBasis::kKernel);
  EXPECT_TRUE(rejected.stated_work_rejected);
  EXPECT_EQ(rejected.bounds.lower_limit, LowerLimit::kLaunchFloor);
  EXPECT_FALSE(rejected.bounds.has_upper());
  const AppliedBounds kept = applied_bounds(possible, cls, h100, &h100, TimeBasis::kKernel);
  EXPECT_FALSE(kept.stated_work_rejected);
  EXPECT_EQ(kept.bounds.lower_limit, LowerLimit::kBandwidth);
  EXPECT_TRUE(kept.bounds.has_upper());
  const KernelRecord stripped = without_stated_work(impossible);
  EXPECT_EQ(stripped.op.vec.bytes(), 0);
  EXPECT_EQ(stripped.op.kind, OpKind::kCopy);
  EXPECT_EQ(stripped.op.name, "aten::copy_");
  EXPECT_EQ(stripped.launch.grid.x, 64u);
}

}  // namespace
}  // namespace pm2lat
