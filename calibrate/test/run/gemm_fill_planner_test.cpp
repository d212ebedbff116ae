#include <gtest/gtest.h>

#include <set>

#include "pm2lat/calibrate/run/gemm_fill_planner.h"
#include "pm2lat/device_catalogue.h"
#include "simulated_backend.h"

namespace pm2lat::calibrate::run {
namespace {

CalibrationPlan small_plan(int fill_sizes) {
  PlanOptions o;
  o.dtypes = {DType::kBf16};
  o.layouts = {GemmLayout::kLinear};
  o.dims = {256, 1024, 4096};
  o.reps = 5;
  o.memory = false;
  o.candidate_stride = 1000;  // no candidates
  o.fill_sizes = fill_sizes;
  const DeviceSpec spec =
      DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json").resolve("H100");
  return plan_calibration(spec, o);
}

struct Survey {
  std::vector<TaskResult> results;
  std::map<std::string, const TaskResult*> done;
  std::map<std::string, std::set<std::string>> shapes_by_config;  // config -> task ids
};

Survey survey(const CalibrationPlan& plan) {
  test::SimulatedBackend backend;
  Survey s;
  s.results.reserve(plan.tasks.size());
  for (const auto& t : plan.tasks) s.results.push_back(backend.measure(t, nullptr));
  for (const auto& r : s.results) {
    s.done[r.task_id] = &r;
    if (r.kind == TaskKind::kGemm)
      s.shapes_by_config[gemm_run_config(r.gemm.at(0))].insert(r.task_id);
  }
  return s;
}

TEST(GemmFillPlanner, ConfigurationsFoundAtFewSizesAreForcedOnMore) {
  const CalibrationPlan plan = small_plan(12);
  const Survey s = survey(plan);
  ASSERT_EQ(s.shapes_by_config.size(), 2u);  // the nvjet and the xmma kernel
  const std::vector<MeasurementTask> fill = plan_fill(plan, s.done);
  std::set<std::string> survey_shapes;
  for (const auto& t : plan.tasks) survey_shapes.insert(gemm_task_id(TaskKind::kGemm, t.gemm));
  std::map<std::string, int> per_config;
  std::set<std::string> ids;
  for (const auto& t : fill) {
    EXPECT_EQ(t.kind, TaskKind::kGemmFill);
    EXPECT_TRUE(ids.insert(t.id).second) << t.id;
    ++per_config[t.config];
    // Forced with the algorithm of a survey shape where the heuristic picked that config.
    ASSERT_TRUE(s.shapes_by_config.at(t.config).count(t.anchor)) << t.anchor;
    EXPECT_FALSE(survey_shapes.count(gemm_task_id(TaskKind::kGemm, t.gemm)))
        << "fill repeats a survey shape";
    EXPECT_GT(t.estimated_us, 0);
  }
  for (const auto& [config, shapes] : s.shapes_by_config) {
    const int want = std::max(0, 12 - static_cast<int>(shapes.size()));
    EXPECT_EQ(per_config[config], want) << config;
  }
  EXPECT_FALSE(fill.empty());
  // The same survey plans the same fill (a resumed run finds its fill tasks in the journal).
  const std::vector<MeasurementTask> again = plan_fill(plan, s.done);
  ASSERT_EQ(again.size(), fill.size());
  for (std::size_t i = 0; i < fill.size(); ++i) EXPECT_EQ(again[i].id, fill[i].id);
}

TEST(GemmFillPlanner, NothingToFillWhenEveryConfigurationHasEnoughSizes) {
  const CalibrationPlan plan = small_plan(4);
  const Survey s = survey(plan);
  EXPECT_TRUE(plan_fill(plan, s.done).empty());
}

TEST(GemmFillPlanner, TheForcedAlgorithmRunsTheAnchorsConfiguration) {
  const CalibrationPlan plan = small_plan(12);
  const Survey s = survey(plan);
  test::SimulatedBackend backend;
  for (const auto& t : plan_fill(plan, s.done)) {
    const GemmAlgo& algo = s.done.at(t.anchor)->gemm.at(0).algo;
    const TaskResult r = backend.measure(t, &algo);
    ASSERT_EQ(r.gemm.size(), 1u);
    EXPECT_EQ(r.gemm[0].rank, -1);
    EXPECT_EQ(gemm_run_config(r.gemm[0]), t.config) << t.id;
  }
}

}  // namespace
}  // namespace pm2lat::calibrate::run
