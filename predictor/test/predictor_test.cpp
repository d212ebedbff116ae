#include <gtest/gtest.h>

#include "pm2lat/classifier.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_error.h"

namespace pm2lat {
namespace {

// A calibrated "T4" whose one GEMM config follows the wave model exactly, so predictions
// can be checked against the model by hand.
Profile synthetic_t4(const DeviceSpec& spec) {
  Profile p;
  p.device = "T4";
  p.basis = TimeBasis::kKernel;
  GemmConfigFit c;
  c.config = "volta_sgemm_128x64_nn";
  c.tile_m = 128;
  c.tile_n = 64;
  c.tile_k = 8;
  c.c0 = 4;
  c.c_wave_k = 0.5;
  c.c_wave = 2;
  c.tile_m_on_n = true;  // grid.x runs over n in 128-wide tiles
  p.gemm_configs.push_back(c);
  for (std::int64_t m : {128, 256, 512, 1024, 2048}) {
    for (std::int64_t k : {64, 256, 1024}) {
      GemmPoint pt;
      pt.op = "bmm";
      pt.config = 0;
      pt.batch = 4;
      pt.m = m;
      pt.n = m;
      pt.k = k;
      GemmShape s;
      s.batch = 4;
      s.m = m;
      s.n = m;
      s.k = k;
      pt.grid = {static_cast<std::uint32_t>((m + 127) / 128),
                 static_cast<std::uint32_t>((m + 63) / 64), 4};
      pt.us = gemm_wave_kernel_us(c, spec, gemm_work(c, s, blocks_from_grid(pt.grid, 4), 1, 4));
      p.gemm_points.push_back(pt);
    }
  }
  VectorFit v;
  v.op = "elementwise";
  v.c0 = 3;
  v.c_byte = 1.25;
  p.vector_fits.push_back(v);
  return p;
}

class PredictorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
    const DeviceSpec t4 = cat.resolve("T4");
    std::vector<Profile> profiles{synthetic_t4(t4)};
    predictor_ = std::make_unique<Predictor>(std::move(cat), std::move(profiles));
  }
  KernelRecord gemm_record(std::int64_t m, std::int64_t k) const {
    KernelRecord r;
    r.launch.name = "volta_sgemm_128x64_nn";
    r.launch.grid = {static_cast<std::uint32_t>((m + 127) / 128),
                     static_cast<std::uint32_t>((m + 63) / 64), 4};
    r.op.kind = OpKind::kGemm;
    r.op.name = "bmm";
    r.op.gemm.batch = 4;
    r.op.gemm.m = m;
    r.op.gemm.n = m;
    r.op.gemm.k = k;
    r.op.gemm.a = DType::kFp32;
    return r;
  }
  std::unique_ptr<Predictor> predictor_;
};

TEST_F(PredictorTest, SameGpuUsesTheRecordsOwnConfiguration) {
  const TargetId t4 = predictor_->add_target("Tesla T4");
  const auto rec = gemm_record(384, 512);  // between calibrated shapes
  const Prediction p =
      predictor_->predict(rec, classify_kernel(rec.launch.name), t4, {TimeBasis::kKernel, "T4"});
  EXPECT_EQ(p.model, ModelKind::kGemmWave);
  EXPECT_EQ(p.config, "volta_sgemm_128x64_nn");
  EXPECT_FALSE(p.has(prediction_flags::kConfigChosen));
  EXPECT_FALSE(p.has(prediction_flags::kSpecScaled));
  // The calibration points follow the model exactly: residuals are zero.
  const DeviceSpec& spec = *predictor_->target(t4).spec;
  const auto& c = predictor_->target(t4).profiles[0]->gemm_configs[0];
  const double expect = gemm_wave_kernel_us(
      c, spec, gemm_work(c, rec.op.gemm, blocks_from_grid(rec.launch.grid, 4), 1, 4));
  EXPECT_NEAR(p.us, expect, 1e-6 * expect);
}

TEST_F(PredictorTest, AnotherGpusKernelIsReplacedByTheTargetsChoice) {
  const TargetId t4 = predictor_->add_target("T4");
  auto rec = gemm_record(1024, 1024);
  rec.launch.name =
      "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3_warpsize1x4x1_ffma_aligna4_"
      "alignc4_execute_kernel__5x_cublas";
  rec.launch.grid = {16, 16, 4};
  const Prediction p =
      predictor_->predict(rec, classify_kernel(rec.launch.name), t4, {TimeBasis::kKernel, "H100"});
  EXPECT_TRUE(p.has(prediction_flags::kConfigChosen));
  EXPECT_EQ(p.config, "volta_sgemm_128x64_nn");
  const auto own =
      predictor_->predict(gemm_record(1024, 1024), classify_kernel("volta_sgemm_128x64_nn"), t4,
                          {TimeBasis::kKernel, "T4"});
  EXPECT_NEAR(p.us, own.us, 1e-9 * own.us);  // same kernel, same shape: the same answer
}

