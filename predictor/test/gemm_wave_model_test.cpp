#include <gtest/gtest.h>

#include <cmath>

#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/models/memory_bound_model.h"
#include "pm2lat/models/residual_interpolator.h"

namespace pm2lat {
namespace {

DeviceSpec gpu(int sms) {
  DeviceSpec s;
  s.name = "test";
  s.sm_count = sms;
  s.mem_bw_gbps = 1000;
  s.fp32_tflops = 10;
  s.boost_clock_mhz = 1500;
  return s;
}

GemmConfigFit config() {
  GemmConfigFit c;
  c.config = "ampere_sgemm_128x64_nn";
  c.tile_m = 128;
  c.tile_n = 64;
  c.tile_k = 8;
  c.blocks_per_sm = 1;
  c.c0 = 5;
  c.c_wave_k = 1;
  c.c_wave = 3;
  c.c_mem = 0;
  return c;
}

TEST(GemmWaveModel, BlocksAndSplitFromObservedGrids) {
  EXPECT_DOUBLE_EQ(blocks_from_grid({4, 2, 8}, 8), 64);
  EXPECT_DOUBLE_EQ(blocks_from_grid({4, 2, 65535}, 65536), 4.0 * 2 * 65536);  // capped grid.z
  EXPECT_EQ(split_k_from_grid({4, 2, 3}, 1), 3);   // linear: grid.z is the split
  EXPECT_EQ(split_k_from_grid({4, 2, 16}, 8), 2);  // batched + split
  EXPECT_EQ(split_k_from_grid({4, 2, 8}, 8), 1);
}

TEST(GemmWaveModel, BlocksForShapeFollowOrientation) {
  GemmConfigFit c = config();
  GemmShape s;
  s.m = 256;
  s.n = 640;
  s.k = 100;
  s.batch = 3;
  EXPECT_DOUBLE_EQ(blocks_for_shape(c, s, 1), 2.0 * 10 * 3);
  c.tile_m_on_n = true;
  EXPECT_DOUBLE_EQ(blocks_for_shape(c, s, 2), 4.0 * 5 * 3 * 2);
}

TEST(GemmWaveModel, WavesQuantiseAndTheKLoopScales) {
  const GemmConfigFit c = config();
  const DeviceSpec spec = gpu(10);
  GemmShape s;
  s.m = 128;
  s.n = 64;
  s.k = 80;  // 10 K steps of 8
  // 10 blocks fill one wave on 10 SMs; 11 need a second (tail) wave.
  const double one = gemm_wave_kernel_us(c, spec, gemm_work(c, s, 10, 1, 4));
  const double two = gemm_wave_kernel_us(c, spec, gemm_work(c, s, 11, 1, 4));
  EXPECT_DOUBLE_EQ(one, 5 + 1 * 1 * 10 + 3 * 1);
  EXPECT_DOUBLE_EQ(two, 5 + 1 * 2 * 10 + 3 * 2);
  // Split-K divides the K loop of each block.
  const double split = gemm_wave_kernel_us(c, spec, gemm_work(c, s, 10, 2, 4));
  EXPECT_DOUBLE_EQ(split, 5 + 1 * 5 + 3);
  // More blocks per SM, fewer waves.
  GemmConfigFit c2 = c;
  c2.blocks_per_sm = 2;
  EXPECT_DOUBLE_EQ(gemm_wave_kernel_us(c2, spec, gemm_work(c2, s, 20, 1, 4)), one);
}

TEST(MemoryBoundModel, BytesOverBandwidth) {
  VectorFit f;
  f.c0 = 2;
  f.c_byte = 1.25;  // 80 % of peak
  const DeviceSpec spec = gpu(10);
  // 1 GB/ms = 1e6 bytes/µs... here 1000 GB/s = 1e6 bytes per µs.
  EXPECT_DOUBLE_EQ(memory_bound_kernel_us(f, spec, 8e6, 1), 2 + 1.25 * 8);
}

TEST(ResidualInterpolator, CorrectsTowardsNeighboursAndStaysBounded) {
  std::vector<std::array<double, 2>> pts;
  std::vector<double> res;
  for (int i = 0; i < 10; ++i) {
    for (int j = 0; j < 10; ++j) {
      pts.push_back({double(i), double(j)});
      res.push_back(i < 5 ? std::log(1.1) : std::log(0.9));
    }
  }
  ResidualInterpolator<2> interp(pts, res, 8);
  EXPECT_NEAR(interp.correction({1, 1}), 1.1, 1e-9);
  EXPECT_NEAR(interp.correction({8, 8}), 0.9, 1e-9);
  EXPECT_EQ(interp.nearest({8.1, 7.9}), std::size_t{8 * 10 + 8});
  ResidualInterpolator<2> wild({{0, 0}}, {10.0}, 8);
  EXPECT_LT(wild.correction({0, 0}), 3.1);  // capped
  ResidualInterpolator<2> none;
  EXPECT_DOUBLE_EQ(none.correction({0, 0}), 1.0);
}

}  // namespace
}  // namespace pm2lat
