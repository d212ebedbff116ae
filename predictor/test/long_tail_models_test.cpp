// Collectives, convolutions and the memory-bound kernel families through the predictor.
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "pm2lat/classifier.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/collective_model.h"
#include "pm2lat/models/conv_model.h"
#include "pm2lat/models/memory_bound_model.h"
#include "pm2lat/models/memory_family_predictor.h"
#include "pm2lat/predictor.h"

namespace pm2lat {
namespace {

DeviceSpec gpu(const std::string& name, int sms, double bw, int cc_major, double nvlink = 300) {
  DeviceSpec s;
  s.name = name;
  s.sm_count = sms;
  s.mem_bw_gbps = bw;
  s.cc_major = cc_major;
  s.bf16_tflops = s.fp16_tflops = 300;
  s.tf32_tflops = 150;
  s.fp32_tflops = 20;
  s.boost_clock_mhz = 1500;
  s.nvlink_gbps = nvlink;
  s.pcie_gbps = 32;
  return s;
}

TEST(CollectiveModel, DecodesBothNameSchemes) {
  const auto a = decode_collective_kernel("ncclDevKernel_AllReduce_Sum_bf16_RING_LL");
  EXPECT_EQ(a.collective, Collective::kAllReduce);
  EXPECT_EQ(a.algorithm, CollectiveAlgorithm::kRing);
  EXPECT_EQ(a.protocol, CollectiveProtocol::kLL);
  const auto b =
      decode_collective_kernel("ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)");
  EXPECT_EQ(b.collective, Collective::kSendRecv);
  EXPECT_EQ(b.protocol, CollectiveProtocol::kSimple);
  const auto c = decode_collective_kernel("ncclDevKernel_AllGather_RING_LL128");
  EXPECT_EQ(c.collective, Collective::kAllGather);
  EXPECT_EQ(c.protocol, CollectiveProtocol::kLL128);
  EXPECT_TRUE(decode_collective_kernel("void cross_device_reduce_1stage<__nv_bfloat16, 8>(...)")
                  .custom_all_reduce);
}

TEST(CollectiveModel, RingAllReduceMovesTwiceThePayloadOverTheLink) {
  const DeviceSpec s = gpu("G", 100, 2000, 8, 100);  // 100 GB/s per direction
  CollectiveKernel k = decode_collective_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_SIMPLE");
  CollectiveShape big{1e9, 8};
  CollectiveShape small{1e3, 8};
  const double t = collective_kernel_us(k, big, s);
  // 2 * 7/8 * 1 GB at 100 GB/s and 96 % protocol efficiency: ~18.2 ms.
  EXPECT_NEAR(t, 2.0 * 7 / 8 * 1e9 / (100e3 * 0.96), 0.02 * t);
  EXPECT_LT(collective_kernel_us(k, small, s), 100);  // latency-bound: steps x hop latency
  // A PCIe-only GPU is slower for the same payload.
  EXPECT_GT(collective_kernel_us(k, big, gpu("P", 100, 2000, 8, 0)), 2 * t);
}

TEST(LongTailModels, CollectivesAreFlaggedCommunication) {
  Predictor predictor(DeviceCatalogue({gpu("G", 100, 2000, 8)}), {});
  const TargetId t = predictor.add_target("G");
  KernelRecord r;
  r.launch.name = "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
  r.op.kind = OpKind::kCollective;
  r.op.collective = CollectiveShape{4e6, 8};
  const Prediction p = predictor.predict(r, classify_kernel(r.launch.name), t);
  EXPECT_EQ(p.model, ModelKind::kCollective);
  EXPECT_TRUE(p.has(prediction_flags::kCommunication));
  EXPECT_FALSE(p.has(prediction_flags::kFallback));
  r.op.collective.bytes = 0;
  EXPECT_TRUE(
      predictor.predict(r, classify_kernel(r.launch.name), t).has(prediction_flags::kNoShape));
}

ConvShape vgg_layer() {
  ConvShape c;
  c.batch = 64;
  c.in_channels = 128;
  c.out_channels = 256;
  c.in_h = c.in_w = 56;
  c.kernel_h = c.kernel_w = 3;
  c.stride_h = c.stride_w = 1;
  c.pad_h = c.pad_w = 1;
  c.dtype = DType::kFp32;
  return c;
}

TEST(ConvModel, ImplicitGemmOfEachPass) {
  const ConvShape c = vgg_layer();
  const GemmShape f = conv_implicit_gemm(c, ConvPass::kForward);
  EXPECT_EQ(f.m, 64 * 56 * 56);
  EXPECT_EQ(f.n, 256);
  EXPECT_EQ(f.k, 128 * 9);
  const GemmShape d = conv_implicit_gemm(c, ConvPass::kDataGrad);
  EXPECT_EQ(d.n, 128);
  EXPECT_EQ(d.k, 256 * 9);
  const GemmShape w = conv_implicit_gemm(c, ConvPass::kWeightGrad);
  EXPECT_EQ(w.m, 256);
  EXPECT_EQ(w.k, 64 * 56 * 56);
  EXPECT_DOUBLE_EQ(f.flops(), c.flops());

  KernelClass cls = classify_kernel(
      "sm90_xmma_wgrad_indexed_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32_"
      "warpgroupsize1x1x1_"
      "g1_execute_segment_k_on_kernel_cudnn_train");
  EXPECT_EQ(conv_pass(cls, OpContext{}, Dim3{}), ConvPass::kWeightGrad);
  EXPECT_EQ(conv_math_type(cls, DType::kFp32), DType::kTf32);
  // A split-K launch: 126 blocks over 2x9 output tiles = 7 slices of the N*P*Q reduction.
  const GemmConfigFit k = conv_kernel_config(cls, DType::kFp32);
  const GemmWork work = conv_work(k, c, ConvPass::kWeightGrad, Dim3{126, 1, 1}, 4);
  EXPECT_DOUBLE_EQ(work.blocks, 126);
  EXPECT_DOUBLE_EQ(work.k_iters, std::ceil(64.0 * 56 * 56 / 7 / 32));
  // A persistent launch (fewer CTAs than tiles) counts the tiles.
  EXPECT_DOUBLE_EQ(conv_work(k, c, ConvPass::kForward, Dim3{132, 1, 1}, 4).blocks,
                   std::ceil(64.0 * 56 * 56 / 128) * 2);
}

// The kernel cuDNN runs a ViT's patch embedding with on an H100 (TraceLens FalconsAI trace).
constexpr const char* kPatchEmbeddingKernel =
    "void cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_"
    "32x4_nhwc_align8>(cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_"
    "align8::Params)";

// A ViT patch embedding: 3-channel image, 16x16 patches, 768 output channels, bf16.
ConvShape patch_embedding() {
  ConvShape c;
  c.batch = 128;
  c.in_channels = 3;
  c.out_channels = 768;
  c.in_h = c.in_w = 224;
  c.kernel_h = c.kernel_w = 16;
  c.stride_h = c.stride_w = 16;
  c.dtype = DType::kBf16;
  return c;
}

TEST(ConvModel, AKernelStatingAnAlignmentRunsOverChannelsPaddedToIt) {
  const KernelClass align8 = classify_kernel(kPatchEmbeddingKernel);
  ASSERT_TRUE(align8.gemm.tensor_core);
  ASSERT_EQ(align8.gemm.align, 8);
  const ConvShape stated = patch_embedding();
  const ConvShape run = kernel_channels(stated, align8);
  EXPECT_EQ(run.in_channels, 8);     // 3 channels padded to the 8 one access loads
  EXPECT_EQ(run.out_channels, 768);  // already a multiple
  EXPECT_EQ(conv_implicit_gemm(run, ConvPass::kForward).k, 8 * 16 * 16);
  // A grouped convolution pads each group's channels.
  ConvShape grouped = stated;
  grouped.in_channels = 6;
  grouped.groups = 2;
  grouped.out_channels = 20;
  EXPECT_EQ(kernel_channels(grouped, align8).in_channels, 16);
  EXPECT_EQ(kernel_channels(grouped, align8).out_channels, 32);
  grouped.in_channels = 1;  // malformed: fewer channels than groups; never shrinks
  EXPECT_EQ(kernel_channels(grouped, align8).in_channels, 1);
  // SIMT kernels and names that state no alignment see the convolution as stated.
  for (const char* name : {"cutlass_80_simt_sgemm_128x32_8x5_nn_align1",
                           "cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1",
                           "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_"
                           "tilesize128x128x64_warpgroupsize1x1x1_g1_execute_segment_k_off_"
                           "kernel_cudnn_infer"}) {
    const ConvShape same = kernel_channels(stated, classify_kernel(name));
    EXPECT_EQ(same.in_channels, 3) << name;
    EXPECT_EQ(same.out_channels, 768) << name;
  }
}

TEST(LongTailModels, AnUncalibratedAlignedKernelPricesThePaddedMath) {
  // No profile: the uncalibrated tile model prices the K loop the kernel runs, over the 8
  // channels it loads, not the 3 the image has.
  Predictor predictor(DeviceCatalogue({gpu("G", 100, 2000, 9)}), {});
  const TargetId t = predictor.add_target("G");
  KernelRecord r;
  r.launch.name = kPatchEmbeddingKernel;
  r.launch.grid = Dim3{392, 3, 1};
  r.launch.block = Dim3{128, 1, 1};
  r.op.kind = OpKind::kConv;
  r.op.name = "aten::cudnn_convolution";
  r.op.conv = patch_embedding();
  const KernelClass cls = classify_kernel(r.launch.name);
  // The same configuration with CUTLASS's fixed-channels iterator runs the flattened
  // reduction, where the padding shows: 8/3 of the K loop (the fixed cost and the bytes do not
  // grow with it).
  KernelClass flattened = cls;
  flattened.config =
      "cutlass_tensorop_bf16_s16816fprop_fixed_channels_bf16_256x64_32x4_nhwc_align8";
  const Prediction eight = predictor.predict(r, flattened, t);
  KernelClass unaligned = flattened;
  unaligned.gemm.align = 1;
  const Prediction three = predictor.predict(r, unaligned, t);
  ASSERT_EQ(eight.model, ModelKind::kConv);
  EXPECT_GT(eight.us, 1.8 * three.us);
  EXPECT_LT(eight.us, 8.0 / 3.0 * three.us);
  // The optimized iterator steps through the 256 taps one at a time, 8 channels in a step of 32:
  // four times the flattened loop's 64 steps.
  const Prediction per_tap = predictor.predict(r, cls, t);
  EXPECT_GT(per_tap.us, 3.0 * eight.us);
  EXPECT_LT(per_tap.us, 4.0 * eight.us);
}

TEST(ConvModel, CutlassIteratorsStepThroughEachFilterTapsChannels) {
  const GemmConfigFit optimized = conv_kernel_config(classify_kernel(kPatchEmbeddingKernel),
                                                     DType::kBf16);  // tile K 32
  ASSERT_EQ(optimized.tile_k, 32);
  auto k_iters = [](const GemmConfigFit& k, const ConvShape& c, ConvPass pass) {
    return conv_work(k, c, pass, Dim3{}, 2).k_iters;
  };
  // The patch embedding as the align8 kernel runs it: 256 taps of 8 channels, one step each.
  const ConvShape patches =
      kernel_channels(patch_embedding(), classify_kernel(kPatchEmbeddingKernel));
  EXPECT_DOUBLE_EQ(k_iters(optimized, patches, ConvPass::kForward), 256);
  // Channels that fill the steps: the same loop as the flattened reduction.
  ConvShape c{.batch = 8,
              .in_channels = 64,
              .out_channels = 48,
              .in_h = 28,
              .in_w = 28,
              .kernel_h = 3,
              .kernel_w = 3,
              .pad_h = 1,
              .pad_w = 1,
              .dtype = DType::kBf16};
  EXPECT_DOUBLE_EQ(k_iters(optimized, c, ConvPass::kForward), 18);
  c.in_channels = 48;  // 9 taps x 2 steps, where the flattened 432 channels take 14
  EXPECT_DOUBLE_EQ(k_iters(optimized, c, ConvPass::kForward), 18);
  // A unit-stride data gradient steps through the output channels of each tap.
  GemmConfigFit dgrad = optimized;
  dgrad.config = "cutlass_tensorop_bf16_s16816dgrad_optimized_bf16_256x64_32x4_nhwc_align8";
  EXPECT_DOUBLE_EQ(k_iters(dgrad, c, ConvPass::kDataGrad), 18);
  c.stride_h = c.stride_w = 2;  // strided: the taps an output meets vary; flattened
  EXPECT_DOUBLE_EQ(k_iters(dgrad, c, ConvPass::kDataGrad), std::ceil(48.0 * 9 / 32));
  c.stride_h = c.stride_w = 1;
  // Other iterators and libraries run the flattened reduction.
  for (const char* name :
       {"cutlass_tensorop_bf16_s16816fprop_few_channels_bf16_256x64_32x4_nhwc_align8",
        "sm90_xmma_fprop_implicit_gemm_bf16bf16_bf16f32_f32_nhwckrsc_nhwc_tilesize128x128x32_"
        "warpgroupsize1x1x1_g1_execute_segment_k_off_kernel_cudnn_infer"}) {
    GemmConfigFit other = optimized;
    other.config = name;
    EXPECT_DOUBLE_EQ(k_iters(other, c, ConvPass::kForward), std::ceil(48.0 * 9 / 32)) << name;
  }
  // A weight gradient reduces over N*P*Q, which has no taps: flattened.
  GemmConfigFit wgrad = optimized;
  wgrad.config = "cutlass_tensorop_bf16_s16816wgrad_optimized_bf16_256x64_32x4_nhwc_align8";
  EXPECT_DOUBLE_EQ(k_iters(wgrad, c, ConvPass::kWeightGrad), std::ceil(8.0 * 28 * 28 / 32));
}

TEST(LongTailModels, ConvolutionsUseTheCalibratedConfigurationOrTheirClass) {
  DeviceCatalogue cat({gpu("G", 100, 2000, 9)});
  Profile p;
  p.device = "G";
  p.basis = TimeBasis::kKernel;
  const std::string name =
      "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x32_"
      "warpgroupsize1x1x1_g1_"
      "execute_kernel_cudnn_train";
  KernelClass cls = classify_kernel(name);
  ASSERT_EQ(cls.family, KernelFamily::kConv);
  GemmConfigFit own = conv_kernel_config(cls, DType::kFp32);
  own.c0 = 3;
  own.c_wave_k = 0.5;
  p.conv_configs.push_back(own);
  GemmConfigFit cls_fit;
  cls_fit.config = conv_class_name(DType::kTf32);
  cls_fit.c0 = 3;
  cls_fit.c_wave_k = 2.0;  // half of peak per tile step
  p.conv_configs.push_back(cls_fit);
  Predictor predictor(cat, {p});
  const TargetId t = predictor.add_target("G");

  KernelRecord r;
  r.launch.name = name;
  r.op.kind = OpKind::kConv;
  r.op.name = "aten::cudnn_convolution";
  r.op.conv = vgg_layer();
  const Prediction a = predictor.predict(r, cls, t);
  EXPECT_EQ(a.model, ModelKind::kConv);
  EXPECT_EQ(a.config, name);
  const GemmWork w = conv_work(own, r.op.conv, ConvPass::kForward, r.launch.grid, 4);
  EXPECT_NEAR(a.us, gemm_wave_kernel_us(own, *cat.find("G"), w), 1e-9);

  // Another configuration of the same math: the class fit, normalised by the tile step.
  r.launch.name =
      "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize256x64x32_"
      "warpgroupsize1x1x1_g1_execute_kernel_cudnn_train";
  const KernelClass other = classify_kernel(r.launch.name);
  const Prediction b = predictor.predict(r, other, t);
  EXPECT_TRUE(b.config.empty());
  EXPECT_GT(b.us, 0);
  const double seconds_at_peak = r.op.conv.flops() / (150e12);
  EXPECT_GT(b.us * 1e-6, 1.5 * seconds_at_peak);  // about half of peak
  EXPECT_LT(b.us * 1e-6, 4.0 * seconds_at_peak);

  // cuDNN helpers inside a convolution are not the GEMM.
  KernelRecord helper;
  helper.launch.name = "cudnn::winograd_nonfused::winogradForwardData4x4<float, float>";
  EXPECT_TRUE(is_conv_helper_kernel(helper, classify_kernel(helper.launch.name)));
  EXPECT_FALSE(is_conv_helper_kernel(r, other));
}

// A launch recorded without a shape on two GPUs of one generation, "Big" (132 SMs, 3 TB/s)
// and "Small" (66 SMs, 1.5 TB/s), each with a profile of its own: the setting of forecasts for
// another GPU than the one a shapeless kernel ran on.
struct ShapelessLaunchOnTwoGpus {
  DeviceCatalogue catalogue{{gpu("Big", 132, 3000, 9), gpu("Small", 66, 1500, 9)}};
  Predictor predictor;
  TargetId big, small;
  KernelRecord record;
  KernelClass cls;

