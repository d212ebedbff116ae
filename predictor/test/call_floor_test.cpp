// A call-timed table's floor holds a call only where it is one of small calls: the table timed
// calls too small to be kernel-bound (the host's dispatch shows), or it is a GPU calibration's
// empty-kernel launch. Calibration puts an operator's floor at the 2nd percentile of its calls,
// which on a table of large shapes only (NeuSight's A100-PCIE-80GB and L4 `linear`, model-like
// shapes: floors of 199 and 308 us) is one of its own larger calls: it bounds no other call.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "pm2lat/call_dispatch.h"
#include "pm2lat/classifier.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/predictor.h"

namespace pm2lat {
namespace {

TEST(TrafficFloorOps, AreTheOperatorsWithoutSmallCallsOfTheirOwn) {
  Profile p;
  p.basis = TimeBasis::kCall;
  p.call_overhead["relu"] = CallOverhead{584, 15};
  p.call_overhead["add"] = CallOverhead{26, 20};
  p.call_overhead["*"] = CallOverhead{9, 6};
  EXPECT_EQ(traffic_floor_ops(p, {"add"}), std::set<std::string>{"relu"});
  p.basis = TimeBasis::kKernel;  // a kernel-timed table has no call floor at all
  EXPECT_TRUE(traffic_floor_ops(p, {"add"}).empty());
}

TEST(TableCallUs, IsTheDispatchPlusTheKernelOverAFloorOfSmallCalls) {
  const CallOverhead o{30, 10};
  EXPECT_DOUBLE_EQ(table_call_us(o, false, 4), 30);
  EXPECT_DOUBLE_EQ(table_call_us(o, true, 4), 14);
  EXPECT_DOUBLE_EQ(table_call_us(o, false, 50), 60);
}

// A calibration point informs a kernel's residual with its call's time less the dispatch,
// only where the call stands clear of a floor of small calls; a kernel-timed point with its
// own time. The call residual is against the call as the table timed it.
TEST(CalibrationResiduals, AKernelIsReadFromCallsClearOfTheFloorOnly) {
  Profile p;
  p.basis = TimeBasis::kCall;
  p.call_overhead["linear"] = CallOverhead{40, 10};
  const std::set<std::string> none;
  // 100 us call, model kernel 60 us: the call residual against max(40, 10 + 60), the kernel's
  // against the call less its 10 us dispatch.
  CalibrationResiduals r = calibration_residuals(p, "linear", none, 100, 60);
  ASSERT_TRUE(r.call && r.kernel);
  EXPECT_DOUBLE_EQ(*r.call, std::log(100.0 / 70));
  EXPECT_DOUBLE_EQ(*r.kernel, std::log(90.0 / 60));
  // A call within 1.5x of its 40 us floor says nothing of its kernel.
  r = calibration_residuals(p, "linear", none, 59, 5);
  EXPECT_DOUBLE_EQ(*r.call, std::log(59.0 / 40));
  EXPECT_FALSE(r.kernel);
  // ... unless the floor is the table's own traffic: no floor, the kernel behind the dispatch.
  r = calibration_residuals(p, "linear", {"linear"}, 59, 5);
  EXPECT_DOUBLE_EQ(*r.call, std::log(59.0 / 15));
  EXPECT_DOUBLE_EQ(*r.kernel, std::log(49.0 / 5));
  // A call shorter than its dispatch keeps a finite kernel residual.
  r = calibration_residuals(p, "linear", {"linear"}, 8, 5);
  EXPECT_TRUE(std::isfinite(*r.kernel));
  // A kernel-timed point: its time against the kernel, no call.
  p.basis = TimeBasis::kKernel;
  r = calibration_residuals(p, "linear", none, 12, 10);
  EXPECT_FALSE(r.call);
  EXPECT_DOUBLE_EQ(*r.kernel, std::log(12.0 / 10));
}

constexpr double kPreUs = 25;  // dispatch before the kernel

// An A100-PCIE-80GB `linear` table timed as calls: one tile kernel, every call its dispatch
// plus what the kernel's wave model says, never under `host_floor_us`; its call floor at
// `floor_rank`'s call (0: the shortest), as calibration's 2nd percentile puts it.
class GemmCallFloor : public ::testing::Test {
 protected:
  struct Shape {
    std::int64_t m, n, k;
  };
  void build(const std::vector<Shape>& shapes, std::size_t floor_rank, double host_floor_us) {
    DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
    const DeviceSpec spec = cat.resolve("A100-PCIE-80GB");
    Profile p;
    p.device = spec.name;
    p.basis = TimeBasis::kCall;
    const GemmConfigFit c{.config = "ampere_sgemm_128x64_tn",
                          .tile_m = 128,
                          .tile_n = 64,
                          .tile_k = 8,
                          .c0 = 3,
                          .c_wave_k = 2,  // about half the A100's FP32 peak
                          .c_wave = 2};
    p.gemm_configs.push_back(c);
    calls_.clear();
    for (const Shape& sh : shapes) {
      const Dim3 grid{static_cast<std::uint32_t>((sh.n + 63) / 64),
                      static_cast<std::uint32_t>((sh.m + 127) / 128), 1};
      const GemmShape s{.m = sh.m, .n = sh.n, .k = sh.k};
      const GemmWork w = gemm_work(c, s, blocks_from_grid(grid, 1), 1, 4);
      const GemmPoint pt{.op = "linear",
                         .transposed_weight = true,
                         .config = 0,
                         .m = sh.m,
                         .n = sh.n,
                         .k = sh.k,
                         .grid = grid,
                         .us = std::max(host_floor_us, kPreUs + gemm_wave_kernel_us(c, spec, w))};
      calls_.push_back(pt.us);
      p.gemm_points.push_back(pt);
    }
    std::vector<double> sorted = calls_;
    std::sort(sorted.begin(), sorted.end());
    floor_us_ = sorted[floor_rank];
    p.call_overhead["linear"] = CallOverhead{floor_us_, kPreUs};
    std::vector<Profile> profiles{p};
    predictor_ = std::make_unique<Predictor>(std::move(cat), std::move(profiles));
    target_ = predictor_->add_target("A100-PCIE-80GB");
  }
  Prediction call(const Shape& sh) const {
    KernelRecord r;
    r.op.kind = OpKind::kGemm;
    r.op.name = "linear";
    r.op.gemm.m = sh.m;
    r.op.gemm.n = sh.n;
    r.op.gemm.k = sh.k;
    r.op.gemm.trans_b = true;
    r.op.gemm.a = DType::kFp32;
    KernelClass cls;
    cls.family = KernelFamily::kGemm;
    return predictor_->predict(r, cls, target_, {TimeBasis::kCall, "A100-PCIE-80GB"});
  }
  std::unique_ptr<Predictor> predictor_;
  TargetId target_{};
  std::vector<double> calls_;  // in the order of the shapes built
  double floor_us_ = 0;
};

// Model-like shapes only: the shortest call is its own dispatch and kernel, not the table's
// floor, which calibration put on the second-shortest call.
TEST_F(GemmCallFloor, AFloorOfLargeCallsHoldsNoShorterCall) {
  build({{4096, 1024, 1024}, {4096, 4096, 1024}, {8192, 4096, 2048}, {8192, 8192, 4096}}, 1, 0);
  ASSERT_LT(calls_[0], 0.5 * floor_us_);
  const Prediction p = call({4096, 1024, 1024});
  EXPECT_EQ(p.basis, TimeBasis::kCall);
  EXPECT_NEAR(p.us, calls_[0], 1e-6 * calls_[0])
      << "floor " << floor_us_ << " flags " << p.flags << " model " << static_cast<int>(p.model)
      << " cfg " << p.config << " basis " << static_cast<int>(p.basis);
}

// A table that timed calls too small to be kernel-bound shows the host's floor: it holds a
// call smaller still.
TEST_F(GemmCallFloor, AFloorOfSmallCallsHolds) {
  constexpr double kHostFloorUs = 40;
  build({{16, 16, 16}, {32, 32, 32}, {4096, 4096, 1024}, {8192, 4096, 2048}}, 1, kHostFloorUs);
  ASSERT_DOUBLE_EQ(floor_us_, kHostFloorUs);
  EXPECT_NEAR(call({8, 8, 8}).us, kHostFloorUs, 1e-6 * kHostFloorUs);
}

}  // namespace
}  // namespace pm2lat
