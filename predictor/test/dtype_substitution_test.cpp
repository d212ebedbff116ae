// A GEMM of a type the target has no calibration for runs on another type's: said as
// dtype_substituted when the tensor throughput is the same (FP16 on BF16), spec_scaled when the
// math had to be rescaled.
#include <gtest/gtest.h>

#include "nominal_gemm_table.h"
#include "pm2lat/models/dtype_substitution.h"
#include "pm2lat/predictor.h"

namespace pm2lat {
namespace {

DeviceCatalogue shipped_catalogue() {
  return DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
}

// A BF16 calibration of one nominal configuration on the H100, following its own model.
Profile bf16_h100(const DeviceSpec& spec) {
  std::vector<NominalGemmCall> calls;
  for (std::int64_t m : {64, 512, 4096}) {
    for (std::int64_t k : {512, 4096}) calls.push_back({m, m, k});
  }
  return nominal_gemm_table(spec, DType::kBf16, calls);
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
