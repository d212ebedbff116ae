// How the GEMM predictor chooses the kernel configuration cuBLAS would run for a shape the
// target's table did not time: a vote of the nearest calibrated shapes of the same operand
// layout and the same operand alignment.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "pm2lat/classifier.h"
#include "pm2lat/models/gemm_fit_range.h"
#include "pm2lat/models/gemm_neighbourhood.h"
#include "pm2lat/models/gemm_wave_model.h"
#include "pm2lat/predictor.h"

namespace pm2lat {
namespace {

TEST(GemmNeighbourhood, AlignmentIsEveryLeadingDimensionAWholeVector) {
  // x W^T with k a multiple of 4 floats: both leading dimensions are k.
  EXPECT_TRUE(operands_vector_aligned(4097, 3, 1280, false, true, DType::kFp32));
  EXPECT_FALSE(operands_vector_aligned(4096, 3840, 1281, false, true, DType::kFp32));
  // A B: B's leading dimension is n; half-precision vectors hold 8 elements.
  EXPECT_FALSE(operands_vector_aligned(64, 12, 64, false, false, DType::kBf16));
  EXPECT_TRUE(operands_vector_aligned(64, 16, 64, false, false, DType::kBf16));
  const GemmShapeKey shape = gemm_shape_key(1, 4096, 3840, 1280);
  const GemmSelectorKey linear =
      gemm_selector_key(shape, 4096, 3840, 1280, false, true, DType::kFp32);
  const GemmSelectorKey product =
      gemm_selector_key(shape, 4096, 3840, 1281, false, false, DType::kFp32);
  EXPECT_EQ(linear[4], gemm_neighbourhood::kLayoutPenalty);
  EXPECT_EQ(linear[5], 0.0);
  EXPECT_EQ(product[4], 0.0);
  EXPECT_EQ(product[5], gemm_neighbourhood::kAlignmentPenalty);
}

TEST(GemmNeighbourhood, OperandAlignmentIsTheLeastOfEveryRowsBytes) {
  // x W^T: A and B are read along k, C's rows are n long. 30522 floats are 8-byte rows.
  EXPECT_EQ(operand_alignment_bytes(2048, 1280, 30522, false, true, DType::kFp32), 8);
  EXPECT_EQ(operand_alignment_bytes(2048, 1280, 1024, false, true, DType::kFp32), 16);
  // An odd output width (a vocabulary of 50257): C's rows are 4-byte aligned.
  EXPECT_EQ(operand_alignment_bytes(2048, 50257, 1024, false, true, DType::kFp32), 4);
  // Half precision: an odd reduction is 2-byte rows; never more than one 16-byte vector.
  EXPECT_EQ(operand_alignment_bytes(64, 64, 63, false, true, DType::kBf16), 2);
  EXPECT_EQ(operand_alignment_bytes(64, 64, 4096, false, true, DType::kBf16), 16);
}

// Near shapes (one octave cell) of three alignments, `follows`: each alignment ran its own
// configuration, else all ran the same ones whatever their alignment.
std::vector<SelectorSample> samples(bool follows, int per_alignment) {
  std::vector<SelectorSample> out;
  for (int a = 0; a < 3; ++a) {
    for (int i = 0; i < per_alignment; ++i) {
      SelectorSample s;
      s.shape = gemm_shape_key(1, 4000 + 8 * i, 4096, 1024);
      s.transposed_weight = true;
      s.alignment_bytes = 4 << a;
      s.config = follows ? a : i % 3;
      out.push_back(s);
    }
  }
  return out;
}

TEST(GemmNeighbourhood, AGpuWhoseTableChoosesByAlignmentGetsGradedKeys) {
  EXPECT_EQ(selector_alignment(samples(true, 20)), SelectorAlignment::kGraded);
  EXPECT_EQ(selector_alignment(samples(false, 20)), SelectorAlignment::kVectors);
  // Too few pairs of near shapes of two alignments to tell (6 x 6 x 3 = 108, 3 x 15 of one).
  EXPECT_EQ(selector_alignment(samples(true, 6)), SelectorAlignment::kVectors);
  EXPECT_EQ(selector_alignment({}), SelectorAlignment::kVectors);
  // Graded: a halving of the alignment is kAlignmentHalvingPenalty octaves.
  const GemmShapeKey shape = gemm_shape_key(1, 2048, 1280, 30522);
  const GemmSelectorKey eight = gemm_selector_key(shape, 2048, 1280, 30522, false, true,
                                                  DType::kFp32, SelectorAlignment::kGraded);
  const GemmSelectorKey four = gemm_selector_key(shape, 2048, 1280, 30523, false, true,
                                                 DType::kFp32, SelectorAlignment::kGraded);
  EXPECT_EQ(eight[5], gemm_neighbourhood::kAlignmentHalvingPenalty);
  EXPECT_EQ(four[5], 2 * gemm_neighbourhood::kAlignmentHalvingPenalty);
  // The same shapes by whole vectors alone: both unaligned alike.
  EXPECT_EQ(gemm_selector_key(shape, 2048, 1280, 30522, false, true, DType::kFp32)[5],
            gemm_neighbourhood::kAlignmentPenalty);
}

struct Shape {
  std::int64_t m, n, k;
};

GemmConfigFit linear_config(std::string name, double c_wave_k) {
  GemmConfigFit c;
  c.config = std::move(name);
  c.tile_m = 128;
  c.tile_n = 128;
  c.tile_k = 8;
  c.c0 = 4;
  c.c_wave_k = c_wave_k;
  c.c_wave = 2;
  return c;
}

// nn.Linear rows (weight stored transposed) as a kernel table holds them: each timed with the
// kernel cuBLAS ran, its time what that kernel's wave model says.
void add_linear_rows(Profile& p, const DeviceSpec& spec, std::int32_t config,
                     const std::vector<Shape>& shapes) {
  const GemmConfigFit& c = p.gemm_configs[static_cast<std::size_t>(config)];
  for (const Shape& sh : shapes) {
    GemmPoint pt;
    pt.op = "linear";
    pt.transposed_weight = true;
    pt.config = config;
    pt.batch = 1;
    pt.m = sh.m;
    pt.n = sh.n;
    pt.k = sh.k;
    pt.grid = {static_cast<std::uint32_t>((sh.m + 127) / 128),
               static_cast<std::uint32_t>((sh.n + 127) / 128), 1};
    GemmShape s;
    s.m = sh.m;
    s.n = sh.n;
    s.k = sh.k;
    pt.us = gemm_wave_kernel_us(c, spec, gemm_work(c, s, blocks_from_grid(pt.grid, 1), 1, 4));
    p.gemm_points.push_back(pt);
  }
}

// A table like the P4's: a vectorised kernel timed on shapes whose reduction dimension is a
// multiple of four floats, a kernel three times slower per K step timed on many more shapes, none
// of them aligned, crowding round the queried shapes.
Profile mixed_alignment_table(const DeviceSpec& spec) {
  Profile p;
  p.device = "P4";
  p.basis = TimeBasis::kKernel;
  p.gemm_configs.push_back(linear_config("sgemm_128x128x8_NT_vec", 0.5));
  p.gemm_configs.push_back(linear_config("maxwell_sgemm_64x64_tn", 1.5));
  add_linear_rows(p, spec, 0, {{4096, 2048, 1024}, {2048, 4096, 1024}, {4096, 4096, 2048}});
  add_linear_rows(p, spec, 1,
                  {{4095, 4095, 1023},
                   {4097, 4093, 1025},
                   {4091, 4099, 1021},
                   {4093, 4091, 1027},
                   {4099, 4097, 1019},
                   {4101, 4089, 1029},
                   {4087, 4103, 1017},
                   {4103, 4085, 1031}});
  return p;
}

// An nn.Linear call measured on another GPU: its shape, not the kernel it ran there.
KernelRecord linear_record(std::int64_t m, std::int64_t n, std::int64_t k) {
  KernelRecord r;
  r.op.kind = OpKind::kGemm;
  r.op.name = "linear";
  r.op.gemm.m = m;
  r.op.gemm.n = n;
  r.op.gemm.k = k;
  r.op.gemm.trans_b = true;
  r.op.gemm.a = DType::kFp32;
  return r;
}

class GemmSelectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
    const DeviceSpec p4 = cat.resolve("P4");
    std::vector<Profile> profiles{mixed_alignment_table(p4)};
    predictor_ = std::make_unique<Predictor>(std::move(cat), std::move(profiles));
    target_ = predictor_->add_target("P4");
  }

