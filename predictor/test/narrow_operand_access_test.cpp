// A tensor-core kernel of narrow operand accesses (CUTLASS's align<N> under 16 bytes) priced by
// a configuration of wider ones is slower than it; a kernel priced by its own calibration, a
// SIMT kernel and a kernel whose name states no alignment are not touched.
#include "pm2lat/models/narrow_operand_access.h"

#include <gtest/gtest.h>

#include <memory>

#include <string>
#include <vector>

#include "pm2lat/classifier.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/predictor.h"

namespace pm2lat {
namespace {

GemmConfig decoded(const char* name) { return classify_kernel(name).gemm; }

TEST(NarrowOperandAccess, AccessBytesAreTheAlignmentTimesTheOperandSize) {
  // TF32 (four-byte operands), one element per access.
  EXPECT_EQ(operand_access_bytes(decoded("cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align1"),
                                 DType::kFp32),
            4);
  // BF16, one and two elements per access; eight make a whole vector.
  EXPECT_EQ(operand_access_bytes(
                decoded("cutlass_75_tensorop_bf16_s1688gemm_bf16_128x128_nn_align1"), DType::kBf16),
            2);
  EXPECT_EQ(
      operand_access_bytes(
          decoded("cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align2"), DType::kBf16),
      4);
  EXPECT_EQ(
      operand_access_bytes(
          decoded("cutlass_80_tensorop_bf16_s16816gemm_bf16_256x128_64x3_tn_align8"), DType::kBf16),
      kVectorAccessBytes);
  // A SIMT kernel loads element by element at any alignment; its timing already says so.
  EXPECT_EQ(
      operand_access_bytes(decoded("cutlass_80_simt_sgemm_128x32_8x5_nn_align1"), DType::kFp32),
      kVectorAccessBytes);
  // No alignment in the name (cuBLAS's sm90 kernels): whole vectors.
  EXPECT_EQ(
      operand_access_bytes(
          decoded("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1"),
          DType::kBf16),
      kVectorAccessBytes);
}

TEST(NarrowOperandAccess, EveryExtraAccessPerVectorCostsItsShare) {
  EXPECT_DOUBLE_EQ(narrow_access_slowdown(16, 16), 1.0);
  EXPECT_DOUBLE_EQ(narrow_access_slowdown(4, 16), 1.0 + 3 * kNarrowAccessCost);
  EXPECT_DOUBLE_EQ(narrow_access_slowdown(2, 16), 1.0 + 7 * kNarrowAccessCost);
  // Narrower is slower, never faster.
  EXPECT_GT(narrow_access_slowdown(2, 16), narrow_access_slowdown(4, 16));
  // A stand-in as narrow (the kernel's own calibration) or narrower prices it as it is.
  EXPECT_DOUBLE_EQ(narrow_access_slowdown(4, 4), 1.0);
  EXPECT_DOUBLE_EQ(narrow_access_slowdown(4, 2), 1.0);
  // Between two narrow ones: the difference of their costs.
  EXPECT_DOUBLE_EQ(narrow_access_slowdown(2, 4),
                   (1.0 + 7 * kNarrowAccessCost) / (1.0 + 3 * kNarrowAccessCost));
  // Degenerate widths stay finite.
  EXPECT_DOUBLE_EQ(narrow_access_slowdown(0, 16), 1.0 + 15 * kNarrowAccessCost);
}

// An A100 kernel table timing one TF32 tensor-core kernel whose name states whole-vector
// accesses, on shapes round the queried one (each dimension `extra` past a multiple of 1024):
// the configuration chosen for any kernel of these shapes the table does not name.
std::unique_ptr<Predictor> table_predictor(std::int64_t extra) {
  DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  const DeviceSpec spec = cat.resolve("A100-SXM4-40GB");
  Profile p;
  p.device = spec.name;
  p.basis = TimeBasis::kKernel;
  GemmConfigFit c;
  c.config = "cutlass_80_tensorop_s1688gemm_128x128_32x3_tn_align4";
  c.tile_m = c.tile_n = 128;
  c.tile_k = 32;
  c.c0 = 4;
  c.c_wave_k = 8;
  c.c_wave = 2;
  p.gemm_configs.push_back(c);
  for (std::int64_t m : {1024, 2048, 4096}) {
    for (std::int64_t k : {256, 1024}) {
      GemmPoint pt;
      pt.op = "bmm";
      pt.config = 0;
      pt.m = pt.n = m + extra;
      pt.k = k + extra;
      const auto tiles = static_cast<std::uint32_t>((pt.m + 127) / 128);
      pt.grid = {tiles, tiles, 1};
      GemmShape s;
      s.m = s.n = pt.m;
      s.k = pt.k;
      pt.us = gemm_wave_kernel_us(c, spec, gemm_work(c, s, blocks_from_grid(pt.grid, 1), 1, 4));
      p.gemm_points.push_back(pt);
    }
  }
  auto predictor = std::make_unique<Predictor>(std::move(cat), std::vector<Profile>{std::move(p)});
  predictor->add_target("A100-SXM4-40GB");
  return predictor;
}

// A 2049 x 2049 x 511 product run on the A100 by `kernel`.
Prediction predict(const Predictor& predictor, const std::string& kernel) {
  KernelRecord r;
  r.launch.name = kernel;
  r.launch.grid = {17, 17, 1};
  r.op.kind = OpKind::kGemm;
  r.op.name = "bmm";
  r.op.gemm.m = r.op.gemm.n = 2049;
  r.op.gemm.k = 511;
  r.op.gemm.a = DType::kFp32;
  return predictor.predict(r, classify_kernel(kernel), TargetId{0},  // its only target
                           {TimeBasis::kKernel, "A100-SXM4-40GB"});
}

TEST(NarrowKernelOnTheTarget, AnAlignedStandInPricesItSlowerByItsExtraAccesses) {
  const std::unique_ptr<Predictor> table = table_predictor(0);
  const Prediction narrow = predict(*table, "cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align1");
  const Prediction aligned =
      predict(*table, "cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align4");
  ASSERT_TRUE(narrow.has(prediction_flags::kConfigChosen));
  ASSERT_TRUE(aligned.has(prediction_flags::kConfigChosen));
  EXPECT_EQ(narrow.config, aligned.config);
  EXPECT_NEAR(narrow.us, aligned.us * (1.0 + 3 * kNarrowAccessCost), 1e-9 * aligned.us);
}

TEST(NarrowKernelOnTheTarget, ASimtKernelOfTheSameAlignmentIsNotSlowed) {
  // The same SIMT tiles stated four elements wide: the same price (CUDA-core math, at the
  // FP32 rate either way).
  const std::unique_ptr<Predictor> table = table_predictor(0);
  const Prediction simt = predict(*table, "cutlass_80_simt_sgemm_128x128_8x4_nt_align1");
  const Prediction wider = predict(*table, "cutlass_80_simt_sgemm_128x128_8x4_nt_align4");
  ASSERT_TRUE(simt.has(prediction_flags::kConfigChosen));
  EXPECT_EQ(simt.config, wider.config);
  EXPECT_DOUBLE_EQ(simt.us, wider.us);
}

// The table timed its kernel on shapes of odd widths only: whatever its name states, it loaded
// them as narrowly as the kernel it stands in for, and its times say so already.
TEST(NarrowKernelPricedByANarrowTiming, IsNotSlowedTwice) {
  const std::unique_ptr<Predictor> odd = table_predictor(1);
  const Prediction narrow = predict(*odd, "cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align1");
  const Prediction aligned = predict(*odd, "cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align4");
  ASSERT_TRUE(narrow.has(prediction_flags::kConfigChosen));
  EXPECT_DOUBLE_EQ(narrow.us, aligned.us);
}

}  // namespace
}  // namespace pm2lat
