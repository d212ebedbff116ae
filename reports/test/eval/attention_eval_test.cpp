// `pm2lat eval attention`: grouping per system x backend, the KV-cache breakdown, the JSON
// shape, on the shipped profiles.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "pm2lat/calibrate/attention_table.h"
#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/reports/eval/attention_eval.h"

namespace pm2lat::reports {
namespace {

TEST(AttentionEval, GroupsBySystemAndBackendWithTheKvCacheTypeBrokenOut) {
  const std::string text =
      "system,kernel_source,op_name,attn_dtype,kv_cache_dtype,batch_size,isl,step,num_heads,num_"
      "key_value_heads,"
      "head_dim,window_size,latency_us\n"
      "H100-SXM,vllm_flash_attn_fa3,context_attention,bf16,bf16,4,2048,0,32,8,128,0,300\n"
      "H100-SXM,vllm_flash_attn_fa3,context_attention,bf16,fp8,4,2048,0,32,8,128,0,340\n"
      "L40S,vllm_flash_attn_fa2,context_attention,bf16,bf16,1,512,0,8,8,64,0,20\n"
      "NoSuchGPU,vllm_flash_attn_fa2,context_attention,bf16,bf16,1,512,0,8,8,64,0,20\n";
  const auto rows = calibrate::read_attention_table(calibrate::CsvTable::parse(text, "t.csv"));
  Predictor predictor = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  const AttentionEvalResult r = eval_attention(predictor, rows);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.unknown_devices, 1u);
  EXPECT_EQ(r.overall.n, 3u);
  const auto& h100 = r.groups[0];
  EXPECT_EQ(h100.device, "H100-SXM");
  EXPECT_EQ(h100.backend, "vllm_flash_attn_fa3");
  EXPECT_EQ(h100.error.n, 2u);
  ASSERT_EQ(h100.by_kv_cache.size(), 2u);
  EXPECT_FALSE(h100.spec_scaled);
  // Shapes the shipped profile was calibrated on: close to the measurement.
  EXPECT_LT(h100.error.mape_pct, 30);

  const nlohmann::json j = attention_eval_json(r);
  ASSERT_TRUE(j.contains("groups"));
  for (const char* key : {"device", "backend", "n", "mape_pct", "median_ape_pct"}) {
    EXPECT_TRUE(j["groups"][0].contains(key)) << key;
  }
  EXPECT_EQ(j["overall"]["n"], 3);
}

}  // namespace
}  // namespace pm2lat::reports