  ShapelessLaunchOnTwoGpus(const Profile& on_big, const Profile& on_small, std::string name,
                           Dim3 grid, Dim3 block)
      : predictor(catalogue, {on_big, on_small}),
        big(predictor.add_target("Big")),
        small(predictor.add_target("Small")) {
    record.launch.name = std::move(name);
    record.launch.grid = grid;
    record.launch.block = block;
    cls = classify_kernel(record.launch.name);
  }
  // The prediction for `target` of the launch measured on `source` ("" = not known).
  Prediction on(TargetId target, std::string_view source) const {
    PredictOptions o;
    o.source_device = source;
    return predictor.predict(record, cls, target, o);
  }
};

// A convolution recorded without its shape, forecast for another GPU: its class's fit over
// launch waves from the GPU it ran on, carried by spec, not the target's fit of other
// programs' convolutions.
TEST(LongTailModels, AShapelessConvolutionIsForecastWithTheFitOfTheGpuItRanOn) {
  auto profile = [](const std::string& device, double c_wave_k) {
    Profile p;
    p.device = device;
    p.basis = TimeBasis::kKernel;
    GemmConfigFit geometry;
    geometry.config = conv_geometry_fit_name(conv_class_name(DType::kTf32));
    geometry.tile_m = geometry.tile_n = 0;
    geometry.c0 = 3;
    geometry.c_wave_k = c_wave_k;
    p.conv_configs.push_back(geometry);
    return p;
  };
  const ShapelessLaunchOnTwoGpus g(
      profile("Big", 8), profile("Small", 1),
      "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize256x64x32_"
      "warpgroupsize1x1x1_g1_execute_kernel_cudnn_train",
      Dim3{528, 1, 1}, Dim3{384, 1, 1});
  ASSERT_EQ(g.cls.family, KernelFamily::kConv);
  const GemmConfigFit kernel = conv_kernel_config(g.cls, DType::kFp32);
  const DType math = conv_math_type(g.cls, DType::kFp32);
  auto expected = [&](double c_wave_k, const std::string& on, double waves) {
    return 3 + c_wave_k * waves * conv_tile_step_us(kernel, math, *g.catalogue.find(on));
  };
  const Prediction own = g.on(g.big, "Big");
  EXPECT_TRUE(own.has(prediction_flags::kNoShape));
  EXPECT_NEAR(own.us, expected(8, "Big", 4), 1e-9);  // 528 blocks over 132 SMs
  const Prediction other = g.on(g.small, "Big");
  EXPECT_TRUE(other.has(prediction_flags::kSpecScaled));
  EXPECT_NEAR(other.us, expected(8, "Small", 8), 1e-9);  // Big's fit, Small's waves and steps
  // Without a source, each GPU its own fit.
  EXPECT_NEAR(g.on(g.small, "").us, expected(1, "Small", 8), 1e-9);
}

// A fit over launch waves whose intercept no launch's fixed cost reaches stands for a whole
// layer of the programs that made it (persistent kernels run one wave whatever the layer): it
// prices the launches of its own GPU, not another GPU's programs.
TEST(LongTailModels, AnotherGpusGeometryFitWhoseInterceptIsAWholeLayerIsNotTaken) {
  auto profile = [](const std::string& device, std::optional<double> c0) {
    Profile p;
    p.device = device;
    p.basis = TimeBasis::kKernel;
    if (!c0) return p;
    GemmConfigFit geometry;
    geometry.config = conv_geometry_fit_name(conv_class_name(DType::kTf32));
    geometry.tile_m = geometry.tile_n = 0;
    geometry.c0 = *c0;
    geometry.c_wave_k = 1;
    p.conv_configs.push_back(geometry);
    return p;
  };
  const std::string name =
      "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize256x64x32_"
      "warpgroupsize1x1x1_g1_execute_kernel_cudnn_train";
  auto two_gpus = [&](std::optional<double> big_c0) {
    return ShapelessLaunchOnTwoGpus(profile("Big", big_c0), profile("Small", std::nullopt), name,
                                    Dim3{528, 1, 1}, Dim3{384, 1, 1});
  };
  const ShapelessLaunchOnTwoGpus layer = two_gpus(1700.0);
  const ShapelessLaunchOnTwoGpus none = two_gpus(std::nullopt);
  EXPECT_GT(layer.on(layer.big, "Big").us, 1700);  // its own GPU's launches: the fit
  const Prediction elsewhere = layer.on(layer.small, "Small");
  EXPECT_FALSE(elsewhere.has(prediction_flags::kSpecScaled));
  EXPECT_DOUBLE_EQ(elsewhere.us, none.on(none.small, "Small").us);  // as if no GPU had a fit
  EXPECT_DOUBLE_EQ(layer.on(layer.small, "").us, elsewhere.us);     // the target ran it
  // A launch-sized intercept carries to the other GPU.
  const ShapelessLaunchOnTwoGpus launch = two_gpus(30.0);
  EXPECT_TRUE(launch.on(launch.small, "Small").has(prediction_flags::kSpecScaled));
}

// A convolution configuration nobody calibrated, built for Ampere's mma.sync: on the Hopper GPU
// it ran on, it is held under that instruction's ceiling; forecast from an Ampere GPU for the
// Hopper one, it is not (Hopper's library runs a kernel of its own there).
TEST(LongTailModels, AnUncalibratedConvolutionForecastForAnotherGpuRunsThatGpusOwnKernel) {
  const DeviceCatalogue cat({gpu("Amp", 108, 1555, 8), gpu("Hop", 132, 3350, 9)});
  auto empty = [](const std::string& device) {
    Profile p;
    p.device = device;
    p.basis = TimeBasis::kKernel;
    return p;
  };
  Predictor predictor(cat, {empty("Amp"), empty("Hop")});
  const TargetId hop = predictor.add_target("Hop");
  KernelRecord r;
  r.launch.grid = Dim3{64, 1, 1};
  r.op.kind = OpKind::kConv;
  r.op.name = "aten::cudnn_convolution";
  r.op.conv = vgg_layer();
  auto on_hop = [&](const std::string& name, std::string_view ran_on) {
    r.launch.name = name;
    PredictOptions o;
    o.source_device = ran_on;
    return predictor.predict(r, classify_kernel(name), hop, o);
  };
  const std::string sm80 =
      "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_stage4_"
      "warpsize2x2x1_g1_tensor16x8x8_execute_kernel_cudnn";
  const Prediction measured_there = on_hop(sm80, "Hop");
  const Prediction forecast = on_hop(sm80, "Amp");
  EXPECT_TRUE(measured_there.has(prediction_flags::kExtrapolated));
  EXPECT_GT(measured_there.us, 1.2 * forecast.us);
  // A kernel built for Hopper runs at the same efficiency either way.
  const std::string sm90 =
      "sm90_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32_nhwckrsc_nhwc_tilesize128x128x16_"
      "warpgroupsize1x1x1_g1_execute_kernel_cudnn_train";
  EXPECT_DOUBLE_EQ(on_hop(sm90, "Hop").us, on_hop(sm90, "Amp").us);
}

TEST(LongTailModels, ACrossGpuConvolutionRunsTheTargetsConfigurationNearestInShape) {
  DeviceCatalogue cat({gpu("S", 80, 900, 7), gpu("T", 40, 300, 7)});
  const std::string small_kernel = "volta_scudnn_128x32_relu_small_nn_v1";
  const std::string large_kernel = "volta_scudnn_128x128_relu_interior_nn_v1";
  const std::string source_kernel = "volta_scudnn_winograd_128x128_ldg1_ldg4_relu_tile148t_nt_v1";
  Profile p;
  p.device = "T";
  p.basis = TimeBasis::kKernel;
  for (const std::string* name : {&small_kernel, &large_kernel}) {
    GemmConfigFit c = conv_kernel_config(classify_kernel(*name), DType::kFp32);
    c.config = *name;
    c.c0 = name == &small_kernel ? 3 : 30;  // tell the two apart by their fixed cost
    c.c_wave_k = 0.5;
    p.conv_configs.push_back(c);
  }
  // The small kernel was measured on few channels, the large one on many.
  for (std::int64_t ch : {16, 32, 64, 512, 1024, 2048}) {
    ConvPoint pt;
    pt.config = ch < 100 ? 0 : 1;
    pt.batch = 32;
    pt.in_channels = pt.out_channels = ch;
    pt.in_h = pt.in_w = 28;
    pt.kernel_h = pt.kernel_w = 3;
    pt.stride = 1;
    pt.pad = 1;
    pt.grid = Dim3{64, 1, 1};
    pt.us = 100;
    p.conv_points.push_back(pt);
  }
  Predictor predictor(cat, {p});
  const TargetId t = predictor.add_target("T");
  KernelRecord r;
  r.launch.name = source_kernel;
  r.launch.grid = Dim3{64, 1, 1};
  r.op.kind = OpKind::kConv;
  r.op.name = "aten::cudnn_convolution";
  r.op.conv = vgg_layer();
  r.op.conv.in_channels = r.op.conv.out_channels = 1024;
  const KernelClass cls = classify_kernel(source_kernel);
  ASSERT_EQ(cls.family, KernelFamily::kConv);
  PredictOptions seen_elsewhere;
  seen_elsewhere.source_device = "S";
  const Prediction many = predictor.predict(r, cls, t, seen_elsewhere);
  EXPECT_EQ(many.config, large_kernel);
  EXPECT_TRUE(many.has(prediction_flags::kConfigChosen));
  r.op.conv.in_channels = r.op.conv.out_channels = 32;
  EXPECT_EQ(predictor.predict(r, cls, t, seen_elsewhere).config, small_kernel);
  // Measured on the target itself, the record's kernel is one the target runs: no choice.
  PredictOptions seen_here;
  seen_here.source_device = "T";
  const Prediction own = predictor.predict(r, cls, t, seen_here);
  EXPECT_FALSE(own.has(prediction_flags::kConfigChosen));
  EXPECT_NE(own.config, small_kernel);
}

// A kernel-time profile of `device` holding one fit of `op` for the kernel's own
// configuration, over the bytes [bytes_min, bytes_max] it was measured at.
Profile own_kernel_fit_profile(const std::string& device, const KernelClass& cls,
                               const std::string& op, double c0, double c_byte, double bytes_min,
                               double bytes_max) {
  Profile p;
  p.device = device;
  p.basis = TimeBasis::kKernel;
  VectorFit own;
  own.op = op;
  own.config = cls.config;
  own.c0 = c0;
  own.c_byte = c_byte;
  own.bytes_min = bytes_min;
  own.bytes_max = bytes_max;
  p.family_fits.push_back(own);
  return p;
}

// A launch of `kernel` for the operator `op` over `rows` rows of `cols` elements (bytes unset).
KernelRecord vector_record(const std::string& kernel, OpKind kind, const char* op,
                           std::int64_t rows, std::int64_t cols) {
  KernelRecord r;
  r.launch.name = kernel;
  r.op.kind = kind;
  r.op.name = op;
  r.op.vec.rows = rows;
  r.op.vec.cols = cols;
  return r;
}

TEST(LongTailModels, OwnLayerNormKernelFitsAnswerForTheirKernelUpToNearTheirLargestSize) {
  DeviceCatalogue cat({gpu("G", 100, 1000, 9)});  // 1e6 bytes per µs
  const std::string kernel =
      "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
      "float, float const*, float const*, float const*, float*, float*, float*)";
  const KernelClass cls = classify_kernel(kernel);
  ASSERT_EQ(cls.family, KernelFamily::kLayerNorm);
  // c0 far from anything the per-operator tables or the roofline would give.
  const Profile p = own_kernel_fit_profile("G", cls, "layernorm", 10, 1, 1e5, 1e6);
  Predictor predictor(cat, {p});
  const TargetId t = predictor.add_target("G");
  KernelRecord r = vector_record(kernel, OpKind::kLayerNorm, "aten::native_layer_norm", 256, 1024);
  r.op.vec.bytes_read = r.op.vec.bytes_written = 2.5e5;
  EXPECT_NEAR(predictor.predict(r, cls, t).us, 10.5, 1e-9);
  // Call time is the per-operator tables' business.
  PredictOptions call;
  call.basis = TimeBasis::kCall;
  EXPECT_NE(predictor.predict(r, cls, t, call).us, 10.5);
  // Far larger than anything the fit saw: not from it.
  r.op.vec.bytes_read = r.op.vec.bytes_written = 5e8;
  EXPECT_NE(predictor.predict(r, cls, t).us, 10 + 1e3);
  // Far smaller: still this GPU's kernel, between its fixed cost and the smallest size's time
  // (10.1 us at 1e5 bytes), flagged as outside the calibrated range.
  r.op.vec.bytes_read = r.op.vec.bytes_written = 5e2;
  const Prediction small = predictor.predict(r, cls, t);
  EXPECT_NEAR(small.us, 10 + 0.1 * 1e3 / 1e5, 1e-9);
  EXPECT_TRUE(small.has(prediction_flags::kClamped));
  // Another layer-norm kernel: the fit does not know it.
  r.op.vec.bytes_read = r.op.vec.bytes_written = 2.5e5;
  KernelClass other = cls;
  other.config = "cuApplyLayerNorm";
  EXPECT_NE(predictor.predict(r, other, t).us, 10.5);
}

// ATen's fill kernel, as a trace names it.
constexpr const char* kFillKernel =
    "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
    "at::detail::Array<char*, 1> >(int, at::native::FillFunctor<float>, "
    "at::detail::Array<char*, 1>)";

// Past the largest size a kernel fit saw, the fit's bandwidth form carries on from its last
// point: the bytes beyond it at the fit's efficiency, while the per-row term stays what it was
// at that edge (a fill does not slow with how its tensor splits into rows).
TEST(LongTailModels, AKernelFitPastItsLargestSizeCarriesOnAtItsBandwidthNotItsRowTerm) {
  DeviceCatalogue cat({gpu("G", 100, 1000, 9)});  // 1e6 bytes per µs, 100 SMs
  const std::string kernel = kFillKernel;
  const KernelClass cls = classify_kernel(kernel);
  ASSERT_EQ(cls.family, KernelFamily::kMemset);
  Profile p = own_kernel_fit_profile("G", cls, "memset", 2, 1, 1e3, 1e6);
  p.family_fits[0].c_row = 0.5;
  Predictor predictor(cat, {p});
  const TargetId t = predictor.add_target("G");
  KernelRecord r = vector_record(kernel, OpKind::kMemset, "aten::fill_", 1000, 250);
  r.op.vec.bytes_written = 1e6;  // the fit's largest size: the fit itself
  const Prediction edge = predictor.predict(r, cls, t);
  EXPECT_EQ(edge.model, ModelKind::kMemoryBound);
  EXPECT_NEAR(edge.us, 2 + 1 + 0.5 * 1000 / 100.0, 1e-9);
  EXPECT_FALSE(edge.has(prediction_flags::kClamped));
  // Three times past it, same bytes per row: the edge's time, then 2e6 bytes at the fit's
  // efficiency; the whole fit taken that far would say 2 + 3 + 0.5 * 3000 / 100 = 20.
  r.op.vec.rows = 3000;
  r.op.vec.bytes_written = 3e6;
  const Prediction past = predictor.predict(r, cls, t);
  EXPECT_NEAR(past.us, 8 + 2, 1e-9);
  EXPECT_TRUE(past.has(prediction_flags::kClamped));
  // A fit that put no weight on bytes still charges them past its range, at the peak.
  p.family_fits[0].c_byte = 0;
  Predictor no_bytes(cat, {p});
  EXPECT_NEAR(no_bytes.predict(r, cls, no_bytes.add_target("G")).us, 2 + 5 + 2, 1e-9);
}

// Within a fit's bytes but past the most rows it was made on, the per-row term stops at those
// rows: a fit over few row counts says nothing of a per-row cost beyond them (an H100
// concatenation fit over 4-128 rows priced a 1,024-row one 6x its time on an A100).
TEST(LongTailModels, AKernelFitsPerRowTermStopsAtTheRowsItWasMadeOn) {
  DeviceCatalogue cat({gpu("G", 100, 1000, 9)});  // 1e6 bytes per µs, 100 SMs
  const std::string kernel = kFillKernel;
  const KernelClass cls = classify_kernel(kernel);
  Profile p = own_kernel_fit_profile("G", cls, "memset", 2, 1, 1e3, 1e6);
  p.family_fits[0].c_row = 0.5;
  p.family_fits[0].rows_max = 200;
  Predictor predictor(cat, {p});
  const TargetId t = predictor.add_target("G");
  KernelRecord r = vector_record(kernel, OpKind::kMemset, "aten::fill_", 100, 250);
  r.op.vec.bytes_written = 5e5;
  const Prediction within = predictor.predict(r, cls, t);
  EXPECT_NEAR(within.us, 2 + 0.5 + 0.5 * 100 / 100.0, 1e-9);
  EXPECT_FALSE(within.has(prediction_flags::kClamped));
  r.op.vec.rows = 2000;  // ten times the rows, the same bytes
  const Prediction past = predictor.predict(r, cls, t);
  EXPECT_NEAR(past.us, 2 + 0.5 + 0.5 * 200 / 100.0, 1e-9);
  EXPECT_TRUE(past.has(prediction_flags::kClamped));
  // A fit that recorded no rows (profiles written before they were) keeps its per-row term.
  p.family_fits[0].rows_max = 0;
  Predictor unrecorded(cat, {p});
  const Prediction old = unrecorded.predict(r, cls, unrecorded.add_target("G"));
  EXPECT_NEAR(old.us, 2 + 0.5 + 0.5 * 2000 / 100.0, 1e-9);
  EXPECT_FALSE(old.has(prediction_flags::kClamped));
}

// A persistent softmax launched outside any library call (every ATen softmax of a live run)
// states its rows and their length: its GPU's own kernel fit prices those bytes, as trace
// replay does for a trace without shapes, not the geometry fit over its threads.
TEST(LongTailModels, AShapelessPersistentSoftmaxIsPricedByTheBytesItsLaunchStates) {
  DeviceCatalogue cat({gpu("G", 100, 1000, 9)});  // 1e6 bytes per µs
  const std::string kernel =
      "void (anonymous namespace)::softmax_warp_forward<float, float, float, 10, false, false>("
      "float*, float const*, int, int, int, bool const*, int, bool)";
  const KernelClass cls = classify_kernel(kernel);
  ASSERT_EQ(cls.family, KernelFamily::kSoftmax);
  Profile p = own_kernel_fit_profile("G", cls, "softmax", 3, 1.25, 1e5, 1e9);
  VectorFit geometry;
  geometry.op = geometry_fit_name(KernelFamily::kSoftmax);
  geometry.c0 = 2;
  geometry.c_byte = 0.01;  // what a fit over threads of one-element rows would say
  p.family_fits.push_back(geometry);
  Predictor predictor(cat, {p});
  const TargetId t = predictor.add_target("G");
  KernelRecord r;
  r.launch.name = kernel;
  r.launch.grid = Dim3{4096, 1, 1};  // 16,384 rows of 1024: 64 MiB read, 64 MiB written
  r.launch.block = Dim3{32, 4, 1};
  const Prediction a = predictor.predict(r, cls, t);
  EXPECT_EQ(a.model, ModelKind::kMemoryBound);
  EXPECT_TRUE(a.has(prediction_flags::kNoShape));
  EXPECT_NEAR(a.us, 3 + 1.25 * 2 * 16384.0 * 1024 * 4 / 1e6, 1e-6);

  // With no fit anywhere for those bytes, the geometry fit over its threads is still the last
  // resort of its route, not a roofline of nothing.
  Profile geometry_only = p;
  geometry_only.family_fits = {geometry};
  Predictor fallback(cat, {geometry_only});
  const TargetId g = fallback.add_target("G");
  const Prediction b = fallback.predict(r, cls, g);
  EXPECT_EQ(b.model, ModelKind::kMemoryBound);
  EXPECT_TRUE(b.has(prediction_flags::kNoShape));
  EXPECT_NEAR(b.us, 2 + 0.01 * 4096.0 * 128 * kGeometryBytesPerThread / 1e6, 1e-9);
}

TEST(LongTailModels, MemoryFamiliesUseConfigThenFamilyThenGeometryFits) {
  DeviceCatalogue cat({gpu("G", 100, 2000, 8), gpu("Other", 50, 1000, 8)});
  Profile p;
  p.device = "G";
  VectorFit family;
  family.op = "copy";
  family.c0 = 3;
  family.c_byte = 1.2;
  VectorFit config = family;
  config.config = "cudnn::ops::nchwToNhwcKernel";
  config.c_byte = 1.1;
  VectorFit geometry;
  geometry.op = geometry_fit_name(KernelFamily::kReduction);
  geometry.c0 = 4;
  geometry.c_byte = 2;
  p.family_fits = {family, config, geometry};
  Predictor predictor(cat, {p});
  const TargetId g = predictor.add_target("G");
  const TargetId o = predictor.add_target("Other");

  KernelRecord r;
  r.launch.name = "void cudnn::ops::nchwToNhwcKernel<float, float, float, true, false>(...)";
  r.op.kind = OpKind::kCopy;
  r.op.vec.rows = 1000;
  r.op.vec.cols = 1000;
  r.op.vec.bytes_read = r.op.vec.bytes_written = 4e6;
  const KernelClass cls = classify_kernel(r.launch.name);
  ASSERT_EQ(cls.family, KernelFamily::kCopy);
  const Prediction a = predictor.predict(r, cls, g);
  EXPECT_EQ(a.model, ModelKind::kMemoryBound);
  EXPECT_NEAR(a.us, 3 + 1.1 * 8e6 / 2e6, 1e-9);
  // Another copy kernel: the family fit. Another GPU: the same fit on its spec, flagged.
  KernelRecord other = r;
  other.launch.name = "at::native::(anonymous namespace)::CatArrayBatchedCopy<float>";
  EXPECT_NEAR(predictor.predict(other, classify_kernel(other.launch.name), g).us,
              3 + 1.2 * 8e6 / 2e6, 1e-9);
  const Prediction b = predictor.predict(r, cls, o);
  EXPECT_TRUE(b.has(prediction_flags::kSpecScaled));
  EXPECT_NEAR(b.us, 3 + 1.1 * 8e6 / 1e6, 1e-9);

  // A reduction without a shape: the geometry fit over the launched threads.
  KernelRecord red;
  red.launch.name = "cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1, true>";
  red.launch.grid = Dim3{1000, 1, 1};
  red.launch.block = Dim3{512, 1, 1};
  const KernelClass rc = classify_kernel(red.launch.name);
  ASSERT_EQ(rc.family, KernelFamily::kReduction);
  const Prediction c = predictor.predict(red, rc, g);
  EXPECT_TRUE(c.has(prediction_flags::kNoShape));
  EXPECT_NEAR(c.us, 4 + 2 * 1000.0 * 512 * kGeometryBytesPerThread / 2e6, 1e-9);
}

// A memory-bound fit of `op` ("" config: the family's pool).
VectorFit family_fit(const std::string& op, const std::string& config, double c0, double c_byte) {
  VectorFit f;
  f.op = op;
  f.config = config;
  f.c0 = c0;
  f.c_byte = c_byte;
  return f;
}

Profile profile_with(const std::string& device, const VectorFit& fit) {
  Profile p;
  p.device = device;
  p.family_fits = {fit};
  return p;
}

// A fit over launched threads answers within the launch sizes it was made on. Beyond them it
// carries on from its edge (flag clamped): below, down to the fixed cost it identified, or to
// at most the nominal one when its sizes could not tell one (one launch size: its intercept
// is nearly that launch's time); above, at its bandwidth, its per-block term taken no further.
TEST(LongTailModels, AGeometryFitAnswersWithinTheLaunchSizesItWasMadeOn) {
  DeviceCatalogue cat({gpu("G", 100, 1000, 8)});  // 1e6 bytes per us
  KernelRecord r;
  r.launch.name = "cudnn::bn_bw_1C11_kernel_new<float, float, float2, 512, true, 1, true>";
  r.launch.block = Dim3{256, 1, 1};
  const KernelClass cls = classify_kernel(r.launch.name);
  ASSERT_EQ(cls.family, KernelFamily::kReduction);
  const double per_block = 256 * kGeometryBytesPerThread;
  // Made on one launch of 864 blocks that took 71 us: the intercept holds nearly all of it.
  VectorFit one_size = family_fit(geometry_fit_name(KernelFamily::kReduction), cls.config,
                                  71 - 1.5 * 864 * per_block / 1e6, 1.5);
  one_size.bytes_min = one_size.bytes_max = 864 * per_block;
  Predictor predictor(cat, {profile_with("G", one_size)});
  const TargetId g = predictor.add_target("G");
  r.launch.grid = Dim3{864, 1, 1};
  const Prediction at_edge = predictor.predict(r, cls, g);
  EXPECT_NEAR(at_edge.us, 71, 1e-9);
  EXPECT_FALSE(at_edge.has(prediction_flags::kClamped));
  r.launch.grid = Dim3{1, 1, 1};
  const Prediction one_block = predictor.predict(r, cls, g);
  EXPECT_TRUE(one_block.has(prediction_flags::kClamped));
  EXPECT_TRUE(one_block.has(prediction_flags::kNoShape));
  EXPECT_NEAR(one_block.us, kNominalMemoryFixedUs + (71 - kNominalMemoryFixedUs) / 864, 1e-9);
  r.launch.grid = Dim3{0, 1, 1};  // a malformed launch of no threads: the fixed cost
  EXPECT_NEAR(predictor.predict(r, cls, g).us, kNominalMemoryFixedUs, 1e-9);
  r.launch.grid = Dim3{8640, 1, 1};
  const Prediction ten_times = predictor.predict(r, cls, g);
  EXPECT_TRUE(ten_times.has(prediction_flags::kClamped));
  EXPECT_NEAR(ten_times.us, 71 + 1.5 * 9 * 864 * per_block / 1e6, 1e-9);

  // Made on launches of 100 to 1,000 blocks: its intercept is a fixed cost it measured.
  VectorFit spanning = one_size;
  spanning.c0 = 3;
  spanning.c_byte = 2;
  spanning.bytes_min = 100 * per_block;
  spanning.bytes_max = 1000 * per_block;
  Predictor spans(cat, {profile_with("G", spanning)});
  const TargetId s = spans.add_target("G");
  r.launch.grid = Dim3{10, 1, 1};
  const Prediction few = spans.predict(r, cls, s);
  EXPECT_TRUE(few.has(prediction_flags::kClamped));
  EXPECT_NEAR(few.us, 3 + 2 * 100 * per_block / 1e6 * 10 / 100, 1e-9);
  r.launch.grid = Dim3{500, 1, 1};
  const Prediction within = spans.predict(r, cls, s);
  EXPECT_FALSE(within.has(prediction_flags::kClamped));
  EXPECT_NEAR(within.us, 3 + 2 * 500 * per_block / 1e6, 1e-9);
}

// A kernel measured on a similar GPU is priced by its own configuration's fit there, not by the
// target's pool of other kernels of its family (gathers differ by 10x in fixed cost).
TEST(LongTailModels, AKernelsOwnConfigurationOnASimilarGpuBeatsTheTargetsFamilyPool) {
  DeviceCatalogue cat({gpu("G", 100, 2000, 8), gpu("Other", 100, 1000, 8)});
  Profile own = profile_with("G", family_fit("embedding", "", 9, 3.5));
  const VectorFit config =
      family_fit("embedding", "at::native::(anonymous namespace)::indexSelectLargeIndex", 5, 1.5);
  Profile other = profile_with("Other", config);
  Predictor predictor(cat, {own, other});
  const TargetId g = predictor.add_target("G");
  KernelRecord r;
  r.launch.name =
      "void at::native::(anonymous namespace)::indexSelectLargeIndex<c10::BFloat16, long, "
      "unsigned int, 2, 2, -2, true>(...)";
  r.op.kind = OpKind::kEmbedding;
  r.op.vec.rows = 141;
  r.op.vec.cols = 512;
  r.op.vec.bytes_read = r.op.vec.bytes_written = 1.5e5;
  const KernelClass cls = classify_kernel(r.launch.name);
  ASSERT_EQ(cls.family, KernelFamily::kEmbedding);
  ASSERT_EQ(cls.config, config.config);
  const Prediction p = predictor.predict(r, cls, g);
  EXPECT_EQ(p.config, config.config);
  EXPECT_TRUE(p.has(prediction_flags::kSpecScaled));
  EXPECT_NEAR(p.us, 5 + 1.5 * 3e5 / 2e6, 1e-9);  // evaluated with the target's bandwidth
  // A gather no GPU measured: the target's own pool.
  KernelRecord gather = r;
  gather.launch.name =
      "void at::native::indexFuncLargeIndex<c10::BFloat16, long, unsigned int, 2, 2, -2, "
      "true>(...)";
  const KernelClass gc = classify_kernel(gather.launch.name);
  ASSERT_EQ(gc.family, KernelFamily::kEmbedding);
  ASSERT_NE(gc.config, config.config);
  EXPECT_NEAR(predictor.predict(gather, gc, g).us, 9 + 3.5 * 3e5 / 2e6, 1e-9);
}

// A kernel with a shape whose configuration was timed only from launches without one (another
// trace recorded it so) is priced by that fit over its launched threads, not by the family's
// pool of other kernels' bytes; a configuration also fitted by shape keeps its shape fit.
TEST(LongTailModels, AKernelsOwnConfigurationTimedOnlyFromLaunchesBeatsTheFamilyPool) {
  DeviceCatalogue cat({gpu("G", 100, 2000, 8), gpu("Other", 100, 1000, 8)});
  Profile own = profile_with("G", family_fit("reduction", "", 9, 0.75));
  // The configuration timed by launches only, bound by its per-thread arithmetic.
  const VectorFit launches =
      family_fit(geometry_fit_name(KernelFamily::kReduction),
                 "at::native::(anonymous namespace)::max_pool_backward_nchw", 2.5, 20);
  Profile other = profile_with("Other", launches);
  Predictor predictor(cat, {own, other});
  const TargetId g = predictor.add_target("G");
  KernelRecord r;
  r.launch.name =
      "void at::native::(anonymous namespace)::max_pool_backward_nchw<float, float>(...)";
  r.launch.grid = Dim3{196, 512, 64};
  r.launch.block = Dim3{256, 1, 1};
  r.op.kind = OpKind::kReduction;
  r.op.vec.rows = 7340032;
  r.op.vec.cols = 224;
  r.op.vec.bytes_read = 4.9e9;
  r.op.vec.bytes_written = 6.6e9;
  const KernelClass cls = classify_kernel(r.launch.name);
  ASSERT_EQ(cls.family, KernelFamily::kReduction);
  ASSERT_EQ(cls.config, launches.config);
  const Prediction p = predictor.predict(r, cls, g);
  EXPECT_EQ(p.config, launches.config);
  EXPECT_TRUE(p.has(prediction_flags::kNoShape));
  EXPECT_TRUE(p.has(prediction_flags::kSpecScaled));
  const double threads = 196.0 * 512 * 64 * 256;
  EXPECT_NEAR(p.us, 2.5 + 20 * threads * kGeometryBytesPerThread / 2e6, 1e-6 * p.us);
  // Once a GPU fitted the configuration by shape, the shape fit answers.
  VectorFit by_shape = launches;
  by_shape.op = "reduction";
  by_shape.c_byte = 3;
  other.family_fits.push_back(by_shape);
  Predictor with_shape_fit(cat, {own, other});
  const TargetId g2 = with_shape_fit.add_target("G");
  const Prediction q = with_shape_fit.predict(r, cls, g2);
  EXPECT_FALSE(q.has(prediction_flags::kNoShape));
  EXPECT_NEAR(q.us, 2.5 + 3 * 11.5e9 / 2e6, 1e-6 * q.us);
}

// A Triton kernel whose own configuration was fitted only under its stand-in family (the
// elementwise kernels it replaces) is priced by that fit before its own family's pool.
TEST(LongTailModels, AKernelsOwnConfigurationUnderItsStandInFamilyBeatsItsFamilyPool) {
  DeviceCatalogue cat({gpu("G", 100, 2000, 8)});
  Profile p = profile_with("G", family_fit("triton_pointwise", "", 9, 1.5));
  const VectorFit config = family_fit("elementwise", "triton_poi_fused_add_cos_sin_0", 2, 1.25);
  p.family_fits.push_back(config);
  Predictor predictor(cat, {p});
  const TargetId g = predictor.add_target("G");
  KernelRecord r;
  r.launch.name = "triton_poi_fused_add_cos_sin_0";
  r.launch.grid = Dim3{1024, 1, 1};
  r.op.kind = OpKind::kElementwise;
  r.op.vec.rows = 1024;
  r.op.vec.cols = 1024;
  r.op.vec.bytes_read = 8e6;
  r.op.vec.bytes_written = 4e6;
  const KernelClass cls = classify_kernel(r.launch.name);
  ASSERT_EQ(cls.family, KernelFamily::kTritonPointwise);
  ASSERT_EQ(cls.config, config.config);
  const Prediction a = predictor.predict(r, cls, g);
  EXPECT_EQ(a.model, ModelKind::kMemoryBound);
  EXPECT_EQ(a.config, config.config);
  EXPECT_NEAR(a.us, 2 + 1.25 * 12e6 / 2e6, 1e-9);
  // Another Triton kernel: the family's pool.
  KernelRecord other = r;
  other.launch.name = "triton_poi_fused_mul_1";
  const KernelClass oc = classify_kernel(other.launch.name);
  ASSERT_EQ(oc.family, KernelFamily::kTritonPointwise);
  EXPECT_NEAR(predictor.predict(other, oc, g).us, 9 + 1.5 * 12e6 / 2e6, 1e-9);
}

// A layer-norm kernel launched outside any library call (no shape) on a GPU that measured no
// kernels of its own: the family's fit over the launched threads from the GPU that did,
// evaluated with the target's spec, flagged; never the roofline fallback.
TEST(LongTailModels, RowKernelsWithoutAShapeUseTheMostSimilarGpusGeometryFit) {
  DeviceCatalogue cat({gpu("G", 100, 2000, 9), gpu("Other", 50, 1000, 9)});
  Profile p;
  p.device = "G";
  p.basis = TimeBasis::kKernel;
  VectorFit geometry;
  geometry.op = geometry_fit_name(KernelFamily::kLayerNorm);
  geometry.c0 = 4;
  geometry.c_byte = 2;
  p.family_fits = {geometry};
  Predictor predictor(cat, {p});
  const TargetId other = predictor.add_target("Other");
  KernelRecord r;
  r.launch.name =
      "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>(int, "
      "float, float const*, float const*, float const*, float*, float*, float*)";
  r.launch.grid = Dim3{4096, 1, 1};
  r.launch.block = Dim3{32, 4, 1};
  const KernelClass cls = classify_kernel(r.launch.name);
  ASSERT_EQ(cls.family, KernelFamily::kLayerNorm);
  const Prediction a = predictor.predict(r, cls, other);
  EXPECT_EQ(a.model, ModelKind::kMemoryBound);
  EXPECT_TRUE(a.has(prediction_flags::kNoShape));
  EXPECT_TRUE(a.has(prediction_flags::kSpecScaled));
  EXPECT_FALSE(a.has(prediction_flags::kFallback));
  EXPECT_NEAR(a.us, 4 + 2 * 4096.0 * 128 * kGeometryBytesPerThread / 1e6, 1e-9);
  // With a shape the geometry fit has nothing to say: no fit for it anywhere, so the roofline.
  r.op.kind = OpKind::kLayerNorm;
  r.op.vec.rows = 4096;
  r.op.vec.cols = 1024;
  r.op.vec.bytes_read = r.op.vec.bytes_written = 1.6e7;
  EXPECT_EQ(predictor.predict(r, cls, other).model, ModelKind::kRoofline);
}

// A reduction launched outside any library call (no shape), measured on one GPU, forecast for
// another that has its own calibration of the same configuration: each geometry fit stands
// for the per-thread work of the programs it was made on, so the forecast carries the fit
// the measured GPU takes, by spec; the ratio of the two forecasts is the two GPUs'
// bandwidth, not two programs'. On its own GPU, and with no source known, each GPU keeps its
// own fit.
TEST(LongTailModels, AShapelessKernelIsForecastWithTheFitOfTheGpuItRanOn) {
  auto profile = [](const std::string& device, double c_byte, const std::string& op) {
    Profile p;
    p.device = device;
    p.basis = TimeBasis::kKernel;
    VectorFit reduce;
    reduce.op = op;
    reduce.config = "at::native::reduce_kernel";
    reduce.c0 = 5;
    reduce.c_byte = c_byte;
    p.family_fits = {reduce};
    return p;
  };
  const std::string geometry = geometry_fit_name(KernelFamily::kReduction);
  ShapelessLaunchOnTwoGpus g(profile("Big", 50, geometry), profile("Small", 0.75, geometry),
                             "void at::native::reduce_kernel<128, 4, at::native::ReduceOp<float, "
                             "at::native::func_wrapper_t<float, at::native::sum_functor<float, "
                             "float, float>>, unsigned int, float, 4>>(...)",
                             Dim3{239, 16, 1}, Dim3{32, 4, 1});
  ASSERT_EQ(g.cls.family, KernelFamily::kReduction);
  ASSERT_EQ(g.cls.config, "at::native::reduce_kernel");
  const double bytes = 239.0 * 16 * 128 * kGeometryBytesPerThread;
  const Prediction own = g.on(g.big, "Big");
  EXPECT_TRUE(own.has(prediction_flags::kNoShape));
  EXPECT_FALSE(own.has(prediction_flags::kSpecScaled));
  EXPECT_NEAR(own.us, 5 + 50 * bytes / 3e6, 1e-9);
  const Prediction other = g.on(g.small, "Big");
  EXPECT_TRUE(other.has(prediction_flags::kSpecScaled));
  EXPECT_NEAR(other.us, 5 + 50 * bytes / 1.5e6, 1e-9);  // Big's fit at Small's bandwidth
  // Measured on Small: Small's own fit for Small, carried to Big for Big.
  EXPECT_NEAR(g.on(g.small, "Small").us, 5 + 0.75 * bytes / 1.5e6, 1e-9);
  EXPECT_NEAR(g.on(g.big, "Small").us, 5 + 0.75 * bytes / 3e6, 1e-9);
  // No source known: each target's own fit.
  EXPECT_NEAR(g.on(g.small, "").us, 5 + 0.75 * bytes / 1.5e6, 1e-9);
  // With a shape, the target's own calibration of the kernel answers whoever measured it.
  ShapelessLaunchOnTwoGpus shaped(profile("Big", 50, "reduction"), profile("Small", 2, "reduction"),
                                  g.record.launch.name, g.record.launch.grid,
                                  g.record.launch.block);
  shaped.record.op.kind = OpKind::kReduction;
  shaped.record.op.vec.rows = 16;
  shaped.record.op.vec.cols = 1 << 20;
  shaped.record.op.vec.bytes_read = 6.7e7;
  shaped.record.op.vec.bytes_written = 64;
  EXPECT_NEAR(shaped.on(shaped.small, "Big").us, 5 + 2 * (6.7e7 + 64) / 1.5e6, 1e-6);
}

TEST(LongTailModels, TritonKernelsTakeTheirSizeFromTheIntegerArguments) {
  DeviceCatalogue cat({gpu("G", 100, 2000, 8)});
  Profile p;
  p.device = "G";
  VectorFit elementwise;
  elementwise.op = "elementwise";
  elementwise.c0 = 2;
  elementwise.c_byte = 1.25;
  p.family_fits = {elementwise};
  Predictor predictor(cat, {p});
  const TargetId t = predictor.add_target("G");
  KernelRecord r;
  r.launch.name = "triton_poi_fused_add_cos_sin_0";
  r.launch.grid = Dim3{1024, 1, 1};
  r.launch.int_args = {1 << 20};  // xnumel
  const KernelClass cls = classify_kernel(r.launch.name);
  ASSERT_EQ(cls.family, KernelFamily::kTritonPointwise);
  const Prediction a = predictor.predict(r, cls, t);
  EXPECT_EQ(a.model, ModelKind::kMemoryBound);
  EXPECT_FALSE(a.has(prediction_flags::kNoShape));
  EXPECT_NEAR(a.us, 2 + 1.25 * 3.0 * (1 << 20) * 4 / 2e6, 1e-9);  // two reads, one write
  r.launch.int_args = {1 << 22};
  EXPECT_GT(predictor.predict(r, cls, t).us, 3 * a.us);
}

}  // namespace
}  // namespace pm2lat
