// How a convolution kernel computes (models/conv_model.h, conv_algorithm): Winograd's
// algorithm loops over the input channels in every block, and a configuration chosen for
// another GPU runs the launch it would make there, not the record's.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "pm2lat/classifier.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/conv_model.h"
#include "pm2lat/predictor.h"

namespace pm2lat {
namespace {

constexpr const char* kFusedWinograd =
    "volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1";
constexpr const char* kBatchedGemm = "volta_sgemm_64x64_nn";

// A 3x3 convolution of stride 1 keeping its 56x56 size (VGG's third block).
ConvShape three_by_three(std::int64_t channels_in, std::int64_t channels_out) {
  ConvShape c;
  c.batch = 64;
  c.in_channels = channels_in;
  c.out_channels = channels_out;
  c.in_h = c.in_w = 56;
  c.kernel_h = c.kernel_w = 3;
  c.stride_h = c.stride_w = 1;
  c.pad_h = c.pad_w = 1;
  c.dtype = DType::kFp32;
  return c;
}

GemmConfigFit config_of(const std::string& name) {
  GemmConfigFit c = conv_kernel_config(classify_kernel(name), DType::kFp32);
  c.config = name;
  return c;
}

TEST(ConvAlgorithm, WinogradIsTheFusedKernelOrTheGemmOverThirtySixTransformPoints) {
  const ConvShape c = three_by_three(128, 256);
  EXPECT_EQ(conv_algorithm(kFusedWinograd, c, ConvPass::kForward, Dim3{448, 7, 4}),
            ConvAlgorithm::kWinogradFused);
  EXPECT_EQ(conv_algorithm(kBatchedGemm, c, ConvPass::kForward, Dim3{196, 4, 36}),
            ConvAlgorithm::kWinogradBatchedGemm);
  // The same GEMM launched once per convolution is its implicit GEMM.
  EXPECT_EQ(conv_algorithm(kBatchedGemm, c, ConvPass::kForward, Dim3{196, 4, 1}),
            ConvAlgorithm::kImplicitGemm);
  // F(4x4, 3x3) is for 3x3 filters of stride 1, in the forward pass.
  ConvShape strided = c;
  strided.stride_h = strided.stride_w = 2;
  EXPECT_EQ(conv_algorithm(kFusedWinograd, strided, ConvPass::kForward, Dim3{448, 7, 4}),
            ConvAlgorithm::kImplicitGemm);
  ConvShape pointwise = c;
  pointwise.kernel_h = pointwise.kernel_w = 1;
  EXPECT_EQ(conv_algorithm(kBatchedGemm, pointwise, ConvPass::kForward, Dim3{196, 4, 36}),
            ConvAlgorithm::kImplicitGemm);
  EXPECT_EQ(conv_algorithm(kFusedWinograd, c, ConvPass::kDataGrad, Dim3{448, 7, 4}),
            ConvAlgorithm::kImplicitGemm);
}

TEST(ConvAlgorithm, AWinogradGridStaysInsideCudasGridLimits) {
  // grid.y holds the output-channel tiles and stops at 65535, where grid.x goes on to 2^31 - 1.
  const GemmConfigFit k = config_of(kBatchedGemm);
  ConvShape c = three_by_three(128, 64 * 70000);
  c.batch = 4'000'000;
  const Dim3 grid = winograd_batched_gemm_grid(k, c);
  EXPECT_EQ(grid.y, kMaxGridYZ);
  EXPECT_GT(grid.x, kMaxGridYZ);
  EXPECT_LE(grid.x, kMaxGridX);
}

TEST(ConvAlgorithm, AWinogradBlockLoopsOverTheInputChannelsNotTheFilterTaps) {
  const ConvShape c = three_by_three(128, 256);
  const GemmConfigFit k = config_of(kBatchedGemm);
  ASSERT_EQ(k.tile_m, 64);
  ASSERT_EQ(k.tile_k, 8);
  // 64 images of 14x14 output tiles of 4x4, in 64-row tiles; 256 channels in 64-wide tiles.
  const Dim3 grid = winograd_batched_gemm_grid(k, c);
  EXPECT_EQ(grid, (Dim3{64 * 14 * 14 / 64, 256 / 64, 36}));
  const GemmWork w = conv_work(k, c, ConvPass::kForward, grid, 4);
  EXPECT_DOUBLE_EQ(w.blocks, 196.0 * 4 * 36);
  EXPECT_DOUBLE_EQ(w.k_iters, 128.0 / 8);
  // Read as an implicit GEMM, the same launch would be a C*R*S loop split over the blocks
  // beyond the output tiles: another work altogether.
  const GemmWork implicit =
      conv_work(k, c, ConvPass::kForward, grid, 4, ConvAlgorithm::kImplicitGemm);
  EXPECT_NE(implicit.k_iters, w.k_iters);
  // The fused kernel loops over the input channels in every block of its own grid.
  const GemmWork fused =
      conv_work(config_of(kFusedWinograd), c, ConvPass::kForward, Dim3{448, 7, 4}, 4);
  EXPECT_DOUBLE_EQ(fused.blocks, 448.0 * 7 * 4);
  EXPECT_DOUBLE_EQ(fused.k_iters, 128.0 / 8);
}

DeviceSpec volta_like(const std::string& name, int sms) {
  DeviceSpec s;
  s.name = name;
  s.sm_count = sms;
  s.mem_bw_gbps = 900;
  s.cc_major = 7;
  s.fp32_tflops = 14;
  s.boost_clock_mhz = 1400;
  return s;
}

TEST(ConvAlgorithm, AConfigurationChosenForAnotherGpuRunsTheLaunchItWouldMakeThere) {
  DeviceCatalogue cat({volta_like("S", 80), volta_like("T", 40)});
  const DeviceSpec& target = *cat.find("T");
  // The target's only calibrated convolution kernel: the non-fused Winograd GEMM, its
  // points priced exactly by its fit (nothing left for the residual to correct).
  Profile p;
  p.device = "T";
  p.basis = TimeBasis::kKernel;
  GemmConfigFit gemm = config_of(kBatchedGemm);
  gemm.c0 = 5;
  gemm.c_wave_k = 0.4;
  p.conv_configs.push_back(gemm);
  for (std::int64_t ch : {64, 128, 256, 512}) {
    const ConvShape s = three_by_three(ch, ch);
    const Dim3 grid = winograd_batched_gemm_grid(gemm, s);
    ConvPoint pt;
    pt.config = 0;
    pt.batch = s.batch;
    pt.in_channels = s.in_channels;
    pt.out_channels = s.out_channels;
    pt.in_h = s.in_h;
    pt.in_w = s.in_w;
    pt.kernel_h = s.kernel_h;
    pt.kernel_w = s.kernel_w;
    pt.stride = 1;
    pt.pad = 1;
    pt.grid = grid;
    pt.us = gemm_wave_kernel_us(gemm, target, conv_work(gemm, s, ConvPass::kForward, grid, 4));
    p.conv_points.push_back(pt);
  }
  Predictor predictor(cat, {p});
  const TargetId t = predictor.add_target("T");
  // Measured on S, whose cuDNN ran the fused kernel over a grid of its own tiling.
  KernelRecord r;
  r.launch.name = kFusedWinograd;
  r.launch.grid = Dim3{448, 7, 4};
  r.op.kind = OpKind::kConv;
  r.op.name = "aten::cudnn_convolution";
  r.op.conv = three_by_three(256, 256);
  PredictOptions seen_elsewhere;
  seen_elsewhere.source_device = "S";
  const Prediction forecast =
      predictor.predict(r, classify_kernel(kFusedWinograd), t, seen_elsewhere);
  ASSERT_EQ(forecast.config, kBatchedGemm);
  EXPECT_TRUE(forecast.has(prediction_flags::kConfigChosen));
  const GemmWork there = conv_work(gemm, r.op.conv, ConvPass::kForward,
                                   winograd_batched_gemm_grid(gemm, r.op.conv), 4);
  EXPECT_NEAR(forecast.us, gemm_wave_kernel_us(gemm, target, there), 1e-6 * forecast.us);
}

}  // namespace
}  // namespace pm2lat
