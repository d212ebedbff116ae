// Low-precision GEMMs: scaling names and bytes, the scaled_gemm profile section, the call
// model and the predictor that serves it.
#include <gtest/gtest.h>

#include <cmath>

#include "pm2lat/gemm_scaling.h"
#include "pm2lat/models/scaled_gemm_model.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_io.h"

namespace pm2lat {
namespace {

DeviceSpec blackwell(const char* name, int sms, double fp8, double fp4, double bw,
                     const char* cpu = "") {
  DeviceSpec s;
  s.name = name;
  s.arch = "Blackwell";
  s.cc_major = 10;
  s.sm_count = sms;
  s.boost_clock_mhz = 1965;
  s.mem_bw_gbps = bw;
  s.fp32_tflops = 75;
  s.bf16_tflops = fp8 / 2;
  s.fp8_tflops = fp8;
  s.fp4_tflops = fp4;
  s.host_cpu = cpu;
  return s;
}

ScaledGemmFit fp8_fit(const char* backend, double host_us = 0) {
  ScaledGemmFit f;
  f.config = backend;
  f.dtype = DType::kFp8E4M3;
  f.scaling = host_us > 0 ? GemmScaling::kBlock128 : GemmScaling::kPerTensor;
  f.gemm.config = backend;
  f.gemm.dtype = f.dtype;
  f.gemm.tile_m = 128;
  f.gemm.tile_n = 128;
  f.gemm.tile_k = 128;
  f.gemm.c0 = 2.0;
  f.gemm.c_block_k = 0.05;
  f.gemm.c_wave = 0.5;
  f.gemm.c_mem = 1.2;
  f.quant_c0 = 1.3;
  f.quant_c_byte = 1.5;
  f.host_us = host_us;
  f.host_unaligned_us = host_us > 0 ? 1.3 * host_us : 0;
  return f;
}

// A profile of one backend whose calibration points follow its own model exactly.
Profile profile_of(const DeviceSpec& spec, std::vector<ScaledGemmFit> fits) {
  Profile p;
  p.device = spec.name;
  p.basis = TimeBasis::kKernel;
  p.graph_replay = true;
  p.scaled_gemm_fits = std::move(fits);
  for (std::size_t f = 0; f < p.scaled_gemm_fits.size(); ++f) {
    for (std::int64_t m : {1, 16, 128, 1024, 8192}) {
      for (std::int64_t n : {1024, 4096, 16384}) {
        for (std::int64_t k : {1024, 4096, 16384}) {
          const ScaledGemmFit& fit = p.scaled_gemm_fits[f];
          const double us = scaled_gemm_time(fit, spec, scaled_gemm_work(fit, m, n, k)).call_us();
          p.scaled_gemm_points.push_back({static_cast<std::int32_t>(f), m, n, k, us});
        }
      }
    }
  }
  return p;
}

KernelRecord fp8_call(std::int64_t m, std::int64_t n, std::int64_t k,
                      GemmScaling scaling = GemmScaling::kPerTensor) {
  KernelRecord r;
  r.op.kind = OpKind::kGemm;
  r.op.gemm.m = m;
  r.op.gemm.n = n;
  r.op.gemm.k = k;
  r.op.gemm.trans_b = true;
  r.op.gemm.a = r.op.gemm.b = DType::kFp8E4M3;
  r.op.gemm.c = DType::kBf16;
  r.op.gemm.scaling = scaling;
  return r;
}

TEST(GemmScaling, NamesAndTableLabelsRoundTrip) {
  for (GemmScaling s : {GemmScaling::kNone, GemmScaling::kPerTensor, GemmScaling::kPerToken,
                        GemmScaling::kBlock128, GemmScaling::kMx32, GemmScaling::kNv16}) {
    EXPECT_EQ(parse_gemm_scaling(to_string(s)), s);
  }
  DType t = DType::kUnknown;
  GemmScaling s = GemmScaling::kNone;
  ASSERT_TRUE(parse_gemm_type_label("fp8_block", t, s));
  EXPECT_EQ(t, DType::kFp8E4M3);
  EXPECT_EQ(s, GemmScaling::kBlock128);
  ASSERT_TRUE(parse_gemm_type_label("nvfp4", t, s));
  EXPECT_EQ(t, DType::kFp4E2M1);
  EXPECT_EQ(s, GemmScaling::kNv16);
  ASSERT_TRUE(parse_gemm_type_label("bf16", t, s));
  EXPECT_EQ(s, GemmScaling::kNone);
  EXPECT_FALSE(parse_gemm_type_label("int4_wo", t, s));
  EXPECT_EQ(gemm_type_label(DType::kFp8E4M3, GemmScaling::kPerTensor), "fp8");
  EXPECT_EQ(gemm_type_label(DType::kFp4E2M1, GemmScaling::kNv16), "nvfp4");
  EXPECT_EQ(gemm_type_label(DType::kBf16, GemmScaling::kNone), "bf16");
}

TEST(GemmScaling, ScaleBytesFollowTheBlockLayouts) {
  // 1x128 activation blocks and 128x128 weight blocks of FP32.
  EXPECT_DOUBLE_EQ(activation_scale_bytes(GemmScaling::kBlock128, 64, 7168), 4.0 * 64 * 56);
  EXPECT_DOUBLE_EQ(weight_scale_bytes(GemmScaling::kBlock128, 4096, 7168), 4.0 * 32 * 56);
  // NVFP4: one byte per 16 elements, plus the FP32 tensor scale.
  EXPECT_DOUBLE_EQ(activation_scale_bytes(GemmScaling::kNv16, 8, 4096), 8.0 * 256 + 4);
  EXPECT_DOUBLE_EQ(weight_scale_bytes(GemmScaling::kMx32, 4096, 4096), 4096.0 * 128);
  EXPECT_DOUBLE_EQ(activation_scale_bytes(GemmScaling::kNone, 8, 4096), 0);
}

TEST(ScaledGemmModel, EagerCallsNeverTakeLessThanTheirHostTime) {
  const DeviceSpec b200 = blackwell("B200-SXM", 148, 4500, 9000, 7700);
  const ScaledGemmFit f = fp8_fit("vllm:DeepGemm", 180);
  const ScaledGemmTime small = scaled_gemm_time(f, b200, scaled_gemm_work(f, 16, 1024, 1024));
  EXPECT_DOUBLE_EQ(small.call_us(), 180);
  EXPECT_LT(small.device_us(), 180);
  // Token counts whose FP32 scales are not 16-byte aligned take the other host path.
  const ScaledGemmTime odd = scaled_gemm_time(f, b200, scaled_gemm_work(f, 17, 1024, 1024));
  EXPECT_DOUBLE_EQ(odd.call_us(), 1.3 * 180);
  const ScaledGemmTime big = scaled_gemm_time(f, b200, scaled_gemm_work(f, 16384, 16384, 16384));
  EXPECT_GT(big.call_us(), 180);
  EXPECT_DOUBLE_EQ(big.call_us(), big.device_us());
}

TEST(ScaledGemmModel, QuantisationReadsBf16AndWritesTheLowPrecisionCopyAndScales) {
  EXPECT_DOUBLE_EQ(scaled_gemm_quant_bytes(DType::kFp8E4M3, GemmScaling::kPerTensor, 8, 1024),
                   8 * 1024 * 3.0 + 4);
  EXPECT_DOUBLE_EQ(scaled_gemm_quant_bytes(DType::kFp4E2M1, GemmScaling::kNv16, 8, 1024),
                   8 * 1024 * 2.5 + 8 * 64 + 4);
  const ScaledGemmFit f = fp8_fit("b");
  const ScaledGemmWork w = scaled_gemm_work(f, 256, 4096, 8192);
  // FP8 operands, BF16 output.
  EXPECT_DOUBLE_EQ(w.gemm.bytes, 256.0 * 8192 + 4096.0 * 8192 + 2.0 * 256 * 4096 + 8);
  EXPECT_DOUBLE_EQ(w.gemm.k_iters, 64);
  EXPECT_DOUBLE_EQ(w.gemm.blocks, 2.0 * 32);
}

TEST(ScaledGemmSection, RoundTripsAndNamesTheFieldOnError) {
  const DeviceSpec b200 = blackwell("B200-SXM", 148, 4500, 9000, 7700);
  Profile p = profile_of(b200, {fp8_fit("vllm:Cutlass"), fp8_fit("vllm:DeepGemm", 180)});
  const Profile q = parse_profile(serialize_profile(p), "p.json");
  ASSERT_EQ(q.scaled_gemm_fits.size(), 2u);
  EXPECT_EQ(q.scaled_gemm_fits[1].config, "vllm:DeepGemm");
  EXPECT_EQ(q.scaled_gemm_fits[1].scaling, GemmScaling::kBlock128);
  EXPECT_DOUBLE_EQ(q.scaled_gemm_fits[1].host_unaligned_us, 1.3 * 180);
  EXPECT_DOUBLE_EQ(q.scaled_gemm_fits[0].gemm.c_block_k, 0.05);
  EXPECT_EQ(q.scaled_gemm_fits[0].gemm.tile_k, 128);
  ASSERT_EQ(q.scaled_gemm_points.size(), p.scaled_gemm_points.size());
  EXPECT_DOUBLE_EQ(q.scaled_gemm_points[7].us, p.scaled_gemm_points[7].us);

  std::string text = serialize_profile(p);
  auto expect_error = [](const std::string& t, const std::string& field) {
    try {
      parse_profile(t, "bad.json");
      ADD_FAILURE() << "accepted: " << field;
    } catch (const ProfileError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const auto at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return t.replace(at, from.size(), to);
  };
  // The section's keys come out sorted: its "version" is the first one in the text.
  expect_error(replaced("\"version\":1}", "\"version\":2}"), "scaled_gemm.version");
  expect_error(replaced("\"scaling\":\"block128\"", "\"scaling\":\"block64\""),
               "scaled_gemm.configs[1].scaling");
  expect_error(replaced("\"host_us\":180.0", "\"host_us\":-1"), "scaled_gemm.configs[1].host_us");
}

TEST(ScaledGemmPredictor, WholeCallsOnTheirOwnGpuFollowTheCalibration) {
  DeviceCatalogue cat({blackwell("B200-SXM", 148, 4500, 9000, 7700)});
  const DeviceSpec& b200 = *cat.find("B200-SXM");
  Predictor pred(cat, {profile_of(b200, {fp8_fit("vllm:Cutlass")})});
  const TargetId t = pred.add_target("B200-SXM");
  KernelClass call;
  call.family = KernelFamily::kGemm;
  call.config = "vllm:Cutlass";
  PredictOptions o;
  o.graph_replay = true;
  const ScaledGemmFit f = fp8_fit("vllm:Cutlass");
  for (std::int64_t m : {16, 3000}) {
    const Prediction p = pred.predict(fp8_call(m, 4096, 4096), call, t, o);
    const double model = scaled_gemm_time(f, b200, scaled_gemm_work(f, m, 4096, 4096)).call_us();
    EXPECT_NEAR(p.us, model, 1e-6 * model) << m;
    EXPECT_EQ(p.config, "vllm:Cutlass");
    EXPECT_EQ(p.flags, 0u);
  }
  // A GEMM kernel named by the library is the GEMM alone: no quantisation kernel.
  KernelClass kernel = call;
  kernel.gemm.scheme = GemmNameScheme::kCutlass3;
  const Prediction k = pred.predict(fp8_call(3000, 4096, 4096), kernel, t, o);
  const Prediction c = pred.predict(fp8_call(3000, 4096, 4096), call, t, o);
  EXPECT_LT(k.us, c.us);
  // A BF16 GEMM is not served by the low-precision backends.
  KernelRecord bf16 = fp8_call(128, 4096, 4096);
  bf16.op.gemm.a = bf16.op.gemm.b = DType::kBf16;
  bf16.op.gemm.scaling = GemmScaling::kNone;
  EXPECT_NE(pred.predict(bf16, KernelClass{}, t, o).config, "vllm:Cutlass");
}

TEST(ScaledGemmPredictor, AnUncalibratedGpuBorrowsItsGenerationsHostAlikeDonor) {
  DeviceCatalogue cat({blackwell("B200-SXM", 148, 4500, 9000, 7700),
                       blackwell("GB200", 148, 5000, 10000, 8000, "Grace"),
                       blackwell("GB300", 148, 5000, 15000, 8000, "Grace")});
  const DeviceSpec& b200 = *cat.find("B200-SXM");
  const DeviceSpec& gb200 = *cat.find("GB200");
  // The two calibrated GPUs differ in host time only; GB300 shares GB200's Grace host.
  Predictor pred(cat, {profile_of(b200, {fp8_fit("vllm:DeepGemm", 180)}),
                       profile_of(gb200, {fp8_fit("vllm:DeepGemm", 300)})});
  const TargetId t = pred.add_target("GB300");
  KernelClass call;
  call.family = KernelFamily::kGemm;
  call.config = "vllm:DeepGemm";
  const Prediction p = pred.predict(fp8_call(16, 1024, 1024, GemmScaling::kBlock128), call, t);
  EXPECT_NEAR(p.us, 300, 1e-6);
  EXPECT_TRUE(p.has(prediction_flags::kSpecScaled));
}

TEST(ScaledGemmPredictor, FasterTensorCoresSpeedUpTheCallsTheyBound) {
  // GB300 has 1.5x GB200's NVFP4 tensor throughput on as many SMs and the same bandwidth.
  DeviceCatalogue cat({blackwell("GB200", 148, 5000, 10000, 8000, "Grace"),
                       blackwell("GB300", 148, 5000, 15000, 8000, "Grace")});
  ScaledGemmFit f = fp8_fit("vllm:FlashInferCuteDslNvFp4");
  f.dtype = DType::kFp4E2M1;
  f.scaling = GemmScaling::kNv16;
  f.gemm.dtype = f.dtype;
  f.gemm.tile_k = 256;
  f.gemm.c_wave_k = 0.2;
  Predictor pred(cat, {profile_of(*cat.find("GB200"), {f})});
  const TargetId gb200 = pred.add_target("GB200"), gb300 = pred.add_target("GB300");
  KernelClass kernel;
  kernel.family = KernelFamily::kGemm;
  kernel.gemm.scheme = GemmNameScheme::kCuteDsl;  // the GEMM kernel alone
  auto gemm_us = [&](TargetId t, std::int64_t m, std::int64_t n, std::int64_t k) {
    KernelRecord r = fp8_call(m, n, k, GemmScaling::kNv16);
    r.op.gemm.a = r.op.gemm.b = DType::kFp4E2M1;
    PredictOptions o;
    o.graph_replay = true;
    return pred.predict(r, kernel, t, o).us;
  };
  // Compute-bound: the K loop shrinks by about 1.5^(2/3).
  const double big = gemm_us(gb300, 16384, 16384, 16384) / gemm_us(gb200, 16384, 16384, 16384);
  EXPECT_LT(big, 0.82);
  EXPECT_GT(big, std::pow(1.5, -2.0 / 3.0) - 0.01);
  // A few tokens stream the weights: mostly the bandwidth, which is the same.
  const double small = gemm_us(gb300, 16, 4096, 16384) / gemm_us(gb200, 16, 4096, 16384);
  EXPECT_GT(small, 0.9);
  EXPECT_LE(small, 1.0);
}

TEST(ScaledGemmModel, AKStepCarriesByTheRooflineShareOfEachRate) {
  // H200 vs H100: the same tensor cores, 1.43x the bandwidth.
  DeviceSpec h100 = blackwell("H100-SXM", 132, 1979, 0, 3350);
  DeviceSpec h200 = blackwell("H200-SXM", 132, 1979, 0, 4800);
  const ScaledGemmFit f = fp8_fit("b");
  // A token streams 16384 x 16384 FP8 weights: nearly all bandwidth.
  EXPECT_NEAR(scaled_gemm_k_step_scale(f, h100, h200, 1, 16384, 16384), 3350.0 / 4800, 0.03);
  // 16384 tokens: nearly all tensor cores, which did not change.
  EXPECT_NEAR(scaled_gemm_k_step_scale(f, h100, h200, 16384, 16384, 16384), 1.0, 0.03);
  EXPECT_DOUBLE_EQ(scaled_gemm_k_step_scale(f, h100, h100, 64, 4096, 4096), 1.0);
}

TEST(ScaledGemmPredictor, CrossGpuRecordsRunTheTargetsOwnBackendChoice) {
  DeviceCatalogue cat({blackwell("B200-SXM", 148, 4500, 9000, 7700),
                       blackwell("GB200", 148, 5000, 10000, 8000, "Grace")});
  const DeviceSpec& b200 = *cat.find("B200-SXM");
  Predictor pred(cat, {profile_of(b200, {fp8_fit("vllm:Cutlass")})});
  const TargetId t = pred.add_target("B200-SXM");
  KernelClass call;
  call.family = KernelFamily::kGemm;
  call.config = "vllm:SomeOtherBackend";
  PredictOptions o;
  o.source_device = "GB200";
  o.graph_replay = true;
  const Prediction p = pred.predict(fp8_call(128, 4096, 4096), call, t, o);
  EXPECT_EQ(p.config, "vllm:Cutlass");
  EXPECT_TRUE(p.has(prediction_flags::kConfigChosen));
}

TEST(ScaledGemmPredictor, QuantisationKernelsStreamTheirBytes) {
  DeviceCatalogue cat({blackwell("B200-SXM", 148, 4500, 9000, 7700)});
  const DeviceSpec& b200 = *cat.find("B200-SXM");
  Predictor pred(cat, {profile_of(b200, {fp8_fit("vllm:Cutlass")})});
  const TargetId t = pred.add_target("B200-SXM");
  KernelClass quant;
  quant.family = KernelFamily::kQuantize;
  quant.dtype = DType::kFp8E4M3;
  KernelRecord small, large;
  small.op.vec.rows = 16;
  small.op.vec.cols = 4096;
  small.op.vec.bytes_read = 2.0 * 16 * 4096;
  large = small;
  large.op.vec.rows = 16384;
  large.op.vec.bytes_read = 2.0 * 16384 * 4096;
  const Prediction ps = pred.predict(small, quant, t);
  const Prediction pl = pred.predict(large, quant, t);
  EXPECT_EQ(ps.model, ModelKind::kMemoryBound);
  EXPECT_GE(ps.us, 1.3);
  // 16384 x 4096 BF16 in, FP8 out: 200 MB at 7.7 TB/s times the fitted share.
  const double bytes = 3.0 * 16384 * 4096 + 4;
  EXPECT_NEAR(pl.us, 1.3 + 1.5 * bytes / 7.7e6, 1e-6);
}

}  // namespace
}  // namespace pm2lat
