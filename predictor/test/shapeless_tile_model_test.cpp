#include "pm2lat/models/shapeless_tile_model.h"

#include <gtest/gtest.h>

#include "pm2lat/classifier.h"
#include "pm2lat/models/roofline_model.h"

namespace pm2lat {
namespace {

// 100 SMs; FP32 10 TFLOP/s, TF32 100 TFLOP/s (1e6 FLOP/us per SM of TF32).
DeviceSpec gpu() {
  DeviceSpec s;
  s.name = "test";
  s.sm_count = 100;
  s.mem_bw_gbps = 1000;
  s.fp32_tflops = 10;
  s.tf32_tflops = 100;
  s.boost_clock_mhz = 1500;
  return s;
}

// A TF32 CUTLASS GEMM (64x64 tiles, K step 16) launched as cuDNN runs it for a convolution's
// gradient: no shape recorded, a configuration no profile has.
KernelRecord launch(std::uint32_t x, std::uint32_t z) {
  KernelRecord r;
  r.launch.name =
      "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4>("
      "cutlass_80_tensorop_s1688gemm_64x64_16x6_nt_align4::Params)";
  r.launch.grid = {x, 1, z};
  r.launch.block = {128, 1, 1};
  return r;
}

TEST(ShapelessTileModel, ALaunchWithoutShapeCostsItsWavesOfTypicalKLoops) {
  const DeviceSpec spec = gpu();
  const KernelRecord r = launch(16, 32);  // 512 blocks: 6 waves over 100 SMs
  const KernelClass cls = classify_kernel(r.launch.name);
  const Prediction p = shapeless_tile_prediction(r, cls, spec, DType::kFp32, true);
  EXPECT_EQ(p.model, ModelKind::kGemmWave);
  EXPECT_TRUE(p.flags & prediction_flags::kNoShape);
  EXPECT_TRUE(p.flags & prediction_flags::kFallback);
  // One tile step: 2 * 64 * 64 * 16 FLOP at 1e6 FLOP/us per SM.
  const double step_us = 2.0 * 64 * 64 * 16 / 1e6;
  const double expected =
      kUncalibratedFixedUs + uncalibrated_inverse_efficiency(cls, DType::kTf32, spec, true) * 6 *
                                 (kTypicalReduction / 16) * step_us;
  EXPECT_NEAR(p.us, expected, 1e-6 * expected);
  // Far above an empty kernel's launch, as a launch of 512 tiles must be.
  EXPECT_GT(p.us, 10 * kMinimumKernelUs);
}

TEST(ShapelessTileModel, MoreWavesCostMore) {
  const DeviceSpec spec = gpu();
  const KernelClass cls = classify_kernel(launch(1, 1).launch.name);
  const double one_wave =
      shapeless_tile_prediction(launch(50, 1), cls, spec, DType::kFp32, true).us;
  const double four_waves =
      shapeless_tile_prediction(launch(400, 1), cls, spec, DType::kFp32, true).us;
  EXPECT_NEAR(four_waves - kUncalibratedFixedUs, 4 * (one_wave - kUncalibratedFixedUs), 1e-9);
}

TEST(ShapelessTileModel, ASingleBlockOrAnUnnamedKernelTakesTheRoofline) {
  const DeviceSpec spec = gpu();
  const KernelRecord one = launch(1, 1);
  const Prediction p =
      shapeless_tile_prediction(one, classify_kernel(one.launch.name), spec, DType::kFp32, true);
  EXPECT_EQ(p.model, ModelKind::kRoofline);
  KernelRecord unnamed = launch(16, 32);
  KernelClass cls;
  const Prediction q = shapeless_tile_prediction(unnamed, cls, spec, DType::kFp32, true);
  EXPECT_EQ(q.model, ModelKind::kRoofline);
}

TEST(ShapelessTileModel, TheNameSaysWhichGenerationsMmaTheKernelWasBuiltFor) {
  EXPECT_EQ(kernel_mma_generation("sm90"), 9);
  EXPECT_EQ(kernel_mma_generation("sm90a"), 9);
  EXPECT_EQ(kernel_mma_generation("sm80"), 8);
  EXPECT_EQ(kernel_mma_generation("sm100"), 10);
  EXPECT_EQ(kernel_mma_generation("sm120"), 12);
  EXPECT_EQ(kernel_mma_generation("ampere"), 8);
  EXPECT_EQ(kernel_mma_generation("volta"), 7);
  EXPECT_EQ(kernel_mma_generation(""), 0);
  EXPECT_EQ(kernel_mma_generation("small"), 0);
  EXPECT_EQ(kernel_mma_generation("sm"), 0);
  EXPECT_EQ(classify_kernel(launch(1, 1).launch.name).gemm.arch, "sm80");
}

// An Ampere-built tensor-core kernel reaches a Hopper GPU's peak only as far as mma.sync goes;
// on an Ampere GPU, or built for Hopper, it runs at the native efficiency; SIMT math and
// kernels whose name gives no generation are not capped.
TEST(ShapelessTileModel, AnEarlierGenerationsTensorKernelOnHopperRunsUnderItsMmaCeiling) {
  DeviceSpec hopper = gpu();
  hopper.cc_major = 9;
  DeviceSpec ampere = gpu();
  ampere.cc_major = 8;
  const KernelClass sm80 = classify_kernel(launch(1, 1).launch.name);
  const double native = 1.0 / kNativeTileEfficiency;
  EXPECT_DOUBLE_EQ(uncalibrated_inverse_efficiency(sm80, DType::kTf32, ampere, true), native);
  EXPECT_DOUBLE_EQ(uncalibrated_inverse_efficiency(sm80, DType::kTf32, hopper, true),
                   native / kSynchronousMmaCeiling);
  EXPECT_DOUBLE_EQ(uncalibrated_inverse_efficiency(sm80, DType::kFp32, hopper, true), native);
  const KernelClass sm90 = classify_kernel(
      "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32_"
      "warpgroupsize1x1x1_g1_execute_segment_k_off_kernel__5x_cudnn");
  ASSERT_EQ(kernel_mma_generation(sm90.gemm.arch), 9);
  EXPECT_DOUBLE_EQ(uncalibrated_inverse_efficiency(sm90, DType::kTf32, hopper, true), native);
  // Built for Hopper, forecast for an Ampere GPU: that GPU runs a kernel of its own.
  EXPECT_DOUBLE_EQ(uncalibrated_inverse_efficiency(sm90, DType::kTf32, ampere, false), native);
  // An Ampere GPU's launch forecast for a Hopper GPU: Hopper's library runs a kernel of its
  // own, not the one measured.
  EXPECT_DOUBLE_EQ(uncalibrated_inverse_efficiency(sm80, DType::kTf32, hopper, false), native);
  KernelClass unnamed = sm80;
  unnamed.gemm.arch.clear();
  EXPECT_DOUBLE_EQ(uncalibrated_inverse_efficiency(unnamed, DType::kTf32, hopper, true),
                   kUncalibratedInverseEfficiency);
  // The same launch is forecast slower on the GPU its MMA does not fill.
  const KernelRecord r = launch(16, 32);
  EXPECT_GT(shapeless_tile_prediction(r, sm80, hopper, DType::kFp32, true).us,
            shapeless_tile_prediction(r, sm80, ampere, DType::kFp32, true).us);
}

}  // namespace
}  // namespace pm2lat
