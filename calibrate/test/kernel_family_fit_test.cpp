// Kernel-family and convolution fits from measured kernel records.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/kernel_family_fit.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/calibrate/profile_builder.h"
#include "pm2lat/classifier.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/models/conv_model.h"
#include "pm2lat/models/memory_bound_model.h"
#include "pm2lat/models/memory_family_predictor.h"
#include "pm2lat/models/roofline_model.h"
#include "pm2lat/predictor.h"
#include "pm2lat/test/measurement_data.h"

namespace pm2lat::calibrate {
namespace {

DeviceSpec gpu() {
  DeviceSpec s;
  s.name = "G";
  s.sm_count = 100;
  s.mem_bw_gbps = 1000;  // 1e6 bytes per µs
  s.cc_major = 8;
  s.tf32_tflops = 150;
  return s;
}

// The records as the fits take them.
std::vector<const KernelRecord*> pointers(const std::vector<KernelRecord>& records) {
  std::vector<const KernelRecord*> out;
  out.reserve(records.size());
  for (const auto& r : records) out.push_back(&r);
  return out;
}

// A forward convolution by kernel `name` over `shape`, timed as the wave model of its
// configuration prices it on gpu(): `fixed_us` plus `inverse_efficiency` tile steps at the
// peak of `math` per K step of each wave, over the channels the kernel runs (kernel_channels).
KernelRecord timed_conv(const char* name, const ConvShape& shape, DType math, double fixed_us,
                        double inverse_efficiency) {
  KernelRecord r;
  r.launch.name = name;
  r.op.kind = OpKind::kConv;
  r.op.name = "aten::cudnn_convolution";
  r.op.conv = shape;
  const KernelClass cls = classify_kernel(name);
  const GemmConfigFit k = conv_kernel_config(cls, shape.dtype);
  const GemmWork w = conv_work(k, kernel_channels(shape, cls), ConvPass::kForward, r.launch.grid,
                               dtype_bytes(shape.dtype));
  const double waves = std::ceil(w.blocks / gpu().sm_count);
  r.measured_us =
      fixed_us + inverse_efficiency * waves * w.k_iters * conv_tile_step_us(k, math, gpu());
  return r;
}

KernelRecord copy_kernel(const char* name, double bytes, double us) {
  KernelRecord r;
  r.launch.name = name;
  r.launch.grid = Dim3{static_cast<std::uint32_t>(bytes / 4096), 1, 1};
  r.launch.block = Dim3{256, 1, 1};
  r.op.kind = OpKind::kCopy;
  r.op.vec.rows = static_cast<std::int64_t>(bytes / 4096);
  r.op.vec.cols = 1024;
  r.op.vec.bytes_read = r.op.vec.bytes_written = bytes / 2;
  r.measured_us = us;
  return r;
}

TEST(KernelFamilyFit, FitsConfigurationsAndARobustFamilyFit) {
  std::vector<KernelRecord> records;
  // A layout transform at 80 % of bandwidth over sizes 64 KB .. 256 MB, 3 µs fixed cost.
  for (double b = 65536; b <= 268435456; b *= 4)
    records.push_back(copy_kernel("cudnn::ops::nchwToNhwcKernel<float>", b, 3 + b / 1e6 / 0.8));
  // Another copy kernel measured at only one size, twice: its own efficiency, 50 %.
  records.push_back(copy_kernel("recat_copy_async_kernel", 4e7, 2.5 + 4e7 / 1e6 / 0.5));
  for (int i = 0; i < 3; ++i)
    records.push_back(copy_kernel("recat_copy_async_kernel", 4e7, 2.5 + 4e7 / 1e6 / 0.5));
  const std::vector<const KernelRecord*> ptrs = pointers(records);
  Profile p;
  FamilyBuildReport rep;
  build_family_section(ptrs, gpu(), p, &rep);
  EXPECT_EQ(rep.family_kernels, records.size());
  const VectorFit* transform = nullptr;
  const VectorFit* recat = nullptr;
  const VectorFit* family = nullptr;
  for (const auto& f : p.family_fits) {
    if (f.op != "copy") continue;
    if (f.config == "cudnn::ops::nchwToNhwcKernel") transform = &f;
    if (f.config == "recat_copy_async_kernel") recat = &f;
    if (f.config.empty()) family = &f;
  }
  ASSERT_NE(transform, nullptr);
  ASSERT_NE(recat, nullptr);
  ASSERT_NE(family, nullptr);
  EXPECT_NEAR(transform->c_byte, 1.25, 0.01);
  EXPECT_NEAR(transform->c0, 3, 0.05);
  EXPECT_DOUBLE_EQ(transform->bytes_max, 268435456);
  EXPECT_NEAR(recat->c_byte, 2.0, 0.01);
  // The family fit sits between the two efficiencies and never below a plausible one.
  EXPECT_GE(family->c_byte, 1.2);
  EXPECT_LE(family->c_byte, 2.05);
}

// Kernels `name` of `kind` over 64 KB .. 256 MB in 8, 64 and 512 rows, at 80 % of bandwidth
// after a 3 us fixed cost, plus 0.5 us a row per SM.
std::vector<KernelRecord> row_dependent_kernels(const char* name, OpKind kind) {
  std::vector<KernelRecord> records;
  for (double b = 65536; b <= 268435456; b *= 4) {
    for (const std::int64_t rows : {8, 64, 512}) {
      KernelRecord r = copy_kernel(name, b, 0);
      r.op.kind = kind;
      r.op.vec.rows = rows;
      r.measured_us = 3 + b / 1e6 / 0.8 + 0.5 * static_cast<double>(rows) / gpu().sm_count;
      records.push_back(r);
    }
  }
  return records;
}

// A configuration whose time grows with its rows keeps a per-row term, and the most rows it
// was made on: the predictor takes the term no further.
TEST(KernelFamilyFit, AFitWithAPerRowTermRecordsTheRowsItWasMadeOn) {
  const std::vector<KernelRecord> records =
      row_dependent_kernels("recat_copy_async_kernel", OpKind::kCopy);
  Profile p;
  build_family_section(pointers(records), gpu(), p, nullptr);
  const auto f = std::find_if(p.family_fits.begin(), p.family_fits.end(), [](const VectorFit& v) {
    return v.op == "copy" && v.config == "recat_copy_async_kernel";
  });
  ASSERT_NE(f, p.family_fits.end());
  EXPECT_NEAR(f->c_row, 0.5, 0.01);
  EXPECT_DOUBLE_EQ(f->rows_max, 512);
  EXPECT_DOUBLE_EQ(f->bytes_max, 268435456);
}

// An elementwise kernel indexes its flattened tensor: its fit has no per-row term, whatever
// varied with the row count where it was made, and prices a tensor of the same bytes in many
// more rows at the same time.
TEST(KernelFamilyFit, AnElementwiseFitHasNoPerRowTerm) {
  const std::vector<KernelRecord> records = row_dependent_kernels(
      "void at::native::vectorized_elementwise_kernel<4>", OpKind::kElementwise);
  Profile p;
  build_family_section(pointers(records), gpu(), p, nullptr);
  const auto f = std::find_if(p.family_fits.begin(), p.family_fits.end(), [](const VectorFit& v) {
    return v.op == "elementwise" && v.config == "at::native::vectorized_elementwise_kernel";
  });
  ASSERT_NE(f, p.family_fits.end());
  EXPECT_EQ(f->c_row, 0.0);
  EXPECT_DOUBLE_EQ(f->rows_max, 0.0);
  EXPECT_NEAR(f->c_byte, 1.25, 0.05);
  EXPECT_DOUBLE_EQ(memory_bound_kernel_us(*f, gpu(), 1e8, 8),
                   memory_bound_kernel_us(*f, gpu(), 1e8, 8e6));
  // What gives each row its own block keeps it (the copy above); what indexes flat does not.
  EXPECT_TRUE(pays_per_row(KernelFamily::kSoftmax));
  EXPECT_TRUE(pays_per_row(KernelFamily::kCopy));
  EXPECT_FALSE(pays_per_row(KernelFamily::kElementwise));
  EXPECT_FALSE(pays_per_row(KernelFamily::kMemset));
}

TEST(KernelFamilyFit, AConfigurationMeasuredOnceHasAFitOfItsOwn) {
  std::vector<KernelRecord> records;
  // Copies at 80 % of bandwidth, and one launch of another copy kernel at 20 % of it.
  for (double b = 65536; b <= 268435456; b *= 4)
    records.push_back(copy_kernel("cudnn::ops::nchwToNhwcKernel<float>", b, 3 + b / 1e6 / 0.8));
  records.push_back(copy_kernel("permute_pooled_embs_kernel", 1e8, 2.5 + 1e8 / 1e6 / 0.2));
  const std::vector<const KernelRecord*> ptrs = pointers(records);
  Profile p;
  build_family_section(ptrs, gpu(), p, nullptr);
  const VectorFit* once = nullptr;
  const VectorFit* family = nullptr;
  for (const auto& f : p.family_fits) {
    if (f.op != "copy") continue;
    if (f.config == "permute_pooled_embs_kernel") once = &f;
    if (f.config.empty()) family = &f;
  }
  ASSERT_NE(once, nullptr);
  ASSERT_NE(family, nullptr);
  // Its own efficiency, which the family's pool of faster kernels does not carry.
  EXPECT_NEAR(memory_bound_kernel_us(*once, gpu(), 2e8, 1), 2.5 + 2e8 / 1e6 / 0.2, 1.0);
  EXPECT_LT(memory_bound_kernel_us(*family, gpu(), 2e8, 1), 0.5 * (2e8 / 1e6 / 0.2));
}

TEST(KernelFamilyFit, ALatencyBoundConfigurationAtOneSizeKeepsItsTimeAsFixedCost) {
  // A gather measured at one small size only, 40 µs for 64 KB (far from bandwidth-bound):
  // its time is a fixed cost, not an efficiency to multiply by bytes at other sizes.
  const std::vector<KernelRecord> records(4, copy_kernel("gather_copy_kernel", 65536, 40));
  const std::vector<const KernelRecord*> ptrs = pointers(records);
  Profile p;
  build_family_section(ptrs, gpu(), p, nullptr);
  const VectorFit* gather = nullptr;
  for (const auto& f : p.family_fits) {
    if (f.op == "copy" && f.config == "gather_copy_kernel") gather = &f;
  }
  ASSERT_NE(gather, nullptr);
  EXPECT_NEAR(memory_bound_kernel_us(*gather, gpu(), 65536, 16), 40,
              0.5);  // reproduces the measurement
  // Ten times the bytes (still under a microsecond at bandwidth) stays near the fixed cost.
  EXPECT_LT(memory_bound_kernel_us(*gather, gpu(), 655360, 160), 45);
}

TEST(KernelFamilyFit, ConvolutionsGetClassAndGeometryFitsWithoutTheSplitReduction) {
  const char* name =
      "sm80_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x32_stage4_"
      "warpsize2x2x1_g1_"
      "tensor16x8x8_kernel";
  std::vector<KernelRecord> records;
  for (std::int64_t c : {64, 128, 256, 512}) {
    ConvShape s;
    s.batch = 32;
    s.in_channels = c;
    s.out_channels = c;
    s.in_h = s.in_w = 28;
    s.kernel_h = s.kernel_w = 3;
    s.pad_h = s.pad_w = 1;
    s.dtype = DType::kFp32;
    // Half of peak per tile step of each wave, plus 5 µs.
    const KernelRecord r = timed_conv(name, s, DType::kTf32, 5, 2.0);
    records.push_back(r);
    KernelRecord tiny = r;  // a split's second launch: not the convolution
    tiny.measured_us = 1;
    records.push_back(tiny);
  }
  const std::vector<const KernelRecord*> ptrs = pointers(records);
  Profile p;
  FamilyBuildReport rep;
  build_conv_section(ptrs, gpu(), p, nullptr, &rep);
  EXPECT_EQ(rep.conv_kernels, 4u);
  bool own = false, cls = false, geometry = false;
  for (const auto& c : p.conv_configs) {
    own = own || c.config == name;
    cls = cls || c.config == "conv:tf32";
    geometry = geometry || c.config.find("#geometry") != std::string::npos;
    if (c.config == name) {
      EXPECT_LT(c.fit_mape_pct, 1);
    }
    if (c.config == "conv:tf32") {
      EXPECT_LT(c.fit_mape_pct, 1);  // normalised by the tile step
    }
  }
  EXPECT_TRUE(own);
  EXPECT_TRUE(cls);
  EXPECT_TRUE(geometry);
  EXPECT_EQ(p.conv_points.size(), 4u);
}

TEST(KernelFamilyFit, AnAlignedConvolutionKernelIsFittedOnTheChannelsItLoads) {
  // An align8 tensor-op kernel timed on images of 3 to 64 channels: it runs over channel
  // counts padded to 8, and its times follow that work. The fit must see the same work (the
  // predictor prices kernel_channels too), or the 3-channel launches look 2.7x too slow.
  const char* name = "cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8";
  const KernelClass cls = classify_kernel(name);
  ASSERT_EQ(cls.gemm.align, 8);
  std::vector<KernelRecord> records;
  for (std::int64_t c : {3, 5, 8, 12, 16, 40, 64}) {
    ConvShape s;
    s.batch = 64;
    s.in_channels = c;
    s.out_channels = 768;
    s.in_h = s.in_w = 224;
    s.kernel_h = s.kernel_w = 16;
    s.stride_h = s.stride_w = 16;
    s.dtype = DType::kBf16;
    records.push_back(timed_conv(name, s, DType::kBf16, 4, 3.0));
  }
  const std::vector<const KernelRecord*> ptrs = pointers(records);
  Profile p;
  build_conv_section(ptrs, gpu(), p, nullptr);
  const GemmConfigFit* own = nullptr;
  for (const auto& c : p.conv_configs) {
    if (c.config == name) own = &c;
  }
  ASSERT_NE(own, nullptr);
  EXPECT_LT(own->fit_mape_pct, 1);
}

// Generous bounds that catch breakage; the measured figures are well below (MODELS.md).
TEST(AccuracyFloor, NeusightConvOutOfSample) {
  const char* const relative = "neusight/kernels.csv.gz";
  const auto file = test::measurement_file(relative);
  if (!file) GTEST_SKIP() << test::missing_measurements(relative);
  const auto calls = read_neusight_kernels(CsvTable::read(*file));
  DeviceCatalogue catalogue =
      DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  std::map<std::string, std::vector<const KernelRecord*>> train;
  std::map<std::string, std::vector<double>> floors;
  std::vector<const MeasuredCall*> test;
  for (const auto& c : calls) {
    if (c.device != "T4" && c.device != "V100-PCIE-32GB") continue;  // two GPUs keep it quick
    floors[c.device].push_back(*c.record.measured_us);
    if (c.op != "conv") continue;
    if (in_holdout(c.shape_key, 0.2))
      test.push_back(&c);
    else
      train[c.device].push_back(&c.record);
  }
  std::vector<Profile> profiles;
  for (const auto& [device, list] : train) {
    Profile p;
    p.device = catalogue.resolve(device).name;
    p.basis = TimeBasis::kCall;
    CallOverhead call;
    call.floor_us = latency_floor(floors[device]);
    call.pre_us = std::max(0.0, call.floor_us - kMinimumKernelUs);
    build_conv_section(list, catalogue.resolve(device), p, &call);
    profiles.push_back(std::move(p));
  }
  Predictor predictor(std::move(catalogue), std::move(profiles));
  std::map<std::string, std::pair<double, std::size_t>> ape;
  for (const auto* c : test) {
    const TargetId t = predictor.add_target(c->device);
    PredictOptions o;
    o.basis = TimeBasis::kCall;
    const Prediction p = predictor.predict(c->record, classify_kernel(c->record.launch.name), t, o);
    EXPECT_EQ(p.model, ModelKind::kConv);
    auto& [sum, n] = ape[c->device];
    sum += std::fabs(p.us - *c->record.measured_us) / *c->record.measured_us;
    ++n;
  }
  ASSERT_EQ(ape.size(), 2u);
  for (const auto& [device, v] : ape) {
    EXPECT_GT(v.second, 500u) << device;
    EXPECT_LT(100 * v.first / static_cast<double>(v.second), 30) << device << " conv MAPE";
  }
}

}  // namespace
}  // namespace pm2lat::calibrate
