#include "pm2lat/models/gemm_fit_range.h"

#include <cmath>

#include <gtest/gtest.h>

namespace pm2lat {
namespace {

// 10 SMs, 1 TB/s (1e6 B/us), 10 FP32 TFLOP/s (1e7 FLOP/us).
DeviceSpec gpu() {
  DeviceSpec s;
  s.name = "test";
  s.sm_count = 10;
  s.mem_bw_gbps = 1000;
  s.fp32_tflops = 10;
  s.boost_clock_mhz = 1500;
  return s;
}

GemmConfigFit ranged_config() {
  GemmConfigFit c;
  c.config = "ampere_sgemm_32x32_sliced1x4_tn";
  c.tile_m = 32;
  c.tile_n = 32;
  c.tile_k = 8;
  c.blocks_per_sm = 1;
  c.c0 = 5;
  c.c_wave_k = 0.1;
  c.c_wave = 2;
  return c;
}

GemmShape shape(std::int64_t m, std::int64_t n, std::int64_t k) {
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.a = s.b = s.c = DType::kFp32;
  return s;
}

GemmFitRange calibrated_to(double k_iters) {
  GemmFitRange r;
  GemmWork point;
  point.k_iters = k_iters / 2;
  extend_fit_range(r, point);
  point.k_iters = k_iters;
  extend_fit_range(r, point);
  return r;
}

TEST(GemmFitRange, InsideTheRangeTheFitAnswers) {
  const GemmConfigFit c = ranged_config();
  const GemmShape s = shape(256, 1, 8192);
  const GemmWork w = gemm_work(c, s, 8, 1, 4);
  ASSERT_DOUBLE_EQ(w.k_iters, 1024);
  const RangedGemmTime t =
      gemm_kernel_us_in_range(c, gpu(), w, calibrated_to(1024), s.flops(), 0, true);
  EXPECT_FALSE(t.beyond_range);
  EXPECT_DOUBLE_EQ(t.us, gemm_wave_kernel_us(c, gpu(), w));
  // No calibration point: nothing to say the launch is outside.
  EXPECT_FALSE(
      gemm_kernel_us_in_range(c, gpu(), w, GemmFitRange{}, s.flops(), 0, true).beyond_range);
}

TEST(GemmFitRange, AComputeBoundLaunchPastTheRangeContinuesTheFitsKLoop) {
  const GemmConfigFit c = ranged_config();
  const GemmShape s = shape(1024, 1024, 131072);  // 275 GFLOP over 1 GB: compute-bound
  const GemmWork w = gemm_work(c, s, 1024, 1, 4);
  const RangedGemmTime t =
      gemm_kernel_us_in_range(c, gpu(), w, calibrated_to(1024), s.flops(), 0, false);
  EXPECT_TRUE(t.beyond_range);
  EXPECT_FALSE(t.library_gemv) << "the fit's own K loop: its residual still applies";
  EXPECT_DOUBLE_EQ(t.us, gemm_wave_kernel_us(c, gpu(), w));
}

TEST(GemmFitRange, AThinOutputPastTheRangeStreamsItsOperands) {
  const GemmConfigFit c = ranged_config();
  const GemmShape s = shape(256, 1, 131072);  // a GEMV: 134 MB, 67 MFLOP
  const DeviceSpec spec = gpu();
  const GemmFitRange range = calibrated_to(16);  // short K loops: the edge costs little
  // Observed at 160 blocks (K split 20 ways): every SM streams, at a launched kernel's rate,
  // and the kernel is the fit's (its residual applies). The fit's 4096-step K loop at 0.1 us
  // per step would say 2 ms; the matrix at that rate takes 244 us.
  const GemmWork split = gemm_work(c, s, 160, 20, 4);
  const RangedGemmTime t = gemm_kernel_us_in_range(c, spec, split, range, s.flops(), 160, true);
  EXPECT_TRUE(t.beyond_range);
  EXPECT_FALSE(t.library_gemv);
  const double launched_us =
      split.bytes / (gemm_range_constants::kMeasuredGemvEfficiency * spec.bytes_per_us());
  const double waves = 16;  // 160 blocks over 10 SMs
  EXPECT_NEAR(t.us, c.c0 + c.c_wave * waves + launched_us, 1e-6);
  EXPECT_LT(t.us, gemm_wave_kernel_us(c, spec, split));

  // Observed at 8 blocks: 8 of the 10 SMs stream, slower by 10/8.
  const GemmWork eight = gemm_work(c, s, 8, 1, 4);
  const RangedGemmTime few = gemm_kernel_us_in_range(c, spec, eight, range, s.flops(), 8, true);
  EXPECT_NEAR(few.us, c.c0 + c.c_wave + launched_us * 10 / 8, 1e-6);
  // 8 blocks modelled, none observed: the library spreads the K loop over every SM, as a GEMV
  // at a library GEMV's rate (not the fit's configuration) ...
  const RangedGemmTime library = gemm_kernel_us_in_range(c, spec, eight, range, s.flops(), 0, true);
  EXPECT_TRUE(library.library_gemv);
  const double gemv_us =
      eight.bytes / (gemm_range_constants::kGemvBandwidthEfficiency * spec.bytes_per_us());
  EXPECT_NEAR(library.us, c.c0 + c.c_wave + gemv_us, 1e-6);
  EXPECT_LT(library.us, few.us);
  // ... or, not a GEMV, as a tile kernel at a launched kernel's rate (its residual applies).
  const RangedGemmTime tiles = gemm_kernel_us_in_range(c, spec, eight, range, s.flops(), 0, false);
  EXPECT_FALSE(tiles.library_gemv);
  EXPECT_NEAR(tiles.us, c.c0 + c.c_wave + launched_us, 1e-6);
}

// A small product past the range: its operands stream in well under the fit's fixed costs,
// which count a tile's prologue but not the few microseconds any launch of it takes. An
// observed launch with a longer K loop never costs less than the same launch at the last K
// loop calibrated, nor does a table's call on its nominal launch; with none observed, the
// library's launch at that edge is not known.
TEST(GemmFitRange, AnObservedLaunchPastTheRangeCostsNoLessThanAtTheRangesEdge) {
  const GemmConfigFit c = ranged_config();
  const DeviceSpec spec = gpu();
  const GemmShape s = shape(1, 32, 16384);  // 2 MB: 2 us at a GEMV's rate
  const GemmWork w = gemm_work(c, s, 1, 1, 4);
  const GemmFitRange range = calibrated_to(512);  // K = 4096 calibrated, 2048 steps asked
  const RangedGemmTime t = gemm_kernel_us_in_range(c, spec, w, range, s.flops(), 1, true);
  EXPECT_TRUE(t.beyond_range);
  const GemmShape at_edge = shape(1, 32, 4096);
  const double edge_us = gemm_wave_kernel_us(c, spec, gemm_work(c, at_edge, 1, 1, 4));
  const double stream_us =
      w.bytes / (gemm_range_constants::kMeasuredGemvEfficiency * spec.bytes_per_us() / 10);
  ASSERT_GT(edge_us, c.c0 + c.c_wave + stream_us) << "the case this test is about";
  EXPECT_NEAR(t.us, edge_us, 0.01 * edge_us);
  EXPECT_LT(t.us, gemm_wave_kernel_us(c, spec, w)) << "and below the fit carried on";
  const RangedGemmTime library = gemm_kernel_us_in_range(c, spec, w, range, s.flops(), 0, true);
  EXPECT_LT(library.us, edge_us);
  // A table whose calls all take the model's nominal launch: the fit at the edge prices the
  // table's calls there, the floor of the library's GEMV too.
  GemmConfigFit nominal = c;
  nominal.nominal_launch = true;
  const RangedGemmTime table = gemm_kernel_us_in_range(nominal, spec, w, range, s.flops(), 0, true);
  EXPECT_TRUE(table.library_gemv);
  EXPECT_NEAR(table.us, edge_us, 0.01 * edge_us);
}

// A product whose configuration was chosen for its shape: a memory-bound one costs at most its
// operands streamed once at a GEMV's share of the whole GPU; a compute-bound one is not capped.
TEST(GemmFitRange, AChosenConfigurationOfAThinProductIsHeldToAGemvStreamingIt) {
  const GemmConfigFit c = ranged_config();
  const DeviceSpec spec = gpu();
  const GemmShape gemv = shape(1, 4096, 4096);  // 67 MB of matrix, 33.5 MFLOP
  const double bytes = 4.0 * (4096.0 * 4096 + 4096 + 4096);
  EXPECT_NEAR(chosen_gemv_us(c, spec, bytes, gemv.flops(), DType::kFp32),
              c.c0 + bytes / (gemm_range_constants::kMeasuredGemvEfficiency * spec.bytes_per_us()),
              1e-9);
  const GemmShape square = shape(4096, 4096, 4096);
  EXPECT_TRUE(
      std::isinf(chosen_gemv_us(c, spec, 3 * 4.0 * 4096.0 * 4096, square.flops(), DType::kFp32)));
}

}  // namespace
}  // namespace pm2lat
