// Every prediction the predictor makes stays within its physical bounds: every kernel of the
// developers' traces and NeuSight's kernel-table rows (public measurements, PM2LAT_DATA_DIR;
// skipped without them), predicted on every GPU of the catalogue with the shipped profiles.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/reports/eval/bounds_cases.h"
#include "pm2lat/reports/eval/bounds_eval.h"
#include "pm2lat/test/measurement_data.h"

namespace pm2lat::reports {
namespace {

// Every k-th NeuSight row: a deterministic sample of all its operators and GPUs that keeps
// the test well under a minute in a Release build.
constexpr std::size_t kNeusightRowStride = 7;

std::vector<std::string> every_gpu(const Predictor& p) {
  std::vector<std::string> names;
  for (const auto& d : p.catalogue().devices()) names.push_back(d.name);
  return names;
}

void expect_none_outside(const BoundsEvalResult& r) {
  ASSERT_FALSE(r.predicted.empty());
  for (const auto& [set, c] : r.predicted) {
    EXPECT_GT(c.n, 0u) << set;
    EXPECT_EQ(c.below, 0u) << set << ": worst " << c.worst_below.us << " us below "
                           << c.worst_below.bound_us << " us on " << c.worst_below.target << ": "
                           << c.worst_below.kernel;
    EXPECT_EQ(c.above, 0u) << set << ": worst " << c.worst_above.us << " us above "
                           << c.worst_above.bound_us << " us on " << c.worst_above.target << ": "
                           << c.worst_above.kernel;
  }
}

TEST(PhysicalBoundsOnData, EveryTraceKernelOnEveryGpuIsWithinItsBounds) {
  const char* const relative = "traces/index.csv";
  const auto index = test::measurement_file(relative);
  if (!index) GTEST_SKIP() << test::missing_measurements(relative);
  Predictor predictor = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  std::vector<std::filesystem::path> traces;
  for (const auto& e : std::filesystem::directory_iterator(index->parent_path())) {
    const std::string name = e.path().filename().string();
    if (name.ends_with(".json.gz") || name.ends_with(".json")) traces.push_back(e.path());
  }
  std::sort(traces.begin(), traces.end());
  ASSERT_FALSE(traces.empty());
  std::vector<BoundsCase> cases;
  for (const auto& t : traces) add_trace_bounds_cases(t, predictor, cases);
  const BoundsEvalResult r = eval_bounds(predictor, cases, every_gpu(predictor));
  EXPECT_EQ(r.predicted.size(), traces.size());
  expect_none_outside(r);
}

TEST(PhysicalBoundsOnData, NeusightRowsOnEveryGpuAreWithinTheirBounds) {
  const char* const relative = "neusight/kernels.csv.gz";
  const auto table = test::measurement_file(relative);
  if (!table) GTEST_SKIP() << test::missing_measurements(relative);
  Predictor predictor = Predictor::from_directory(PM2LAT_SHIPPED_PROFILES);
  const auto calls = calibrate::read_neusight_kernels(calibrate::CsvTable::read(*table));
  std::vector<calibrate::MeasuredCall> sample;
  for (std::size_t i = 0; i < calls.size(); i += kNeusightRowStride) sample.push_back(calls[i]);
  std::vector<BoundsCase> cases;
  add_table_bounds_cases(sample, "neusight", false, predictor.catalogue(), cases);
  ASSERT_GT(cases.size(), sample.size() / 2);
  expect_none_outside(eval_bounds(predictor, cases, every_gpu(predictor)));
}

}  // namespace
}  // namespace pm2lat::reports
