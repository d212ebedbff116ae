#include "pm2lat/calibrate/borrowed_dispatch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "pm2lat/calibrate/csv_table.h"
#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/calibrate/profile_builder.h"
#include "pm2lat/device_catalogue.h"
#include "pm2lat/test/measurement_data.h"

namespace pm2lat::calibrate {
namespace {

// A table's overheads: {pre, floor} by operator; `timed` those with calls small enough to time
// the dispatch. `linear` and `bmm` run GEMMs, the rest are memory-bound.
TableOverheads table(const std::map<std::string, std::pair<double, double>>& pre_floor,
                     std::set<std::string> timed) {
  TableOverheads t;
  for (const auto& [op, v] : pre_floor) {
    t.overheads[op] = CallOverhead{v.second, v.first};
    if (op == "linear" || op == "bmm") t.gemm.insert(op);
  }
  t.timed = std::move(timed);
  return t;
}

TEST(BorrowedDispatch, AnOperatorATableCannotTimeTakesTheOthersMedianScaledByItsHost) {
  const std::vector<TableOverheads> tables = {
      table({{"add", {10, 25}}, {"linear", {30, 60}}}, {"add", "linear"}),
      table({{"add", {20, 35}}, {"linear", {40, 80}}}, {"add", "linear"}),
      // Times its add at twice the others' median dispatch: a slower host.
      table({{"add", {30, 40}}, {"linear", {0, 300}}, {"mul", {0, 300}}}, {"add"}),
  };
  const auto borrowed = borrowed_dispatch_us(tables, 2);
  ASSERT_EQ(borrowed.size(), 1u);  // the memory-bound `mul` keeps its own
  EXPECT_NEAR(borrowed.at("linear"), 2 * 35.0, 1e-9);
  EXPECT_TRUE(borrowed_dispatch_us(tables, 0).empty());  // times everything itself
}

TEST(BorrowedDispatch, NothingToCompareTheHostWithLeavesTheMedianAsItIs) {
  const std::vector<TableOverheads> tables = {
      table({{"bmm", {20, 32}}, {"linear", {30, 60}}}, {"bmm", "linear"}),
      table({{"bmm", {0, 30}}}, {"bmm"}),  // an intercept clamped at zero is no measurement
      table({{"bmm", {90, 200}}, {"linear", {120, 300}}}, {}),
      // Clamped at the floor less an empty kernel: no measurement either.
      table({{"linear", {58, 60}}}, {"linear"}),
  };
  const auto borrowed = borrowed_dispatch_us(tables, 2);
  ASSERT_EQ(borrowed.size(), 2u);
  EXPECT_NEAR(borrowed.at("linear"), 30, 1e-9);
  EXPECT_NEAR(borrowed.at("bmm"), 20, 1e-9);
  // A table that times an operator but whose dispatch fitted to 0 borrows it too.
  EXPECT_NEAR(borrowed_dispatch_us(tables, 1).at("bmm"), 20, 1e-9);
}

// The public tables: each dense table cut down to the shapes the sparsely measured GPUs
// measured (NeuSight's model-like shapes, no call small enough to time dispatch) estimates
// its GEMMs' dispatch from intercepts far outside its data; borrowed from the other, whole
// tables, the dispatch is closer to what its own whole table times.
TEST(BorrowedDispatch, ACutTableBorrowsADispatchCloserToWhatItsWholeTableTimes) {
  constexpr const char* kKernels = "neusight/kernels.csv.gz";
  const auto file = test::measurement_file(kKernels);
  if (!file) GTEST_SKIP() << test::missing_measurements(kKernels);
  const auto calls = read_neusight_kernels(CsvTable::read(*file));
  const DeviceCatalogue catalogue =
      DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json");
  const std::set<std::string> sparse_gpus = {"A100-PCIE-80GB", "L4", "H100-SXM"};
  std::set<std::string> sparse_shapes;
  std::map<std::string, std::vector<const MeasuredCall*>> whole;
  for (const auto& c : calls) {
    const std::string gpu = catalogue.resolve(c.device).name;
    if (sparse_gpus.contains(gpu))
      sparse_shapes.insert(c.shape_key);
    else if (c.op != "conv")
      whole[gpu].push_back(&c);
  }
  ASSERT_GE(whole.size(), 4u);
  std::vector<std::string> gpus;
  std::vector<TableOverheads> tables;
  for (const auto& [gpu, rows] : whole) {
    gpus.push_back(gpu);
    tables.push_back(estimate_table_overheads(rows, catalogue.resolve(gpu)));
  }
  double own_error = 0, borrowed_error = 0;
  std::size_t compared = 0;
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    std::vector<const MeasuredCall*> cut;
    for (const MeasuredCall* c : whole.at(gpus[g])) {
      if (sparse_shapes.contains(c->shape_key)) cut.push_back(c);
    }
    std::vector<TableOverheads> with_cut = tables;
    with_cut[g] = estimate_table_overheads(cut, catalogue.resolve(gpus[g]));
    const auto borrowed = borrowed_dispatch_us(with_cut, g);
    for (const auto& [op, truth] : tables[g].overheads) {
      if (!tables[g].timed.contains(op) || truth.pre_us <= 0 || !borrowed.contains(op)) continue;
      own_error +=
          std::fabs(std::log(std::max(1.0, with_cut[g].overheads.at(op).pre_us) / truth.pre_us));
      borrowed_error += std::fabs(std::log(borrowed.at(op) / truth.pre_us));
      ++compared;
    }
  }
  ASSERT_GE(compared, 6u);
  EXPECT_LT(borrowed_error, 0.5 * own_error)
      << "mean |log ratio| to the whole table's dispatch: own "
      << own_error / static_cast<double>(compared) << ", borrowed "
      << borrowed_error / static_cast<double>(compared) << " over " << compared;
}

}  // namespace
}  // namespace pm2lat::calibrate
