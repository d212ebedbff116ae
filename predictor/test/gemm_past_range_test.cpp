// A thin product whose K loop runs past its configuration's calibration, through the whole
// predictor (gemm_fit_range.h): its operands stream over the SMs a launch observed on the GPU
// occupies, the fit's residual at that kernel's neighbours still applying; with none observed
// (a table of calls gives a nominal grid: the model's, not the library's) over every SM, as
// the library's GEMV (which the fit's residual does not describe) or tile kernel.
#include <gtest/gtest.h>

#include "nominal_gemm_table.h"
#include "pm2lat/models/gemm_fit_range.h"
#include "pm2lat/predictor.h"

namespace pm2lat {
namespace {

DeviceCatalogue shipped_catalogue() {
  return DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
}

// A table of calls on the H100 (K up to 4096) whose every call took `residual` times what the
// fit says: the residual the fit carries to its calibrated neighbours.
Profile h100_table(const DeviceSpec& spec, double residual, DType dtype) {
  std::vector<NominalGemmCall> calls;
  for (std::int64_t m : {1, 64, 512}) {
    for (std::int64_t n : {64, 512, 4096}) {
      for (std::int64_t k : {512, 4096}) calls.push_back({m, n, k});
    }
  }
  return nominal_gemm_table(spec, dtype, calls, residual);
}

KernelRecord gemm_call(std::int64_t m, std::int64_t n, std::int64_t k, DType dtype = DType::kBf16) {
  KernelRecord r;
  r.op.kind = OpKind::kGemm;
  r.op.name = "linear";
  r.op.gemm = {.m = m, .n = n, .k = k, .trans_b = true, .a = dtype, .b = dtype, .c = dtype};
  r.launch.name = nominal_gemm_fit(dtype).config;
  r.launch.grid = {static_cast<std::uint32_t>((n + 63) / 64),
                   static_cast<std::uint32_t>((m + 63) / 64), 1};
  return r;
}

KernelClass gemm_class(bool nominal) {
  KernelClass c;
  c.family = KernelFamily::kGemm;
  c.config = nominal_gemm_fit(DType::kBf16).config;
  c.gemm.tile_m = c.gemm.tile_n = c.gemm.tile_k = 64;
  c.dtype = DType::kBf16;
  c.nominal = nominal;
  return c;
}

class GemmPastRange : public ::testing::Test {
 protected:
  Prediction predict(double residual, const KernelRecord& r, bool nominal) {
    return predict_as(residual, r, gemm_class(nominal), DType::kBf16);
  }
  Prediction predict_as(double residual, const KernelRecord& r, const KernelClass& cls,
                        DType table) {
    DeviceCatalogue cat = shipped_catalogue();
    const DeviceSpec h100 = cat.resolve("H100-SXM");
    Predictor pred(std::move(cat), {h100_table(h100, residual, table)});
    const TargetId t = pred.add_target("H100-SXM");
    spec_ = h100;
    return pred.predict(r, cls, t);
  }
  DeviceSpec spec_;
};

// 1 x 128 x 65536 in BF16: 16.8 MB of matrix, one row of two 64-wide output tiles.
TEST_F(GemmPastRange, ANominalGridDoesNotHoldAThinLongProductToTwoSms) {
  const KernelRecord r = gemm_call(1, 128, 65536);
  const Prediction nominal = predict(1.0, r, true);
  EXPECT_TRUE(nominal.has(prediction_flags::kClamped));
  const double bytes = 2.0 * (128.0 * 65536 + 65536 + 128);
  const double whole_gpu_us =
      bytes / (gemm_range_constants::kGemvBandwidthEfficiency * spec_.bytes_per_us());
  EXPECT_GT(nominal.us, whole_gpu_us);
  EXPECT_LT(nominal.us, whole_gpu_us + 20) << "the fit's fixed costs, or its edge, at most";
  // The same grid observed on the GPU (a real two-block launch) is held to two SMs.
  const Prediction observed = predict(1.0, r, false);
  EXPECT_GT(observed.us, 0.5 * whole_gpu_us * spec_.sm_count / 2);
}

TEST_F(GemmPastRange, TheFitsResidualCorrectsTheFitNotAStreamedProduct) {
  // Inside the range the calls' residual of 2 doubles the fit ...
  const KernelRecord inside = gemm_call(64, 512, 2048);
  EXPECT_NEAR(predict(2.0, inside, true).us, 2 * predict(1.0, inside, true).us,
              0.05 * predict(2.0, inside, true).us);
  // ... past it, with no launch observed, a thin product is the library's GEMV streaming its
  // operands, whatever the fit's residual ...
  const KernelRecord past = gemm_call(1, 4096, 65536);
  const Prediction twice = predict(2.0, past, true);
  ASSERT_TRUE(twice.has(prediction_flags::kClamped));
  EXPECT_DOUBLE_EQ(twice.us, predict(1.0, past, true).us);
  // ... while a launch of the fit's own kernel observed on the GPU keeps the kernel's residual.
  const Prediction launched = predict(2.0, past, false);
  ASSERT_TRUE(launched.has(prediction_flags::kClamped));
  EXPECT_NEAR(launched.us, 2 * predict(1.0, past, false).us, 0.05 * launched.us);
}

// No kernel named and no launch: the library spreads the K loop over every SM, a
// matrix-vector product as a GEMV, and so a thin tensor-core product of a few rows
// (AIConfigurator's BF16 tables: 1-8 rows stream alike); a thin FP32 product of several rows
// as a SIMT tile kernel, slower (NeuSight's FP32 tables).
TEST_F(GemmPastRange, AThinFp32ProductOfSeveralRowsRunsATileKernelNotAGemv) {
  KernelClass unnamed;
  unnamed.family = KernelFamily::kGemm;
  const auto unlaunched = [](std::int64_t m, DType dtype) {
    KernelRecord r = gemm_call(m, 4096, 65536, dtype);
    r.launch = {};
    return r;
  };
  const Prediction fp32_gemv = predict_as(1.0, unlaunched(1, DType::kFp32), unnamed, DType::kFp32);
  const Prediction fp32_rows = predict_as(1.0, unlaunched(8, DType::kFp32), unnamed, DType::kFp32);
  ASSERT_TRUE(fp32_gemv.has(prediction_flags::kClamped));
  ASSERT_TRUE(fp32_rows.has(prediction_flags::kClamped));
  // Both over every SM (64 output tiles would fill half of the H100's 132 and take 2x more),
  // the tile kernel at the launched kernels' rate, the GEMV at the library's.
  const double rates = gemm_range_constants::kGemvBandwidthEfficiency /
                       gemm_range_constants::kMeasuredGemvEfficiency;
  EXPECT_GT(fp32_rows.us, 0.9 * rates * fp32_gemv.us);
  EXPECT_LT(fp32_rows.us, 1.1 * rates * fp32_gemv.us);
  const Prediction bf16_gemv = predict_as(1.0, unlaunched(1, DType::kBf16), unnamed, DType::kBf16);
  const Prediction bf16_rows = predict_as(1.0, unlaunched(8, DType::kBf16), unnamed, DType::kBf16);
  EXPECT_LT(bf16_rows.us, 1.1 * bf16_gemv.us);
}

// A table of calls prices every call on the same nominal launch, so the fit at the range's edge
// prices the table's calls of the same output at the edge's K: a longer reduction costs no
// less. A named configuration's launch for an unobserved call is the selector's guess, and no
// floor is taken from it. The flag travels with the profile's configuration.
TEST_F(GemmPastRange, ANominalTablesLongerReductionCostsNoLessThanItsEdge) {
  const DeviceSpec h100 = shipped_catalogue().resolve("H100-SXM");
  Profile nominal_table = h100_table(h100, 1.0, DType::kBf16);
  // K steps dear enough that the fit's edge (one wave of 64 steps) costs more than streaming
  // 1 x 128 x 8192's 2 MB.
  nominal_table.gemm_configs[0].c_wave_k = 0.05;
  ASSERT_TRUE(nominal_table.gemm_configs[0].nominal_launch);
  Profile named_table = nominal_table;
  named_table.gemm_configs[0].nominal_launch = false;
  const auto predict_on = [&](const Profile& table, std::int64_t k) {
    Predictor pred(shipped_catalogue(), {table});
    return pred.predict(gemm_call(1, 128, k), gemm_class(true), pred.add_target("H100-SXM"));
  };
  const GemmConfigFit& fit = nominal_table.gemm_configs[0];
  const GemmShape at_edge{.m = 1, .n = 128, .k = 4096};
  const double edge_blocks = blocks_from_grid(gemm_call(1, 128, 4096).launch.grid, 1);
  const double edge_us = gemm_wave_kernel_us(
      fit, h100, gemm_work(fit, at_edge, edge_blocks, 1, dtype_bytes(DType::kBf16)));
  const Prediction nominal_past = predict_on(nominal_table, 8192);
  const Prediction named_past = predict_on(named_table, 8192);
  ASSERT_TRUE(nominal_past.has(prediction_flags::kClamped));
  ASSERT_TRUE(named_past.has(prediction_flags::kClamped));
  EXPECT_LT(named_past.us, 0.8 * edge_us) << "the streamed form alone";
  EXPECT_NEAR(nominal_past.us, edge_us, 1e-4 * edge_us);  // the output's bytes scale with K too
  // A reduction long enough to stream for longer than the edge is priced by streaming.
  const Prediction longest = predict_on(nominal_table, 1 << 20);
  EXPECT_GT(longest.us, edge_us);
  EXPECT_DOUBLE_EQ(longest.us, predict_on(named_table, 1 << 20).us);
}

}  // namespace
}  // namespace pm2lat
