#include <gtest/gtest.h>

#include <cmath>

#include "pm2lat/calibrate/profile_builder.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/gemm_wave_model.h"

namespace pm2lat::calibrate {
namespace {

DeviceSpec test_gpu() {
  DeviceSpec s;
  s.name = "T4";
  s.sm_count = 40;
  s.mem_bw_gbps = 320;
  s.fp32_tflops = 8.1;
  s.boost_clock_mhz = 1590;
  return s;
}

// Calls generated from a known wave model (blocks_per_sm 2) plus a dispatch floor: the
// builder must find the blocks per SM, the coefficients and the floor again.
std::vector<MeasuredCall> synthetic_calls(const DeviceSpec& spec, const GemmConfigFit& truth,
                                          double floor, double pre) {
  std::vector<MeasuredCall> calls;
  for (std::int64_t b : {1, 3, 8, 20, 64}) {
    for (std::int64_t m : {64, 200, 512, 1000, 2048}) {
      for (std::int64_t k : {32, 128, 700, 2048}) {
        MeasuredCall c;
        c.device = "T4";
        c.op = "bmm";
        KernelRecord& r = c.record;
        r.launch.name = truth.config;
        r.launch.grid = {static_cast<std::uint32_t>((m + 127) / 128),
                         static_cast<std::uint32_t>((m + 63) / 64), static_cast<std::uint32_t>(b)};
        r.op.kind = OpKind::kGemm;
        r.op.name = "bmm";
        r.op.gemm.batch = b;
        r.op.gemm.m = m;
        r.op.gemm.n = m;
        r.op.gemm.k = k;
        r.op.gemm.a = DType::kFp32;
        const double kern = gemm_wave_kernel_us(
            truth, spec, gemm_work(truth, r.op.gemm, blocks_from_grid(r.launch.grid, b), 1, 4));
        r.measured_us = std::max(floor, pre + kern);
        r.basis = TimeBasis::kCall;
        calls.push_back(std::move(c));
      }
    }
  }
  return calls;
}

TEST(ProfileBuilder, RecoversAKnownWaveModel) {
  const DeviceSpec spec = test_gpu();
  GemmConfigFit truth;
  truth.config = "volta_sgemm_128x64_nn";
  truth.tile_m = 128;
  truth.tile_n = 64;
  truth.tile_k = 8;
  truth.blocks_per_sm = 2;
  truth.c0 = 3;
  truth.c_wave_k = 0.9;
  truth.c_wave = 4;
  truth.c_mem = 0.5;
  const auto calls = synthetic_calls(spec, truth, 30, 12);
  std::vector<const MeasuredCall*> ptrs;
  for (const auto& c : calls) ptrs.push_back(&c);
  BuildReport rep;
  const Profile p = build_profile(ptrs, spec, BuildOptions{}, &rep);
  EXPECT_EQ(rep.gemm_rows, calls.size());
  ASSERT_EQ(p.gemm_configs.size(), 1u);
  const GemmConfigFit& c = p.gemm_configs[0];
  EXPECT_EQ(c.blocks_per_sm, 2);
  EXPECT_NEAR(c.c_wave_k, truth.c_wave_k, 0.02);
  EXPECT_LT(c.fit_mape_pct, 1.0);
  EXPECT_NEAR(p.call_overhead.at("bmm").floor_us, 30, 1e-9);
  EXPECT_EQ(p.gemm_points.size(), calls.size());
}

TEST(ProfileBuilder, LatencyFloorIsALowQuantile) {
  std::vector<double> v;
  for (int i = 0; i < 100; ++i) v.push_back(100 + i);
  EXPECT_DOUBLE_EQ(latency_floor(v, 0.0), 100);
  EXPECT_DOUBLE_EQ(latency_floor(v, 0.02), 101);
  EXPECT_DOUBLE_EQ(latency_floor({}, 0.02), 0);
}

}  // namespace
}  // namespace pm2lat::calibrate