  Prediction predict_linear(std::int64_t m, std::int64_t n, std::int64_t k) const {
    KernelClass cls;
    cls.family = KernelFamily::kGemm;
    return predictor_->predict(linear_record(m, n, k), cls, target_, {TimeBasis::kKernel, "V100"});
  }

  std::unique_ptr<Predictor> predictor_;
  TargetId target_{};
};

// Every calibrated shape is a wide product; a matrix-vector product is voted to one of their
// tile kernels, which covers a 1 x 512 output with 4 blocks, each looping over all of a 65536
// reduction: 4 of the P4's 20 SMs would stream the 134 MB matrix. cuBLAS runs a GEMV (or
// splits K) for such a product and streams it over the whole GPU: it is priced so (flag
// clamped), not as the voted kernel's few blocks.
TEST_F(GemmSelectorTest, AMatrixVectorProductVotedToAWideTileStreamsItsMatrix) {
  const Prediction p = predict_linear(1, 512, 65536);
  EXPECT_TRUE(p.has(prediction_flags::kConfigChosen));
  EXPECT_TRUE(p.has(prediction_flags::kClamped));
  const DeviceSpec& spec = *predictor_->target(target_).spec;
  const double bytes = 4.0 * (512.0 * 65536 + 65536 + 512);
  const double stream_us =
      bytes / (gemm_range_constants::kGemvBandwidthEfficiency * spec.bytes_per_us());
  EXPECT_GT(p.us, stream_us);
  EXPECT_LT(p.us, stream_us + 10);
  // A wide product is compute-bound: it keeps its voted configuration's price, far above what
  // streaming its operands once would take.
  const double wide_bytes = 4.0 * (4096.0 * 1024 * 2 + 4096.0 * 4096);
  EXPECT_GT(
      predict_linear(4096, 4096, 1024).us,
      2 * wide_bytes / (gemm_range_constants::kGemvBandwidthEfficiency * spec.bytes_per_us()));
}

