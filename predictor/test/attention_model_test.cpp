// The attention kernel-name decoder, the attention work count, the attention profile
// section and the attention predictor on a synthetic profile.
#include <gtest/gtest.h>

#include <cmath>

#include "pm2lat/classifier.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/attention_kernel.h"
#include "pm2lat/models/attention_model.h"
#include "pm2lat/op_context.h"
#include "pm2lat/predictor.h"
#include "pm2lat/profile_io.h"

namespace pm2lat {
namespace {

TEST(AttentionKernel, DecodesFlashAttention2TraitsAndFlags) {
  // From a PyTorch SDPA trace on H100 (head dim 64, tile 128x128, 4 warps, not causal).
  const auto k = decode_attention_kernel(
      "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, "
      "4, false, false, "
      "cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, "
      "cutlass::bfloat16_t> >, false, "
      "false, false, false, false, true, false>(pytorch_flash::Flash_fwd_params)");
  EXPECT_EQ(k.variant, AttentionVariant::kFlash2);
  EXPECT_EQ(k.pass, AttentionPass::kForward);
  EXPECT_EQ(k.head_dim, 64);
  EXPECT_EQ(k.tile_m, 128);
  EXPECT_EQ(k.tile_n, 128);
  EXPECT_EQ(k.warps, 4);
  EXPECT_TRUE(k.causal_known);
  EXPECT_FALSE(k.causal);
  EXPECT_EQ(k.dtype, DType::kBf16);

  const auto causal = decode_attention_kernel(
      "pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<128, 128, 64, 4, "
      "false, false, "
      "cutlass::bfloat16_t, X>, false, true, false, false, true, true, false, false>");
  EXPECT_TRUE(causal.causal);
  EXPECT_EQ(causal.tile_n, 64);
}

TEST(AttentionKernel, DecodesMangledFlashAttention2Traits) {
  const auto k = decode_attention_kernel(
      "_ZN5flash16flash_fwd_kernelI23Flash_fwd_kernel_"
      "traitsILi128ELi128ELi64ELi4ELb0ELb0EN7cutlass10bfloat16_tE19"
      "Flash_kernel_traitsILi128ELi128ELi64ELi4ES2_EELb0ELb1ELb0ELb0ELb1ELb1ELb0ELb0EEEv16Flash_"
      "fwd_params");
  EXPECT_EQ(k.variant, AttentionVariant::kFlash2);
  EXPECT_EQ(k.head_dim, 128);
  EXPECT_EQ(k.tile_m, 128);
  EXPECT_EQ(k.tile_n, 64);
}

TEST(AttentionKernel, DecodesFlashAttention3TileAndOtherFamilies) {
  const auto fa3 = decode_attention_kernel(
      "cutlass::device_kernel<flash::enable_sm90_or_later<flash::FlashAttnFwdSm90<flash::"
      "CollectiveMainloopFwdSm90<2, "
      "cute::tuple<cute::C<1>, cute::C<1>, cute::C<1> >, cute::tuple<cute::C<128>, cute::C<80>, "
      "cute::C<256> >, 256, "
      "cutlass::bfloat16_t, float, cutlass::arch::Sm90, true, false, false, true, true, false, "
      "false, true, true, "
      "false, false>, flash::CollectiveEpilogueFwd<X>, flash::StaticPersistentTileScheduler<false> "
      "> > >");
  EXPECT_EQ(fa3.variant, AttentionVariant::kFlash3);
  EXPECT_EQ(fa3.tile_m, 128);
  EXPECT_EQ(fa3.tile_n, 80);
  EXPECT_EQ(fa3.head_dim, 256);
  EXPECT_TRUE(fa3.causal_known);
  EXPECT_TRUE(fa3.causal);

  const auto me = decode_attention_kernel("fmha_cutlassF_bf16_aligned_32x128_gmem_sm80");
  EXPECT_EQ(me.variant, AttentionVariant::kMemEfficient);
  EXPECT_EQ(me.tile_m, 32);
  EXPECT_EQ(me.tile_n, 128);
  const auto meb = decode_attention_kernel("fmha_cutlassB_f16_aligned_64x64_k64_dropout_sm75");
  EXPECT_EQ(meb.pass, AttentionPass::kBackward);
  EXPECT_EQ(meb.head_dim, 64);
  EXPECT_EQ(meb.dtype, DType::kFp16);

  const auto cudnn = decode_attention_kernel(
      "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x128_4x1x1_"
      "cga1x1x1_kernel0_0");
  EXPECT_EQ(cudnn.variant, AttentionVariant::kCudnn);
  EXPECT_EQ(cudnn.tile_m, 64);
  EXPECT_EQ(cudnn.tile_n, 128);
  EXPECT_EQ(cudnn.head_dim, 128);

  const auto trt = decode_attention_kernel(
      "fmhaSm100aKernel_"
      "QkvE4m3OBfloat16HQk64HV64HVPerCta64PagedKvCausalP64VarSeqQ128Kv128PersistentContext");
  EXPECT_EQ(trt.variant, AttentionVariant::kTrtllmPrefill);
  EXPECT_EQ(trt.tile_m, 128);
  EXPECT_EQ(trt.head_dim, 64);

  EXPECT_EQ(decode_attention_kernel("flash_bwd_dot_do_o_kernel<true, X>").pass,
            AttentionPass::kHelper);
  EXPECT_EQ(decode_attention_kernel("flashinfer::BatchDecodeWithPagedKVCacheKernel<X>").variant,
            AttentionVariant::kFlashInferDecode);
  EXPECT_EQ(decode_attention_kernel("kernel_unified_attention_2d").variant,
            AttentionVariant::kTriton);
  EXPECT_FALSE(decode_attention_kernel("ampere_sgemm_128x64_tn").recognised());
}

TEST(AttentionKernel, RepresentativeNamesDecodeToTheirVariant) {
  for (std::size_t i = 1; i < kAttentionVariantCount; ++i) {
    const auto v = static_cast<AttentionVariant>(i);
    EXPECT_EQ(decode_attention_kernel(attention_variant_kernel_name(v)).variant, v) << to_string(v);
    EXPECT_EQ(parse_attention_variant(to_string(v)), v);
  }
}

AttentionShape prefill(std::int64_t b, std::int64_t s, std::int64_t h, std::int64_t kvh,
                       std::int64_t d) {
  AttentionShape a;
  a.batch = b;
  a.seqlen_q = a.seqlen_kv = s;
  a.heads = h;
  a.kv_heads = kvh;
  a.head_dim = d;
  a.causal = true;
  a.dtype = DType::kBf16;
  return a;
}

TEST(AttentionModel, CountsCausalWalks) {
  // 512 queries in 128-row blocks over 64-key blocks: block i sees 2(i+1) key blocks.
  const auto w = attention_work(prefill(2, 512, 3, 3, 64), 128, 64, GqaPacking::kNone);
  EXPECT_DOUBLE_EQ(w.ctas, 2.0 * 3 * 4);
  EXPECT_DOUBLE_EQ(w.iterations, 2.0 * 3 * (2 + 4 + 6 + 8));
  EXPECT_DOUBLE_EQ(w.max_iterations, 8);
  EXPECT_DOUBLE_EQ(w.qo_bytes, 2.0 * 2 * 512 * 3 * 64 * 2);
  EXPECT_DOUBLE_EQ(w.kv_bytes, w.qo_bytes);

  AttentionShape full = prefill(1, 512, 1, 1, 64);
  full.causal = false;
  EXPECT_DOUBLE_EQ(attention_work(full, 128, 64, GqaPacking::kNone).iterations, 4.0 * 8);
}

TEST(AttentionModel, SlidingWindowsAndPackedGroupsShortenTheWalk) {
  AttentionShape local = prefill(1, 1024, 1, 1, 64);
  local.window = 128;
  const auto w = attention_work(local, 128, 64, GqaPacking::kNone);
  // Each 128-row block sees at most its own 128 keys plus the 127 before: <= 4 key blocks.
  EXPECT_LE(w.max_iterations, 4);
  EXPECT_LT(w.iterations,
            attention_work(prefill(1, 1024, 1, 1, 64), 128, 64, GqaPacking::kNone).iterations / 2);

  // One query token, 32 query heads on 4 KV heads: packing puts 8 heads in one CTA.
  AttentionShape decode = prefill(16, 1, 32, 4, 128);
  EXPECT_DOUBLE_EQ(attention_work(decode, 64, 64, GqaPacking::kNone).ctas, 16.0 * 32);
  EXPECT_DOUBLE_EQ(attention_work(decode, 64, 64, GqaPacking::kAlways).ctas, 16.0 * 4);
  EXPECT_DOUBLE_EQ(attention_work(decode, 64, 64, GqaPacking::kSingleQuery).ctas, 16.0 * 4);
  EXPECT_DOUBLE_EQ(
      attention_work(prefill(1, 256, 32, 4, 128), 64, 64, GqaPacking::kSingleQuery).ctas, 32.0 * 4);
}

TEST(AttentionModel, LongSequencesUseStrataCloseToTheExactSum) {
  // 16k queries x 8 packed heads = 1024 row blocks of 128: summed over strata.
  const AttentionShape s = prefill(1, 16384, 8, 1, 128);
  const auto w = attention_work(s, 128, 128, GqaPacking::kAlways);
  // Exact: rows r < 131072, block i covers queries [16i, 16i+15]: ceil((16i+16)/128) key blocks.
  double exact = 0;
  for (std::int64_t i = 0; i < 1024; ++i) {
    const std::int64_t key_blocks = (16 * i + 16 + 127) / 128;  // a ceiling, on purpose
    exact += static_cast<double>(key_blocks);
  }
  EXPECT_NEAR(w.iterations, exact, exact * 0.002);
  EXPECT_DOUBLE_EQ(w.max_iterations, 128);
}

DeviceSpec test_gpu(const std::string& name, int sms, double bf16, double bw, int cc_major) {
  DeviceSpec s;
  s.name = name;
  s.sm_count = sms;
  s.bf16_tflops = bf16;
  s.fp16_tflops = bf16;
  s.fp32_tflops = bf16 / 16;
  s.mem_bw_gbps = bw;
  s.boost_clock_mhz = 1500;
  s.cc_major = cc_major;
  return s;
}

Profile attention_profile(const std::string& device) {
  Profile p;
  p.device = device;
  p.basis = TimeBasis::kKernel;
  AttentionConfigFit c;
  c.variant = "flash2";
  c.head_dim = 128;
  c.kv_dtype = DType::kBf16;
  c.tile_m = 128;
  c.tile_n = 64;
  c.ctas_per_sm = 1;
  c.c0 = 5;
  c.c_iter = 2;
  c.c_cta = 1;
  c.c_qo = 1.5;
  c.c_kv = 1;
  p.attention_configs.push_back(c);
  return p;
}

KernelRecord attention_record(const std::string& kernel, const AttentionShape& s) {
  KernelRecord r;
  r.launch.name = kernel;
  r.op.kind = OpKind::kAttention;
  r.op.attention = s;
  return r;
}

TEST(AttentionPredictor, EvaluatesTheCalibratedConfigurationOnItsGpu) {
  DeviceCatalogue cat({test_gpu("GPU-A", 100, 300, 2000, 8), test_gpu("GPU-B", 200, 600, 4000, 8)});
  std::vector<Profile> profiles{attention_profile("GPU-A")};
  Predictor predictor(cat, profiles);
  const TargetId a = predictor.add_target("GPU-A");
  const TargetId b = predictor.add_target("GPU-B");
  const AttentionShape s = prefill(4, 2048, 16, 16, 128);
  // A call of the calibration table's kind: what its fit describes, KV-cache write included.
  KernelRecord r = attention_record("flash::flash_fwd_kernel", s);
  r.op.source = kOperatorCallTableSource;
  const KernelClass cls = classify_kernel(r.launch.name);

  const Prediction pa = predictor.predict(r, cls, a);
  const AttentionWork w = attention_work(s, 128, 64, GqaPacking::kNone);
  const double expected = attention_kernel_us(profiles[0].attention_configs[0],
                                              attention_features(w, 1, *cat.find("GPU-A")));
  EXPECT_EQ(pa.model, ModelKind::kAttention);
  EXPECT_NEAR(pa.us, expected, 1e-9 * expected);  // no calibration points: no correction
  EXPECT_EQ(pa.flags, 0u);
  EXPECT_EQ(pa.config, "flash2");

  // A GPU with twice the SMs and bandwidth and the same per-SM throughput: borrowed and
  // faster, flagged.
  const Prediction pb = predictor.predict(r, cls, b);
  EXPECT_TRUE(pb.has(prediction_flags::kSpecScaled));
  EXPECT_LT(pb.us, pa.us * 0.75);

  // A FlashAttention 3 kernel nobody calibrated: the target's own implementation stands in.
  const Prediction p3 = predictor.predict(attention_record("flash::FlashAttnFwdSm90", s), cls, a);
  EXPECT_TRUE(p3.has(prediction_flags::kConfigChosen));

  // Backward costs more than forward; no shape gives a geometry estimate flagged no_shape.
  AttentionShape bwd = s;
  bwd.backward = true;
  EXPECT_GT(
      predictor
          .predict(attention_record("flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel", bwd),
                   cls, a)
          .us,
      2 * pa.us);
  KernelRecord geometry;
  geometry.launch.name =
      "flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, X>, false, "
      "true>";
  geometry.launch.grid = Dim3{16, 4, 16};
  const Prediction pg = predictor.predict(geometry, cls, a);
  EXPECT_TRUE(pg.has(prediction_flags::kNoShape));
  EXPECT_FALSE(pg.has(prediction_flags::kFallback));
  // Grid 16 x 128 rows = the 2048 queries of the same kernel with its shape.
  const Prediction shaped =
      predictor.predict(attention_record("flash::flash_fwd_kernel", s), cls, a);
  EXPECT_NEAR(pg.us, shaped.us, 0.05 * shaped.us);
}

TEST(AttentionPredictor, AKernelLeavesOutTheKvCacheWriteItsCalibratedCallsRan) {
  // Calls of vLLM before 0.16 wrote the new tokens' K and V into the cache (a kernel of its
  // own) before attending; a launch record is the attention kernel alone. Same shape, same
  // GPU: the kernel costs the call less one graph-replayed kernel (1.5 us) and that kernel's
  // K,V read and cache write at 70 % of bandwidth. A fit of calls that did not write the
  // cache prices both alike.
  DeviceCatalogue cat({test_gpu("GPU-A", 100, 300, 2000, 8)});
  Profile writes = attention_profile("GPU-A");
  writes.attention_configs[0].calls_write_kv_cache = true;
  const AttentionShape s = prefill(4, 2048, 16, 4, 128);
  KernelRecord call = attention_record("flash::flash_fwd_kernel", s);
  call.op.source = kOperatorCallTableSource;
  KernelRecord kernel = attention_record("flash::flash_fwd_kernel", s);
  kernel.op.source = "aten";
  const KernelClass cls = classify_kernel(kernel.launch.name);

  Predictor with_write(cat, {writes});
  const TargetId a = with_write.add_target("GPU-A");
  const double new_kv_bytes = 2.0 * 4 * 2048 * 4 * 128 * 2;  // K and V, bf16
  const double write_us = 1.5 + 2.0 * new_kv_bytes / (0.7 * cat.find("GPU-A")->bytes_per_us());
  const Prediction from_call = with_write.predict(call, cls, a);
  const Prediction from_kernel = with_write.predict(kernel, cls, a);
  EXPECT_NEAR(from_call.us - from_kernel.us, write_us, 1e-6 * from_call.us);
  EXPECT_EQ(from_kernel.model, ModelKind::kAttention);

  Predictor without_write(cat, {attention_profile("GPU-A")});
  const TargetId b = without_write.add_target("GPU-A");
  EXPECT_DOUBLE_EQ(without_write.predict(kernel, cls, b).us,
                   without_write.predict(call, cls, b).us);
  EXPECT_DOUBLE_EQ(without_write.predict(call, cls, b).us, from_call.us);
}

TEST(AttentionPredictor, AShapelessKernelOfAnotherImplementationIsCutByItsOwnTile) {
  // Only FlashAttention 2 is calibrated; PyTorch's memory-efficient forward kernel launches
  // (query blocks of its own 64 rows, heads, batch) and its "_rf_" name bounds the head
  // dimension by its 64-key tile. Without a shape it must be priced as the shape its grid
  // implies (1024 queries, head dimension 64), not as 64-row blocks of the calibrated
  // kernel's 128 rows and a default head dimension of 128 (about 8x the work).
  DeviceCatalogue cat({test_gpu("GPU-A", 100, 300, 2000, 8)});
  std::vector<Profile> profiles{attention_profile("GPU-A")};
  Predictor predictor(cat, profiles);
  const TargetId a = predictor.add_target("GPU-A");
  const std::string name =
      "fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<cutlass::"
      "half_t, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params)";
  const KernelClass cls = classify_kernel(name);
  EXPECT_EQ(decode_attention_kernel(name).head_dim, 64);

  AttentionShape s = prefill(4, 1024, 16, 16, 64);
  s.dtype = DType::kFp16;
  s.causal = false;  // the name does not say; the geometry reads it as not causal
  const Prediction shaped = predictor.predict(attention_record(name, s), cls, a);
  KernelRecord geometry;
  geometry.launch.name = name;
  geometry.launch.grid = Dim3{16, 16, 4};  // 1024 / 64 query blocks, heads, batch
  const Prediction pg = predictor.predict(geometry, cls, a);
  EXPECT_TRUE(pg.has(prediction_flags::kNoShape));
  EXPECT_TRUE(pg.has(prediction_flags::kConfigChosen));
  EXPECT_NEAR(pg.us, shaped.us, 0.05 * shaped.us);
}

TEST(AttentionPredictor, AKernelsOwnTileCutsTheWorkWithoutChangingItsMath) {
  // Calibrated: FlashAttention-2 at head dim 128 over 128x64 tiles. PyTorch's head-dim-64
  // kernel runs 128x128 tiles: half the iterations, each of the same multiply-adds (128 x 128
  // x 64 = 128 x 64 x 128). A long sequence, where the iterations dominate, costs what the
  // calibrated kernel's own cut of the same shape would, not half of it.
  DeviceCatalogue cat({test_gpu("GPU-A", 100, 300, 2000, 8)});
  Predictor predictor(cat, {attention_profile("GPU-A")});
  const TargetId a = predictor.add_target("GPU-A");
  AttentionShape s = prefill(8, 8192, 16, 16, 64);
  s.causal = false;
  const std::string own_tile =
      "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, "
      "4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, "
      "cutlass::bfloat16_t> >, false, false, false, false, false, true, false>"
      "(pytorch_flash::Flash_fwd_params)";
  ASSERT_EQ(decode_attention_kernel(own_tile).tile_n, 128);
  const Prediction named =
      predictor.predict(attention_record(own_tile, s), classify_kernel(own_tile), a);
  const Prediction calibrated_cut =
      predictor.predict(attention_record("flash::flash_fwd_kernel", s),
                        classify_kernel("flash::flash_fwd_kernel"), a);
  EXPECT_EQ(named.model, ModelKind::kAttention);
  EXPECT_NEAR(named.us, calibrated_cut.us, 0.02 * calibrated_cut.us);
}

TEST(AttentionPredictor, FallsBackToTheRooflineWithoutAnyCalibration) {
  DeviceCatalogue cat({test_gpu("GPU-A", 100, 300, 2000, 8)});
  Predictor predictor(cat, {});
  const TargetId a = predictor.add_target("GPU-A");
  const KernelRecord r = attention_record("flash::flash_fwd_kernel", prefill(1, 1024, 8, 8, 64));
  const Prediction p = predictor.predict(r, classify_kernel(r.launch.name), a);
  EXPECT_TRUE(p.has(prediction_flags::kFallback));
  EXPECT_GT(p.us, 0);
}

TEST(AttentionProfile, RoundTripsAndRejectsBadFields) {
  Profile p = attention_profile("H100-SXM");
  AttentionPoint pt;
  pt.config = 0;
  pt.batch = 2;
  pt.seqlen_q = pt.seqlen_kv = 128;
  pt.heads = 8;
  pt.kv_heads = 2;
  pt.window = 64;
  pt.us = 12.5;
  p.attention_points.push_back(pt);
  const Profile back = parse_profile(serialize_profile(p), "mem.json");
  ASSERT_EQ(back.attention_configs.size(), 1u);
  EXPECT_EQ(back.attention_configs[0].variant, "flash2");
  EXPECT_DOUBLE_EQ(back.attention_configs[0].c_qo, 1.5);
  ASSERT_EQ(back.attention_points.size(), 1u);
  EXPECT_EQ(back.attention_points[0].kv_heads, 2);
  EXPECT_EQ(back.attention_points[0].window, 64);
  EXPECT_DOUBLE_EQ(back.attention_points[0].us, 12.5);
  EXPECT_FALSE(back.attention_configs[0].calls_write_kv_cache);
  p.attention_configs[0].calls_write_kv_cache = true;
  EXPECT_TRUE(
      parse_profile(serialize_profile(p), "mem.json").attention_configs[0].calls_write_kv_cache);

  std::string text = serialize_profile(p);
  const std::string field = "\"ctas_per_sm\":1";
  ASSERT_NE(text.find(field), std::string::npos);
  text.replace(text.find(field), field.size(), "\"ctas_per_sm\":0");
  try {
    (void)parse_profile(text, "bad.json");
    FAIL() << "accepted ctas_per_sm 0";
  } catch (const ProfileError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("attention.configs"), std::string::npos);
  }
}

}  // namespace
}  // namespace pm2lat
