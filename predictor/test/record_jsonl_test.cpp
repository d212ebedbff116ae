#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "pm2lat/record_fields.h"
#include "pm2lat/record_jsonl.h"

namespace pm2lat {
namespace {

TEST(RecordJsonl, RoundTripsAGemmRecordWithPredictions) {
  PredictedRecord pr;
  pr.rank = 3;
  pr.gpu = "H100-SXM";
  pr.family = KernelFamily::kGemm;
  pr.config = "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT";
  KernelRecord& r = pr.record;
  r.seq = 42;
  r.ts_ns = 123456789;
  r.stream = 7;
  r.graph_id = 5;
  r.graph_node_id = 9;
  r.launch.name = "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_TNT";
  r.launch.grid = {132, 1, 1};
  r.launch.block = {384, 1, 1};
  r.launch.cluster = {1, 2, 1};
  r.launch.shared_mem_bytes = 200000;
  r.op.kind = OpKind::kGemm;
  r.op.source = "cublasLt";
  r.op.gemm.batch = 2;
  r.op.gemm.m = 4096;
  r.op.gemm.n = 1024;
  r.op.gemm.k = 512;
  r.op.gemm.trans_b = true;
  r.op.gemm.a = DType::kBf16;
  r.op.gemm.compute = DType::kFp32;
  r.op.gemm.algo_split_k = 2;
  r.measured_us = 12.5;
  Prediction p;
  p.us = 20.25;
  p.model = ModelKind::kGemmWave;
  p.flags = prediction_flags::kConfigChosen | prediction_flags::kSpecScaled;
  pr.predictions.emplace_back("A100-SXM", p);

  const std::string line = record_to_jsonl(pr);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const PredictedRecord back = record_from_jsonl(line, "t:1");
  EXPECT_EQ(back.record.seq, 42u);
  EXPECT_EQ(back.rank, 3);
  EXPECT_EQ(back.gpu, "H100-SXM");
  EXPECT_EQ(back.family, KernelFamily::kGemm);
  EXPECT_EQ(back.record.launch.grid, (Dim3{132, 1, 1}));
  EXPECT_EQ(back.record.launch.cluster, (Dim3{1, 2, 1}));
  EXPECT_EQ(back.record.graph_node_id, 9u);
  EXPECT_EQ(back.record.op.kind, OpKind::kGemm);
  EXPECT_EQ(back.record.op.gemm.m, 4096);
  EXPECT_EQ(back.record.op.gemm.a, DType::kBf16);
  EXPECT_TRUE(back.record.op.gemm.trans_b);
  EXPECT_EQ(back.record.op.gemm.algo_split_k, 2);
  ASSERT_TRUE(back.record.measured_us);
  EXPECT_DOUBLE_EQ(*back.record.measured_us, 12.5);
  const Prediction* q = back.prediction_for("A100-SXM");
  ASSERT_NE(q, nullptr);
  EXPECT_DOUBLE_EQ(q->us, 20.25);
  EXPECT_EQ(q->model, ModelKind::kGemmWave);
  EXPECT_EQ(q->flags, p.flags);
}

TEST(RecordJsonl, BandsAreWrittenPerTargetAndAbsentWithoutATable) {
  PredictedRecord pr;
  pr.gpu = "A100-SXM";
  pr.family = KernelFamily::kCopy;
  pr.record.launch.name = "copy_kernel";
  Prediction banded;
  banded.us = 3.0;
  banded.band_pct = 17.5;
  Prediction unbanded;  // band_pct NaN: the predictor had no table
  unbanded.us = 2.0;
  pr.predictions.emplace_back("A100-SXM", banded);
  pr.predictions.emplace_back("H100-SXM", unbanded);
  const std::string line = record_to_jsonl(pr);
  const auto j = nlohmann::json::parse(line);
  ASSERT_TRUE(j.contains(record_field::kBandPct));
  EXPECT_DOUBLE_EQ(j[record_field::kBandPct]["A100-SXM"].get<double>(), 17.5);
  EXPECT_FALSE(j[record_field::kBandPct].contains("H100-SXM"));
  const PredictedRecord back = record_from_jsonl(line, "t:1");
  EXPECT_DOUBLE_EQ(back.prediction_for("A100-SXM")->band_pct, 17.5);
  EXPECT_TRUE(std::isnan(back.prediction_for("H100-SXM")->band_pct));

  pr.predictions.pop_back();
  pr.predictions.back().second = unbanded;
  EXPECT_FALSE(nlohmann::json::parse(record_to_jsonl(pr)).contains(record_field::kBandPct));
}

TEST(RecordJsonl, ALowPrecisionGemmKeepsItsScalingAndItsFlags) {
  PredictedRecord pr;
  pr.family = KernelFamily::kGemm;
  KernelRecord& r = pr.record;
  r.op.kind = OpKind::kGemm;
  r.op.gemm.m = 128;
  r.op.gemm.n = r.op.gemm.k = 7168;
  r.op.gemm.a = DType::kFp8E4M3;
  r.op.gemm.scaling = GemmScaling::kBlock128;
  Prediction p;
  p.us = 40;
  p.flags = prediction_flags::kDtypeSubstituted;
  pr.predictions.emplace_back("H100-SXM", p);
  const std::string line = record_to_jsonl(pr);
  EXPECT_NE(line.find("\"scaling\":\"block128\""), std::string::npos) << line;
  EXPECT_NE(line.find("dtype_substituted"), std::string::npos) << line;
  const PredictedRecord back = record_from_jsonl(line, "t:1");
  EXPECT_EQ(back.record.op.gemm.scaling, GemmScaling::kBlock128);
  EXPECT_EQ(back.record.op.gemm.a, DType::kFp8E4M3);
  EXPECT_EQ(back.prediction_for("H100-SXM")->flags, prediction_flags::kDtypeSubstituted);
  // A record written before the field: no scaling.
  PredictedRecord plain;
  plain.record.op.kind = OpKind::kGemm;
  plain.record.op.gemm.a = DType::kBf16;
  EXPECT_EQ(record_to_jsonl(plain).find("scaling"), std::string::npos);
  EXPECT_EQ(record_from_jsonl(record_to_jsonl(plain), "t:2").record.op.gemm.scaling,
            GemmScaling::kNone);
}

TEST(RecordJsonl, RoundTripsAnAttentionRecord) {
  PredictedRecord pr;
  pr.family = KernelFamily::kAttention;
  AttentionShape& a = pr.record.op.attention;
  pr.record.op.kind = OpKind::kAttention;
  a.batch = 2;
  a.seqlen_q = 1024;
  a.seqlen_kv = 4096;
  a.heads = 32;
  a.kv_heads = 8;
  a.head_dim = 128;
  a.causal = true;
  a.window = 512;
  a.dtype = DType::kBf16;
  a.kv_dtype = DType::kFp8E4M3;
  const AttentionShape b = record_from_jsonl(record_to_jsonl(pr), "t:1").record.op.attention;
  EXPECT_EQ(b.seqlen_kv, 4096);
  EXPECT_EQ(b.kv_heads, 8);
  EXPECT_TRUE(b.causal);
  EXPECT_EQ(b.window, 512);
  EXPECT_EQ(b.dtype, DType::kBf16);
  EXPECT_EQ(b.kv_dtype, DType::kFp8E4M3);
}

TEST(RecordJsonl, HeaderAndErrors) {
  RecordsHeader h;
  h.gpu = "A100-SXM";
  h.targets = {"H100-SXM", "L4"};
  h.rank = 1;
  const RecordsHeader back = header_from_jsonl(header_to_jsonl(h), "t:1");
  EXPECT_EQ(back.targets, h.targets);
  EXPECT_EQ(back.rank, 1);
  EXPECT_THROW(header_from_jsonl("{\"schema\":\"other\"}", "t:1"), std::runtime_error);
  EXPECT_THROW(header_from_jsonl("{\"schema\":\"pm2lat.record\",\"version\":99}", "t:1"),
               std::runtime_error);
  EXPECT_THROW(record_from_jsonl("{not json", "t:2"), std::runtime_error);
  EXPECT_THROW(record_from_jsonl("{\"grid\":[1,2]}", "t:3"), std::runtime_error);
  // Invalid UTF-8 in a kernel name must not stop the writer.
  PredictedRecord odd;
  odd.record.launch.name = std::string("bad\xff\xfename");
  EXPECT_NO_THROW((void)record_to_jsonl(odd));
}

TEST(RecordJsonl, RuntimeObjectsAreJsonWhateverTheirTextAndReadersIgnoreThem) {
  namespace field = record_field;
  RecordsHeader h;
  h.gpu = "H100-SXM";
  const RuntimeHeader runtime{"hooks \"quoted\" \\ mode", "0.1.0"};
  const std::string header = header_to_jsonl(h, &runtime);
  const auto j = nlohmann::json::parse(header);
  EXPECT_EQ(j.at(field::runtime::kObject).at(field::runtime::kMode), runtime.mode);
  EXPECT_EQ(header_from_jsonl(header, "t:1").gpu, "H100-SXM");

  PredictedRecord pr;
  pr.record.seq = 3;
  RecordRuntime notes;
  notes.api = "cuLaunchKernel";
  notes.call = 9;
  notes.notes = {"first_launch"};
  const std::string line = record_to_jsonl(pr, &notes);
  const auto r = nlohmann::json::parse(line).at(field::runtime::kObject);
  EXPECT_EQ(r.at(field::runtime::kApi), "cuLaunchKernel");
  EXPECT_EQ(r.at(field::runtime::kCall), 9);
  EXPECT_FALSE(r.contains(field::runtime::kVia));
  EXPECT_EQ(r.at(field::runtime::kNotes), (nlohmann::json{"first_launch"}));
  EXPECT_EQ(record_from_jsonl(line, "t:2").record.seq, 3u);
}

}  // namespace
}  // namespace pm2lat