TEST_F(GemmSelectorTest, AnAlignedShapeRunsTheKernelTimedOnAlignedShapes) {
  // The unaligned rows are a hundred times nearer in shape; they still say nothing about the
  // kernel cuBLAS picks when every operand can be loaded in whole vectors.
  const Prediction p = predict_linear(4096, 4096, 1024);
  EXPECT_TRUE(p.has(prediction_flags::kConfigChosen));
  EXPECT_EQ(p.config, "sgemm_128x128x8_NT_vec");
}

TEST_F(GemmSelectorTest, AnUnalignedShapeRunsTheKernelTimedOnUnalignedShapes) {
  const Prediction p = predict_linear(4095, 4097, 1025);
  EXPECT_EQ(p.config, "maxwell_sgemm_64x64_tn");
  EXPECT_GT(p.us, 1.5 * predict_linear(4096, 4096, 1024).us);  // the slower kernel
}

TEST_F(GemmSelectorTest, ALinearsAlignmentIsItsReductionDimensions) {
  // Both operands of x W^T are read along the reduction dimension: an odd output width (a
  // vocabulary of 50257) leaves them aligned.
  EXPECT_EQ(predict_linear(4096, 4097, 1024).config, "sgemm_128x128x8_NT_vec");
  EXPECT_EQ(predict_linear(4096, 4096, 1023).config, "maxwell_sgemm_64x64_tn");
}

