#include <gtest/gtest.h>

#include "pm2lat/classifier.h"
#include "pm2lat/prediction.h"
#include "pm2lat/reports/run_predictor.h"
#include "support/test_support.h"

namespace pm2lat::reports {
namespace {

KernelRecord gemm(std::int64_t m) {
  KernelRecord r;
  r.launch.name = "ampere_sgemm_128x64_tn";
  r.launch.grid = {8, 8, 1};
  r.op.kind = OpKind::kGemm;
  r.op.gemm.m = m;
  r.op.gemm.n = r.op.gemm.k = 1024;
  r.op.gemm.a = DType::kFp32;
  return r;
}

TEST(RunPredictor, RepeatedPairsGetThePredictorsOwnAnswer) {
  Predictor predictor = test::catalogue_predictor();
  RunPredictor run(predictor, {"H100", "L4"});
  RunTable table;
  table.add_rank(RankInfo{});
  run.add_columns(table);
  const KernelClass cls = classify_kernel("ampere_sgemm_128x64_tn");
  for (std::int64_t m : {512, 1024, 512, 512}) {
    const std::size_t row =
        table.add_kernel("ampere_sgemm_128x64_tn", cls.family, 0, 1, 0, std::nullopt);
    run.predict(gemm(m), cls, nullptr, table, row);
  }
  EXPECT_EQ(run.cache().size(), 2u);
  EXPECT_EQ(run.cache().hits(), 2u);
  const Prediction direct = predictor.predict(gemm(512), cls, predictor.add_target("L4"));
  EXPECT_FLOAT_EQ(static_cast<float>(table.predicted_us(3, 1)), static_cast<float>(direct.us));
  EXPECT_EQ(table.model(3, 1), direct.model);
  EXPECT_NE(table.predicted_us(1, 1), table.predicted_us(0, 1));
}

TEST(RunPredictor, ResolvesEachNameOnceAndKeepsAGpuNamedTwiceOnce) {
  Predictor predictor = test::catalogue_predictor();
  RunPredictor run(predictor, {"h100", "NVIDIA H100 80GB HBM3", "L4"});
  EXPECT_EQ(run.target_names(), (std::vector<std::string>{"H100-SXM", "L4"}));
  EXPECT_EQ(run.add_target(*predictor.catalogue().find("L4")), 1u);
  EXPECT_THROW(run.add_target("Z9000"), UnknownDeviceError);
}

// Replay and re-prediction: a measured record far from its own GPU's prediction anchors the
// other targets' forecasts (measured_guard.h); the own GPU's prediction stays the model's.
TEST(RunPredictor, AMeasurementFarFromTheModelAnchorsOtherTargets) {
  Predictor predictor = test::catalogue_predictor();
  const KernelClass cls = classify_kernel(
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3>)");
  KernelRecord r;
  r.launch.name = "vectorized_elementwise_kernel";
  r.launch.grid = {4096, 1, 1};
  r.launch.block = {128, 1, 1};
  r.op.kind = OpKind::kElementwise;
  r.op.vec = {.rows = 1, .cols = 1 << 20, .bytes_read = 8 << 20, .bytes_written = 4 << 20};
  const DeviceSpec* h100 = predictor.catalogue().find("H100");
  const Prediction own = predictor.predict(r, cls, predictor.add_target("H100"));
  const Prediction l4 = predictor.predict(r, cls, predictor.add_target("L4"));
  ASSERT_GT(own.us, 0);
  r.measured_us = 100 * own.us;  // far outside any factor the guard allows

  for (bool guarded : {true, false}) {
    RunPredictor run(predictor, {"H100", "L4"});
    if (!guarded) run.set_guard(std::nullopt);
    RunTable table;
    table.add_rank(RankInfo{});
    run.add_columns(table);
    const std::size_t row = table.add_kernel(r.launch.name, cls.family, 0, 1, 0, r.measured_us);
    run.predict(r, cls, h100, table, row);
    EXPECT_FLOAT_EQ(static_cast<float>(table.predicted_us(row, 0)), static_cast<float>(own.us));
    EXPECT_EQ(table.flags(row, 0) & prediction_flags::kAnchored, 0u);
    if (guarded) {
      EXPECT_NE(table.flags(row, 1) & prediction_flags::kAnchored, 0u);
      EXPECT_FLOAT_EQ(static_cast<float>(table.predicted_us(row, 1)),
                      static_cast<float>(100 * l4.us));
    } else {
      EXPECT_EQ(table.flags(row, 1) & prediction_flags::kAnchored, 0u);
      EXPECT_FLOAT_EQ(static_cast<float>(table.predicted_us(row, 1)), static_cast<float>(l4.us));
    }
  }
}

}  // namespace
}  // namespace pm2lat::reports