// The GEMM model holds calibration dimensions in 32 bits: a profile beyond that is refused
// naming the field, never truncated into other predictions.
TEST(PredictorProfiles, AGemmDimensionBeyond32BitsIsRefusedNamingTheField) {
  DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  Profile p = synthetic_t4(cat.resolve("T4"));
  p.file = "t4.json";
  p.gemm_points[3].k = std::int64_t{1} << 31;
  std::vector<Profile> profiles{p};
  try {
    Predictor predictor(std::move(cat), std::move(profiles));
    FAIL() << "accepted k = 2^31";
  } catch (const ProfileError& e) {
    EXPECT_EQ(e.file(), "t4.json");
    EXPECT_EQ(e.field(), "gemm.points.k");
  }
}

TEST(PredictorGraphTiming, IsolatedKernelsPayTheMeasuredOffsetOverGraphTimedTables) {
  DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  const DeviceSpec& t4 = cat.resolve("T4");
  Profile graph = synthetic_t4(t4);
  graph.graph_replay = true;
  Profile measured;  // kernels measured in isolation on the same GPU: only the offset
  measured.device = "T4";
  measured.graph_kernel_offset_us = 2.5;
  Predictor predictor(cat, {graph, measured});
  const TargetId t = predictor.add_target("T4");
  KernelRecord r;
  r.launch.name = "volta_sgemm_128x64_nn";
  r.launch.grid = {4, 8, 4};
  r.op.kind = OpKind::kGemm;
  r.op.name = "bmm";
  r.op.gemm.batch = 4;
  r.op.gemm.m = r.op.gemm.n = 512;
  r.op.gemm.k = 256;
  r.op.gemm.a = DType::kFp32;
  const KernelClass cls = classify_kernel(r.launch.name);
  PredictOptions as_graph;
  as_graph.graph_replay = true;
  const double in_graph = predictor.predict(r, cls, t, as_graph).us;
  EXPECT_NEAR(predictor.predict(r, cls, t).us, in_graph + 2.5, 1e-9);
  // A GPU that measured no offset takes the most similar GPU's.
  const TargetId l4 = predictor.add_target("L4");
  EXPECT_NEAR(predictor.predict(r, cls, l4).us - predictor.predict(r, cls, l4, as_graph).us, 2.5,
              1e-9);
  // Tables timed in isolation get no offset.
  Predictor isolated(DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json"),
                     {synthetic_t4(t4), measured});
  const TargetId ti = isolated.add_target("T4");
  EXPECT_NEAR(isolated.predict(r, cls, ti).us, isolated.predict(r, cls, ti, as_graph).us, 1e-9);
}

TEST_F(PredictorTest, AKernelObservedOnAnUncalibratedGpuRunsAsItselfFromASameGenerationFit) {
  // V100 (Volta, 7.0) has no profile; the T4 (Turing, 7.5) calibrated the kernel it ran.
  const TargetId v100 = predictor_->add_target("V100-PCIE-32GB");
  const auto rec = gemm_record(512, 256);
  const Prediction p = predictor_->predict(rec, classify_kernel(rec.launch.name), v100,
                                           {TimeBasis::kKernel, "V100-PCIE-32GB"});
  EXPECT_EQ(p.config, "volta_sgemm_128x64_nn");
  EXPECT_FALSE(p.has(prediction_flags::kConfigChosen));
  EXPECT_TRUE(p.has(prediction_flags::kSpecScaled));
  // A kernel no GPU calibrated: the configuration is chosen by shape.
  auto other = rec;
  other.launch.name = "volta_sgemm_64x64_nn";
  EXPECT_TRUE(predictor_
                  ->predict(other, classify_kernel(other.launch.name), v100,
                            {TimeBasis::kKernel, "V100-PCIE-32GB"})
                  .has(prediction_flags::kConfigChosen));
}

TEST_F(PredictorTest, UncalibratedTargetIsSpecScaled) {
  const TargetId a10 = predictor_->add_target("A10");  // no profile: borrows the T4 one
  EXPECT_TRUE(predictor_->target(a10).spec_scaled);
  const auto rec = gemm_record(2048, 1024);
  const Prediction p =
      predictor_->predict(rec, classify_kernel(rec.launch.name), a10, {TimeBasis::kKernel, "T4"});
  EXPECT_TRUE(p.has(prediction_flags::kSpecScaled));
  const TargetId t4 = predictor_->add_target("T4");
  const Prediction on_t4 =
      predictor_->predict(rec, classify_kernel(rec.launch.name), t4, {TimeBasis::kKernel, "T4"});
  EXPECT_LT(p.us, on_t4.us);  // A10: more SMs, more FP32 throughput, more bandwidth
}