// A table whose every near shape ran the kernel of its rows' alignment (the P4's large
// products: sgemm_128x128x8_NT_vec on 16-byte rows, sgemm_128x128x8_NT on 8-byte rows, a
// maxwell_sgemm kernel on 4-byte rows): its selector tells 8-byte rows from 4-byte ones, and
// counts the output's rows too.
TEST(GemmSelectorGraded, EachAlignmentRunsTheKernelItsTableRanAtThatAlignment) {
  DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  const DeviceSpec p4 = cat.resolve("P4");
  Profile p;
  p.device = "P4";
  p.basis = TimeBasis::kKernel;
  p.gemm_configs.push_back(linear_config("sgemm_128x128x8_NT_vec", 0.5));
  p.gemm_configs.push_back(linear_config("sgemm_128x128x8_NT", 0.6));
  p.gemm_configs.push_back(linear_config("maxwell_sgemm_64x64_tn", 1.5));
  for (std::int32_t config = 0; config < 3; ++config) {
    const std::int64_t k = config == 0 ? 1024 : config == 1 ? 1022 : 1023;
    std::vector<Shape> shapes;
    for (std::int64_t i = 0; i < 20; ++i) shapes.push_back({3968 + 8 * i, 4096, k});
    add_linear_rows(p, p4, config, shapes);
  }
  Predictor predictor(std::move(cat), {p});
  const TargetId target = predictor.add_target("P4");
  auto config = [&](std::int64_t m, std::int64_t n, std::int64_t k) {
    KernelClass cls;
    cls.family = KernelFamily::kGemm;
    const Prediction pred =
        predictor.predict(linear_record(m, n, k), cls, target, {TimeBasis::kKernel, "V100"});
    return std::string(pred.config);
  };
  EXPECT_EQ(config(4096, 4096, 1024), "sgemm_128x128x8_NT_vec");
  EXPECT_EQ(config(4096, 4096, 1026), "sgemm_128x128x8_NT");  // 8-byte rows
  EXPECT_EQ(config(4096, 4096, 1025), "maxwell_sgemm_64x64_tn");
  EXPECT_EQ(config(4096, 4097, 1024), "maxwell_sgemm_64x64_tn");  // C's rows are 4-byte
}

// A GEMM launch recorded without its shape on a V100 (a trace without record_shapes), forecast
// for an A100: no GPU of the A100's architecture runs the V100's kernel, so the A100 runs the
// GEMM the launch implies on the V100 (the K and aspect of the V100's calibrated launch nearest
// in blocks) with the configuration it chooses for it, as for the shape itself measured there.
// On the V100 the kernel's own fit answers.
TEST(GemmLaunchWithoutShape, AnotherArchitectureRunsTheGemmTheLaunchImpliesWithItsOwnKernel) {
  DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  const DeviceSpec v100 = cat.resolve("V100-PCIE-32GB");
  const DeviceSpec a100 = cat.resolve("A100-PCIE-40GB");
  Profile volta;
  volta.device = v100.name;
  volta.basis = TimeBasis::kKernel;
  volta.gemm_configs.push_back(linear_config("volta_sgemm_128x128_tn", 3.0));
  add_linear_rows(volta, v100, 0, {{4096, 4096, 1024}, {1024, 1024, 8192}, {8192, 4096, 4096}});
  Profile ampere;
  ampere.device = a100.name;
  ampere.basis = TimeBasis::kKernel;
  ampere.gemm_configs.push_back(linear_config("ampere_sgemm_128x128_tn", 2.0));
  add_linear_rows(ampere, a100, 0,
                  {{4096, 4096, 1024}, {4096, 4096, 2048}, {2048, 4096, 1024}, {1024, 1024, 8192}});
  Predictor predictor(std::move(cat), {volta, ampere});
  const TargetId on_a100 = predictor.add_target(a100.name);
  const TargetId on_v100 = predictor.add_target(v100.name);
  const PredictOptions measured_on_v100{TimeBasis::kKernel, v100.name};

  KernelRecord launch;  // the V100's calibrated 4096 x 4096 x 1024 launch, no shape
  launch.launch.name = "volta_sgemm_128x128_tn";
  launch.launch.grid = {32, 32, 1};
  const KernelClass cls = classify_kernel(launch.launch.name);
  ASSERT_EQ(cls.family, KernelFamily::kGemm);
  const Prediction there = predictor.predict(launch, cls, on_a100, measured_on_v100);
  EXPECT_TRUE(there.has(prediction_flags::kNoShape));
  EXPECT_TRUE(there.has(prediction_flags::kConfigChosen));
  EXPECT_FALSE(there.has(prediction_flags::kFallback));
  EXPECT_EQ(there.config, "ampere_sgemm_128x128_tn");

  KernelRecord shaped = launch;
  shaped.op.kind = OpKind::kGemm;
  shaped.op.gemm.m = shaped.op.gemm.n = 4096;
  shaped.op.gemm.k = 1024;
  shaped.op.gemm.trans_b = true;  // "tn": a linear layer's weight
  const Prediction as_shaped = predictor.predict(shaped, cls, on_a100, measured_on_v100);
  ASSERT_FALSE(as_shaped.has(prediction_flags::kClamped));  // the model's, not a bound
  EXPECT_NEAR(there.us, as_shaped.us, 1e-9);

  const Prediction here = predictor.predict(launch, cls, on_v100, measured_on_v100);
  EXPECT_TRUE(here.has(prediction_flags::kNoShape));
  EXPECT_FALSE(here.has(prediction_flags::kConfigChosen));
  EXPECT_EQ(here.config, "volta_sgemm_128x128_tn");
}

