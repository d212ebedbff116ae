// The attention table reader, the attention fit, and an accuracy floor on the shipped
// AIConfigurator attention measurements (built on 80 % of the shapes, scored on the rest).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "pm2lat/calibrate/attention_fit.h"
#include "pm2lat/calibrate/attention_table.h"
#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/classifier.h"
#include "pm2lat/models/attention_model.h"
#include "pm2lat/predictor.h"
#include "pm2lat/test/measurement_data.h"

namespace pm2lat::calibrate {
namespace {

constexpr const char* kHeader =
    "system,framework,version,op_name,kernel_source,attn_dtype,kv_cache_dtype,batch_size,isl,step,"
    "num_heads,"
    "num_key_value_heads,head_dim,window_size,beam_width,latency_us\n";

TEST(AttentionTable, ReadsRowsAsAttentionRecords) {
  const std::string text =
      std::string(kHeader) +
      "H100-SXM,vllm,0.24.0,context_attention,vllm_flash_attn_fa3,bf16,fp8,4,2048,0.0,32,8.0,128,"
      "128.0,1.0,321.5\n"
      "L40S,vllm,0.24.0,context_attention,vllm_flashinfer_fidecode,bf16,fp8,2,1,0.0,8,,64,,,9.1\n"
      "L40S,vllm,0.24.0,context_attention,some_new_backend,bf16,bf16,2,1,0.0,8,1,64,,,9.1\n"
      "L40S,vllm,0.24.0,context_attention,vllm_flash_attn_fa2,bf16,bf16,0,1,0.0,8,1,64,,,9.1\n";
  AttentionReadStats st;
  const auto rows = read_attention_table(CsvTable::parse(text, "t.csv"), &st);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(st.skipped_unknown_backend, 1u);
  EXPECT_EQ(st.skipped_bad_shape, 1u);
  const auto& a = rows[0];
  EXPECT_EQ(a.variant, AttentionVariant::kFlash3);
  EXPECT_EQ(a.record.op.kind, OpKind::kAttention);
  EXPECT_EQ(a.record.op.attention.seqlen_kv, 2048);
  EXPECT_EQ(a.record.op.attention.kv_heads, 8);
  EXPECT_EQ(a.record.op.attention.window, 128);
  EXPECT_EQ(a.record.op.attention.kv_dtype, DType::kFp8E4M3);
  EXPECT_TRUE(a.record.op.attention.causal);
  EXPECT_DOUBLE_EQ(*a.record.measured_us, 321.5);
  EXPECT_EQ(classify_kernel(a.record.launch.name).family, KernelFamily::kAttention);
  EXPECT_EQ(rows[1].variant, AttentionVariant::kFlashInferDecode);
  EXPECT_EQ(rows[1].record.op.attention.kv_heads, 8);  // empty KV heads: as many as query heads
  EXPECT_NE(a.shape_key, rows[1].shape_key);
  EXPECT_FALSE(a.writes_kv_cache);  // vLLM 0.24: forward no longer writes the cache
}

TEST(AttentionTable, VllmCallsBefore016WroteTheKvCache) {
  const std::string text =
      std::string(kHeader) +
      "A100-SXM,vllm,0.14.0,context_attention,vllm_flash_attn,bf16,bf16,1,128,0.0,8,8,128,,,10.6\n"
      "A100-SXM,vllm,0.16.0,context_attention,vllm_flash_attn,bf16,bf16,1,128,0.0,8,8,128,,,8.1\n"
      "A100-SXM,sglang,0.5.10,context_attention,flashinfer,bf16,bf16,1,128,0.0,8,8,128,,,8.1\n";
  const auto rows = read_attention_table(CsvTable::parse(text, "t.csv"));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(rows[0].writes_kv_cache);
  EXPECT_FALSE(rows[1].writes_kv_cache);
  EXPECT_FALSE(rows[2].writes_kv_cache);
  EXPECT_TRUE(attention_call_writes_kv_cache("VLLM", "0.9.2"));
  EXPECT_FALSE(attention_call_writes_kv_cache("vllm", "1.0.0"));
  EXPECT_FALSE(attention_call_writes_kv_cache("vllm", "dev"));
}

TEST(AttentionFit, RecoversTheCoefficientsOfSyntheticMeasurements) {
  DeviceSpec gpu;
  gpu.name = "GPU";
  gpu.sm_count = 100;
  gpu.mem_bw_gbps = 2000;
  gpu.bf16_tflops = 300;
  gpu.cc_major = 8;
  AttentionConfigFit truth;
  truth.variant = "flash2";
  truth.head_dim = 128;
  const AttentionTile tile = default_attention_tile(AttentionVariant::kFlash2, 128, 80);
  truth.tile_m = tile.m;
  truth.tile_n = tile.n;
  truth.ctas_per_sm = 2;
  truth.gqa_packing = 0;
  truth.c0 = 8;
  truth.c_iter = 3;
  truth.c_cta = 0.5;
  truth.c_qo = 2;
  truth.c_kv = 1;
  std::vector<AttentionMeasurement> ms;
  for (std::int64_t b : {1, 4, 16}) {
    for (std::int64_t s : {64, 512, 2048, 8192}) {
      for (std::int64_t h : {8, 32}) {
        AttentionMeasurement m;
        m.variant = AttentionVariant::kFlash2;
        AttentionShape& a = m.record.op.attention;
        a.batch = b;
        a.seqlen_q = a.seqlen_kv = s;
        a.heads = h;
        a.kv_heads = h / 4;
        a.head_dim = 128;
        a.causal = true;
        a.dtype = a.kv_dtype = DType::kBf16;
        const auto w = attention_work(a, truth.tile_m, truth.tile_n, GqaPacking::kNone);
        m.record.measured_us = attention_kernel_us(truth, attention_features(w, 2, gpu));
        ms.push_back(m);
      }
    }
  }
  std::vector<const AttentionMeasurement*> ptrs;
  ptrs.reserve(ms.size());
  for (const auto& m : ms) ptrs.push_back(&m);
  Profile p;
  AttentionBuildReport rep;
  build_attention_section(ptrs, gpu, p, &rep);
  ASSERT_EQ(p.attention_configs.size(), 1u);
  const AttentionConfigFit& c = p.attention_configs[0];
  EXPECT_EQ(c.ctas_per_sm, 2);
  EXPECT_EQ(c.gqa_packing, 0);
  EXPECT_NEAR(c.c_iter, 3, 0.01);
  EXPECT_NEAR(c.c0, 8, 0.05);
  EXPECT_LT(rep.fit_mape_pct, 0.1);
  EXPECT_EQ(p.attention_points.size(), ms.size());
}

// Generous bounds that catch breakage; the measured figures are far below (MODELS.md).
TEST(AccuracyFloor, AiconfiguratorAttentionOutOfSample) {
  const char* const relative = "aiconfigurator/attention_bf16.csv.gz";
  const auto file = test::measurement_file(relative);
  if (!file) GTEST_SKIP() << test::missing_measurements(relative);
  const auto table = CsvTable::read(*file);
  const auto rows = read_attention_table(table);
  DeviceCatalogue catalogue =
      DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  std::map<std::string, std::vector<const AttentionMeasurement*>> train;
  std::vector<const AttentionMeasurement*> test;
  for (const auto& m : rows) {
    if (m.system != "H100-SXM" && m.system != "L40S") continue;  // two GPUs keep the test quick
    (in_holdout(m.shape_key, 0.2) ? test : train[m.system]).push_back(&m);
  }
  std::vector<Profile> profiles;
  for (const auto& [system, list] : train) {
    Profile p;
    p.device = catalogue.resolve(system).name;
    build_attention_section(list, catalogue.resolve(system), p);
    profiles.push_back(std::move(p));
  }
  Predictor predictor(std::move(catalogue), std::move(profiles));
  std::map<std::string, std::vector<double>> apes;
  for (const auto* m : test) {
    const TargetId t = predictor.add_target(m->system);
    const Prediction p = predictor.predict(m->record, classify_kernel(m->record.launch.name), t);
    EXPECT_FALSE(p.has(prediction_flags::kFallback));
    apes[m->system + " " + m->backend].push_back(std::fabs(p.us - *m->record.measured_us) /
                                                 *m->record.measured_us);
  }
  ASSERT_EQ(apes.size(), 6u);
  for (auto& [group, v] : apes) {
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double a : v) sum += a;
    EXPECT_GT(v.size(), 50u) << group;
    EXPECT_LT(100 * sum / static_cast<double>(v.size()), 12.0) << group << " MAPE";
    EXPECT_LT(100 * v[v.size() / 2], 6.0) << group << " median APE";
  }
}

}  // namespace
}  // namespace pm2lat::calibrate
