#include "pm2lat/calibrate/graph_offset.h"

#include <gtest/gtest.h>

#include "pm2lat/classifier.h"
#include "pm2lat/models/gemm_wave_model.h"

namespace pm2lat::calibrate {
namespace {

constexpr const char* kKernel =
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize64x64x64_stage4_warpsize2x2x1_execute_kernel_"
    "_5x_cublas";

DeviceCatalogue catalogue() {
  return DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
}

// A graph-timed BF16 table whose one configuration follows the wave model exactly.
Profile graph_table(const DeviceSpec& spec) {
  Profile p;
  p.device = spec.name;
  p.graph_replay = true;
  GemmConfigFit c;
  c.config = classify_kernel(kKernel).config;
  c.dtype = DType::kBf16;
  c.tile_m = c.tile_n = c.tile_k = 64;
  c.c0 = 2;
  c.c_wave_k = 0.05;
  c.c_wave = 0.5;
  p.gemm_configs.push_back(c);
  for (std::int64_t m : {64, 128, 256, 512, 1024}) {
    for (std::int64_t k : {256, 1024, 4096}) {
      GemmPoint pt;
      pt.op = "linear";
      pt.config = 0;
      pt.batch = 1;
      pt.m = m;
      pt.n = 1024;
      pt.k = k;
      GemmShape s;
      s.m = m;
      s.n = 1024;
      s.k = k;
      s.a = DType::kBf16;
      pt.grid = {static_cast<std::uint32_t>((m + 63) / 64), 16, 1};
      pt.us = gemm_wave_kernel_us(c, spec, gemm_work(c, s, blocks_from_grid(pt.grid, 1), 1, 2));
      p.gemm_points.push_back(pt);
    }
  }
  return p;
}

KernelRecord measured(std::int64_t m, std::int64_t k, DType a, double us) {
  KernelRecord r;
  r.launch.name = kKernel;
  r.launch.grid = {static_cast<std::uint32_t>((m + 63) / 64), 16, 1};
  r.op.kind = OpKind::kGemm;
  r.op.name = "aten::linear";
  r.op.gemm.m = m;
  r.op.gemm.n = 1024;
  r.op.gemm.k = k;
  r.op.gemm.a = a;
  r.measured_us = us;
  return r;
}

TEST(GraphKernelOffset, IsTheMedianGapOfSmallTensorCoreGemms) {
  DeviceCatalogue cat = catalogue();
  const DeviceSpec& h100 = cat.resolve("H100");
  Predictor tables(cat, {graph_table(h100)});
  const TargetId t = tables.add_target("H100");
  PredictOptions as_graph;
  as_graph.graph_replay = true;
  as_graph.source_spec = &h100;
  std::vector<KernelRecord> records;
  const double gaps[] = {2.0, 2.8, 3.0, 3.1, 3.2, 3.5, 9.0, -1.0, 3.0};  // median 3.0
  std::int64_t m = 64;
  for (double gap : gaps) {
    KernelRecord r = measured(m, 256, DType::kBf16, 0);
    r.measured_us = tables.predict(r, classify_kernel(kKernel), t, as_graph).us + gap;
    records.push_back(r);
    m += 16;
  }
  // FP32 kernels say nothing about the BF16 table.
  for (int i = 0; i < 20; ++i) records.push_back(measured(128, 256, DType::kFp32, 100));
  std::vector<const KernelRecord*> ptrs;
  for (const auto& r : records) ptrs.push_back(&r);
  EXPECT_NEAR(graph_kernel_offset_us(tables, h100, ptrs), 3.0, 1e-9);
  // Too few kernels to tell: no offset.
  ptrs.resize(5);
  EXPECT_EQ(graph_kernel_offset_us(tables, h100, ptrs), 0.0);
}

}  // namespace
}  // namespace pm2lat::calibrate
