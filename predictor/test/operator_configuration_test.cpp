// A call that names no kernel (a model file's operator) is priced by the kernel configuration
// the framework ran for the nearest calibrated shape, not by the operator's pooled fit: PyTorch
// picks softmax's kernel by row length (a warp per row up to 1024 elements, a block per row
// beyond), and the two run at different rates.
#include <gtest/gtest.h>

#include "pm2lat/models/memory_bound_model.h"
#include "pm2lat/predictor.h"

namespace pm2lat {
namespace {

constexpr const char* kWarpKernel = "(anonymous namespace)::softmax_warp_forward";
constexpr const char* kBlockKernel = "at::native::(anonymous namespace)::cunn_SoftMaxForward";
constexpr double kWarpCByte = 1.2;   // the warp-per-row kernel: 83 % of the bandwidth
constexpr double kBlockCByte = 1.6;  // the block-per-row kernel: 62 %
constexpr double kPooledCByte = 1.45;
constexpr std::int64_t kRows = 16384;

class OperatorConfiguration : public ::testing::Test {
 protected:
  void SetUp() override {
    DeviceCatalogue cat = DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
    spec_ = cat.resolve("V100-PCIE-32GB");
    Profile p;
    p.device = spec_.name;
    p.basis = TimeBasis::kKernel;
    add_fit(p, kWarpKernel, kWarpCByte, {128, 256, 512, 1024});
    add_fit(p, kBlockKernel, kBlockCByte, {2048, 4096, 8192});
    add_fit(p, "", kPooledCByte, {});  // the operator's fit over both: no points of its own
    predictor_ = std::make_unique<Predictor>(std::move(cat), std::vector<Profile>{p});
    target_ = predictor_->add_target(spec_.name);
  }
  // A softmax fit of `config` with one point (on the fit) per row length of `cols`.
  void add_fit(Profile& p, const char* config, double c_byte,
               const std::vector<std::int64_t>& cols) {
    VectorFit f;
    f.op = "softmax";
    f.config = config;
    f.c0 = 2.0;
    f.c_byte = c_byte;
    f.points = static_cast<std::int32_t>(cols.size());
    const auto fit = static_cast<std::int32_t>(p.vector_fits.size());
    p.vector_fits.push_back(f);
    for (std::int64_t c : cols) {
      VectorPoint pt;
      pt.fit = fit;
      pt.rows = kRows;
      pt.cols = c;
      pt.bytes = bytes(c);
      pt.us = memory_bound_kernel_us(f, spec_, pt.bytes, static_cast<double>(kRows));
      p.vector_points.push_back(pt);
    }
  }
  static double bytes(std::int64_t cols) { return 8.0 * kRows * static_cast<double>(cols); }
  double us_at(double c_byte, std::int64_t cols) const {
    VectorFit f;
    f.c0 = 2.0;
    f.c_byte = c_byte;
    return memory_bound_kernel_us(f, spec_, bytes(cols), static_cast<double>(kRows));
  }
  Prediction predict(std::int64_t cols, const char* config) const {
    KernelRecord r;
    r.op.kind = OpKind::kSoftmax;
    r.op.name = "softmax";
    r.op.vec = {kRows, cols, bytes(cols) / 2, bytes(cols) / 2, DType::kFp32};
    KernelClass cls;
    cls.family = KernelFamily::kSoftmax;
    cls.config = config;
    PredictOptions o;
    o.basis = TimeBasis::kKernel;
    o.source_device = spec_.name;
    return predictor_->predict(r, cls, target_, o);
  }
  DeviceSpec spec_;
  std::unique_ptr<Predictor> predictor_;
  TargetId target_ = 0;
};

TEST_F(OperatorConfiguration, AnUnnamedCallRunsTheKernelOfTheNearestCalibratedShape) {
  // Rows of 640 elements: the warp-per-row kernel ran every calibrated row up to 1024.
  const Prediction short_rows = predict(640, "");
  EXPECT_EQ(short_rows.config, kWarpKernel);
  EXPECT_NEAR(short_rows.us, us_at(kWarpCByte, 640), 1e-6 * short_rows.us);
  // Rows of 3000: the block-per-row kernel's.
  const Prediction long_rows = predict(3000, "");
  EXPECT_EQ(long_rows.config, kBlockKernel);
  EXPECT_NEAR(long_rows.us, us_at(kBlockCByte, 3000), 1e-6 * long_rows.us);
  // Neither is the pooled fit's rate.
  EXPECT_LT(short_rows.us, us_at(kPooledCByte, 640) * 0.9);
  EXPECT_GT(long_rows.us, us_at(kPooledCByte, 3000) * 1.05);
}

TEST_F(OperatorConfiguration, ANamedKernelKeepsItsOwnFitWhateverTheShape) {
  // A launch that names its kernel is priced as that kernel whatever its row length: the name
  // says what ran, the nearest calibrated shape only what usually runs.
  const Prediction p = predict(640, kBlockKernel);
  EXPECT_EQ(p.config, kBlockKernel);
  // Below the sizes the block kernel was timed at, its edge's bandwidth (flag clamped): its
  // rate, not the warp kernel's.
  EXPECT_NEAR(p.us, us_at(kBlockCByte, 640), 0.01 * p.us);
  EXPECT_GT(p.us, 1.2 * us_at(kWarpCByte, 640));
}

}  // namespace
}  // namespace pm2lat