TEST_F(PredictorTest, MemoryBoundAndFallbackPaths) {
  const TargetId t4 = predictor_->add_target("T4");
  KernelRecord r;
  r.launch.name =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3>)";
  r.op.kind = OpKind::kElementwise;
  r.op.name = "aten::add";
  r.op.vec.rows = 1024;
  r.op.vec.cols = 1024;
  r.op.vec.bytes_read = 8.0 * 1024 * 1024;
  r.op.vec.bytes_written = 4.0 * 1024 * 1024;
  const Prediction p = predictor_->predict(r, classify_kernel(r.launch.name), t4);
  EXPECT_EQ(p.model, ModelKind::kMemoryBound);
  const double bw = predictor_->target(t4).spec->bytes_per_us();
  EXPECT_NEAR(p.us, 3 + 1.25 * 12.0 * 1024 * 1024 / bw, 1e-6);

  KernelRecord unknown;
  unknown.launch.name = "my_custom_kernel";
  const Prediction f = predictor_->predict(unknown, classify_kernel(unknown.launch.name), t4);
  EXPECT_TRUE(f.has(prediction_flags::kFallback));
  EXPECT_TRUE(f.has(prediction_flags::kNoShape));
  EXPECT_GT(f.us, 0);
}

// A runtime launch outside any library call carries no shape: an ATen elementwise kernel's
// work comes from its launch (blocks x 128 threads x 4 elements of each of its 3 tensors).
TEST_F(PredictorTest, AnElementwiseLaunchWithoutAShapeIsPricedFromItsLaunchGeometry) {
  const TargetId t4 = predictor_->add_target("T4");
  KernelRecord r;
  r.launch.name =  // vectorized_elementwise_kernel<4, CUDAFunctor_add<float>, std::array<char*, 3>>
      "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_15CUDAFunctor_addIfEESt5arrayIPcLm3EEEE"
      "viT0_T1_";
  r.launch.grid = Dim3{2048, 1, 1};
  r.launch.block = Dim3{128, 1, 1};
  const Prediction p = predictor_->predict(r, classify_kernel(r.launch.name), t4);
  EXPECT_EQ(p.model, ModelKind::kMemoryBound);
  EXPECT_TRUE(p.has(prediction_flags::kNoShape));
  EXPECT_FALSE(p.has(prediction_flags::kFallback));
  const double bytes = 2048.0 * 128 * 4 * 4 * 3;
  const double bw = predictor_->target(t4).spec->bytes_per_us();
  EXPECT_NEAR(p.us, 3 + 1.25 * bytes / bw, 1e-6);
}

// cuBLAS's split-K reduction inherits its call's GEMM: it moves the FP32 partial sums of two
// slices and writes the output, whatever the launch looks like.
TEST_F(PredictorTest, ASplitKReductionIsPricedFromItsGemmsShape) {
  const TargetId t4 = predictor_->add_target("T4");
  KernelRecord r;
  r.launch.name = "splitKreduce_kernel";
  r.launch.grid = Dim3{768, 1, 1};
  r.launch.block = Dim3{256, 1, 1};
  r.op.kind = OpKind::kGemm;
  r.op.name = "cublasGemmEx";
  r.op.gemm.m = 768;
  r.op.gemm.n = 256;
  r.op.gemm.k = 8192;
  r.op.gemm.a = DType::kBf16;
  const Prediction p = predictor_->predict(r, classify_kernel(r.launch.name), t4);
  EXPECT_EQ(p.model, ModelKind::kMemoryBound);
  const double out = 768.0 * 256;
  const double bw = predictor_->target(t4).spec->bytes_per_us();
  EXPECT_NEAR(p.us, 3 + 1.25 * (2 * out * 4 + out * 2) / bw, 1e-6);
}

TEST(PredictorFixedCost, AFitWithoutFixedCostFloorsAtTheOperatorsFixedCostOnASimilarGpu) {
  DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  Profile t4 = synthetic_t4(cat.resolve("T4"));  // elementwise: c0 = 3
  Profile l4;                                    // made on large tensors only: no fixed cost
  l4.device = "L4";
  VectorFit v;
  v.op = "elementwise";
  v.c0 = 0;
  v.c_byte = 1.25;
  l4.vector_fits.push_back(v);
  Predictor predictor(cat, {t4, l4});
  const TargetId t = predictor.add_target("L4");
  KernelRecord r;
  r.launch.name =
      "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
      "at::detail::Array<char*, 3>)";
  r.op.kind = OpKind::kElementwise;
  r.op.name = "aten::add";
  r.op.vec.rows = 1;
  r.op.vec.cols = 256;
  r.op.vec.bytes_read = r.op.vec.bytes_written = 1024;
  const KernelClass cls = classify_kernel(r.launch.name);
  EXPECT_NEAR(predictor.predict(r, cls, t).us, 3.0, 1e-9);  // the T4's fixed cost, not ~0
  // Large tensors: the L4's own fit, untouched.
  r.op.vec.rows = 1 << 20;
  r.op.vec.bytes_read = r.op.vec.bytes_written = 4.0 * (1 << 28);
  const double bw = predictor.target(t).spec->bytes_per_us();
  EXPECT_NEAR(predictor.predict(r, cls, t).us, 1.25 * 8.0 * (1 << 28) / bw, 1e-6);
}

TEST_F(PredictorTest, UnknownTargetNamesCloseMatches) {
  try {
    predictor_->add_target("T44");
    FAIL();
  } catch (const UnknownDeviceError& e) {
    EXPECT_FALSE(e.close_matches().empty());
  }
}

}  // namespace
}  // namespace pm2lat
