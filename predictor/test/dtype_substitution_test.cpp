// A GEMM of a type the target has no calibration for runs on another type's: said as
// dtype_substituted when the tensor throughput is the same (FP16 on BF16), spec_scaled when the
// math had to be rescaled.
#include <gtest/gtest.h>

#include "pm2lat/models/dtype_substitution.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/predictor.h"

namespace pm2lat {
namespace {

DeviceCatalogue shipped_catalogue() {
  return DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
}

// A BF16 calibration of one nominal configuration on the H100, following its own model.
Profile bf16_h100(const DeviceSpec& spec) {
  Profile p;
  p.device = spec.name;
  GemmConfigFit c;
  c.config = "library_default_bf16_gemm";
  c.dtype = DType::kBf16;
  c.tile_m = c.tile_n = c.tile_k = 64;
  c.c0 = 3;
  c.c_block_k = 0.02;
  c.c_wave = 1;
  c.c_mem = 1.1;
  p.gemm_configs.push_back(c);
  for (std::int64_t m : {64, 512, 4096}) {
    for (std::int64_t k : {512, 4096}) {
      GemmPoint pt;
      pt.op = "linear";
      pt.config = 0;
      pt.m = pt.n = m;
      pt.k = k;
      pt.grid = {static_cast<std::uint32_t>((m + 63) / 64),
                 static_cast<std::uint32_t>((m + 63) / 64), 1};
      GemmShape s;
      s.m = s.n = m;
      s.k = k;
      pt.us = gemm_wave_kernel_us(c, spec, gemm_work(c, s, blocks_from_grid(pt.grid, 1), 1, 2));
      p.gemm_points.push_back(pt);
    }
  }
  return p;
}

TEST(DtypeSubstitution, SameTensorRateIsASubstitutionOtherRatesAreScaled) {
  const DeviceCatalogue cat = shipped_catalogue();
  const DeviceSpec& h100 = cat.resolve("H100-SXM");
  EXPECT_EQ(dtype_substitution_flags(h100, DType::kBf16, DType::kBf16), 0u);
  EXPECT_EQ(dtype_substitution_flags(h100, DType::kBf16, DType::kFp16),
            prediction_flags::kDtypeSubstituted);
  EXPECT_EQ(dtype_substitution_flags(h100, DType::kBf16, DType::kFp8E4M3),
            prediction_flags::kSpecScaled);
}

TEST(DtypeSubstitution, Fp16OnTheGpusOwnBf16CalibrationIsNotSpecScaled) {
  DeviceCatalogue cat = shipped_catalogue();
  const DeviceSpec h100 = cat.resolve("H100-SXM");
  Predictor pred(std::move(cat), {bf16_h100(h100)});
  const TargetId t = pred.add_target("H100-SXM");
  KernelRecord r;
  r.op.kind = OpKind::kGemm;
  r.op.name = "linear";
  r.op.gemm.m = r.op.gemm.n = 1024;
  r.op.gemm.k = 2048;
  r.op.gemm.trans_b = true;
  r.op.gemm.a = r.op.gemm.b = DType::kFp16;
  const Prediction fp16 = pred.predict(r, KernelClass{}, t);
  EXPECT_EQ(fp16.model, ModelKind::kGemmWave);
  EXPECT_TRUE(fp16.has(prediction_flags::kDtypeSubstituted));
  EXPECT_FALSE(fp16.has(prediction_flags::kSpecScaled));
  r.op.gemm.a = r.op.gemm.b = DType::kBf16;
  const Prediction bf16 = pred.predict(r, KernelClass{}, t);
  EXPECT_FALSE(bf16.has(prediction_flags::kDtypeSubstituted));
  EXPECT_FALSE(bf16.has(prediction_flags::kSpecScaled));
  EXPECT_NEAR(fp16.us, bf16.us, 1e-9 * bf16.us);  // the same tensor cores, the same bytes
  // FP8 with no FP8 calibration anywhere: BF16 math rescaled by the peak ratio.
  r.op.gemm.a = r.op.gemm.b = DType::kFp8E4M3;
  const Prediction fp8 = pred.predict(r, KernelClass{}, t);
  EXPECT_TRUE(fp8.has(prediction_flags::kSpecScaled));
  EXPECT_FALSE(fp8.has(prediction_flags::kDtypeSubstituted));
  EXPECT_LT(fp8.us, bf16.us);
}

}  // namespace
}  // namespace pm2lat