// Model-like shapes alone (M >= 512, as the A100-PCIE-80GB's NeuSight table holds them): enough
// points to choose configurations for the shapes it covers, nothing near a decode-sized GEMM.
Profile model_like_table(const DeviceSpec& spec) {
  Profile p;
  p.device = spec.name;
  p.basis = TimeBasis::kKernel;
  p.gemm_configs.push_back(linear_config("ampere_sgemm_128x128_tn", 2.0));
  std::vector<Shape> shapes;
  for (std::int64_t m : {512, 768, 1024, 1536, 2048, 3072, 4096}) {
    for (std::int64_t n : {512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192}) {
      for (std::int64_t k : {512, 768, 1024, 1536, 2048, 3072, 4096, 6144})
        shapes.push_back({m, n, k});
    }
  }
  add_linear_rows(p, spec, 0, shapes);
  return p;
}

// A table that timed small-M shapes, where cuBLAS runs a kernel cheaper per K step.
Profile small_m_table(const DeviceSpec& spec, std::string config) {
  Profile p;
  p.device = spec.name;
  p.basis = TimeBasis::kKernel;
  p.gemm_configs.push_back(linear_config(std::move(config), 0.1));
  std::vector<Shape> shapes;
  for (std::int64_t m : {4, 8, 16, 32}) {
    for (std::int64_t n : {512, 1024, 2048}) shapes.push_back({m, n, 2048});
  }
  add_linear_rows(p, spec, 0, shapes);
  return p;
}

// A shape eight times smaller than every shape the target calibrated (M = 8 against M >= 512)
// takes its configuration from a GPU of the same generation that timed shapes like it, carried
// over by spec ratios (flag spec_scaled); a shape the target's table covers keeps the target's.
// A GPU of another generation, whose kernels the target does not run, lends nothing.
TEST(GemmSelectorFarFromCalibration, ASameGenerationGpuThatTimedNearerShapesChooses) {
  const DeviceCatalogue cat =
      DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  const DeviceSpec a100_80 = cat.resolve("A100-PCIE-80GB");
  // The A100-PCIE-80GB's forecast of one shape, its model-like table beside `lender`'s (the
  // configuration's name copied out: a prediction's names live in its predictor's profiles).
  struct Forecast {
    std::string config;
    bool spec_scaled;
    double us;
  };
  auto forecast = [&](const Profile& lender, std::int64_t m) {
    Predictor predictor(DeviceCatalogue(cat), {model_like_table(a100_80), lender});
    const TargetId target = predictor.add_target(a100_80.name);
    KernelClass cls;
    cls.family = KernelFamily::kGemm;
    const Prediction p = predictor.predict(linear_record(m, 1024, 2048), cls, target,
                                           {TimeBasis::kKernel, "H100-SXM"});
    return Forecast{std::string(p.config), p.has(prediction_flags::kSpecScaled), p.us};
  };
  const Profile ampere =
      small_m_table(cat.resolve("A100-PCIE-40GB"), "ampere_sgemm_32x32_sliced1x4_tn");
  const Forecast small = forecast(ampere, 8);
  EXPECT_EQ(small.config, "ampere_sgemm_32x32_sliced1x4_tn");
  EXPECT_TRUE(small.spec_scaled);
  const Forecast large = forecast(ampere, 2048);
  EXPECT_EQ(large.config, "ampere_sgemm_128x128_tn");
  EXPECT_FALSE(large.spec_scaled);

  const Forecast own =
      forecast(small_m_table(cat.resolve("V100-PCIE-32GB"), "volta_sgemm_32x32_sliced1x4_tn"), 8);
  EXPECT_EQ(own.config, "ampere_sgemm_128x128_tn");
  EXPECT_FALSE(own.spec_scaled);
  // The lent configuration is the cheaper kernel the nearer shapes ran.
  EXPECT_LT(small.us, 0.5 * own.us);
}

}  // namespace
}  // namespace pm2lat
