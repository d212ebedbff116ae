// Accuracy floors on the public measurements (PM2LAT_DATA_DIR): profiles built from 80 % of the
// shapes must predict the other 20 % within generous bounds. These bounds catch breakage, not
// progress: the measured figures (`scripts/eval-kernels.sh`) are well below them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "pm2lat/calibrate/aiconfigurator_table.h"
#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/calibrate/profile_builder.h"
#include "pm2lat/classifier.h"
#include "pm2lat/predictor.h"
#include "pm2lat/test/measurement_data.h"

namespace pm2lat::calibrate {
namespace {

constexpr const char* kNeusightKernels = "neusight/kernels.csv.gz";
constexpr const char* kAiconfiguratorGemm = "aiconfigurator/gemm_bf16.csv.gz";

struct Mape {
  double sum = 0;
  std::size_t n = 0;
  void add(double p, double m) {
    sum += std::fabs(p - m) / m;
    ++n;
  }
  double pct() const { return n ? 100.0 * sum / static_cast<double>(n) : 0; }
};

TEST(AccuracyFloor, NeusightKernelsOutOfSample) {
  const auto file = test::measurement_file(kNeusightKernels);
  if (!file) GTEST_SKIP() << test::missing_measurements(kNeusightKernels);
  const auto table = CsvTable::read(*file);
  const auto calls = read_neusight_kernels(table);
  DeviceCatalogue catalogue =
      DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  std::map<std::string, std::vector<const MeasuredCall*>> train;
  std::vector<const MeasuredCall*> test;
  for (const auto& c : calls) {
    if (c.op == "conv") continue;
    (in_holdout(c.shape_key, 0.2) ? test : train[catalogue.resolve(c.device).name]).push_back(&c);
  }
  std::vector<Profile> profiles;
  for (const auto& [device, rows] : train) {
    profiles.push_back(build_profile(rows, catalogue.resolve(device), BuildOptions{}));
  }
  Predictor predictor(std::move(catalogue), std::move(profiles));
  std::map<std::string, Mape> gemm, vec;
  for (const auto* c : test) {
    const TargetId t = predictor.add_target(c->device);
    PredictOptions o;
    o.basis = TimeBasis::kCall;
    o.source_device = c->device;
    const Prediction p = predictor.predict(c->record, classify_kernel(c->record.launch.name), t, o);
    (c->record.op.kind == OpKind::kGemm ? gemm : vec)[predictor.target(t).name].add(
        p.us, *c->record.measured_us);
  }
  const std::map<std::string, double> gemm_bound = {{"A100-PCIE-40GB", 5},
                                                    {"A100-PCIE-80GB", 5},
                                                    {"H100-SXM", 6},
                                                    {"L4", 25},
                                                    {"P100-PCIE-16GB", 7},
                                                    {"P4", 12},
                                                    {"T4", 16},
                                                    {"V100-PCIE-32GB", 8}};
  ASSERT_EQ(gemm.size(), gemm_bound.size());
  for (const auto& [device, m] : gemm) {
    EXPECT_GT(m.n, 400u) << device;
    EXPECT_LT(m.pct(), gemm_bound.at(device)) << device << " GEMM MAPE";
  }
  for (const auto& [device, m] : vec) {
    EXPECT_LT(m.pct(), 8.0) << device << " elementwise/softmax/layer-norm MAPE";
  }
}

}  // namespace
}  // namespace pm2lat::calibrate

namespace pm2lat::calibrate {
namespace {

TEST(AccuracyFloor, AiconfiguratorBf16GemmOutOfSample) {
  const auto file = test::measurement_file(kAiconfiguratorGemm);
  if (!file) GTEST_SKIP() << test::missing_measurements(kAiconfiguratorGemm);
  const auto table = CsvTable::read(*file);
  const auto calls = read_aiconfigurator_gemm(table);
  DeviceCatalogue catalogue =
      DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  std::map<std::string, std::vector<const MeasuredCall*>> train;
  std::vector<const MeasuredCall*> test;
  for (const auto& c : calls) {
    (in_holdout(c.shape_key, 0.2) ? test : train[catalogue.resolve(c.device).name]).push_back(&c);
  }
  std::vector<Profile> profiles;
  for (const auto& [device, rows] : train) {
    BuildOptions opt;
    opt.basis = TimeBasis::kKernel;
    profiles.push_back(build_profile(rows, catalogue.resolve(device), opt));
  }
  Predictor predictor(std::move(catalogue), std::move(profiles));
  std::map<std::string, std::vector<double>> ape;
  for (const auto* c : test) {
    const TargetId t = predictor.add_target(c->device);
    PredictOptions o;
    o.source_spec = predictor.target(t).spec;
    const Prediction p = predictor.predict(c->record, *c->kernel_class, t, o);
    EXPECT_EQ(p.model, ModelKind::kGemmWave);
    ape[predictor.target(t).name].push_back(std::fabs(p.us - *c->record.measured_us) /
                                            *c->record.measured_us * 100);
  }
  ASSERT_EQ(ape.size(), 5u);
  for (auto& [device, v] : ape) {
    double mean = 0;
    for (double a : v) mean += a;
    mean /= static_cast<double>(v.size());
    std::sort(v.begin(), v.end());
    EXPECT_LT(mean, 10.0) << device << " BF16 GEMM MAPE";
    EXPECT_LT(v[v.size() / 2], 6.0) << device << " BF16 GEMM median APE";
  }
}

}  // namespace
}  // namespace pm2lat::calibrate
