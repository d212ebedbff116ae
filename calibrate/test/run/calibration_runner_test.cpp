#include <gtest/gtest.h>

#include <filesystem>

#include "pm2lat/calibrate/run/calibration_runner.h"
#include "pm2lat/device_catalogue.h"
#include "scratch_directory.h"
#include "simulated_backend.h"

namespace pm2lat::calibrate::run {
namespace {

namespace fs = std::filesystem;

CalibrationPlan runner_plan() {
  PlanOptions o;
  o.dtypes = {DType::kFp32, DType::kBf16};
  o.layouts = {GemmLayout::kLinear, GemmLayout::kMatmul};
  o.dims = {128, 512, 2048};
  o.batches = {8};
  o.reps = 5;
  o.candidate_stride = 7;
  o.candidates = 4;
  o.fill_sizes = 12;
  const DeviceSpec spec =
      DeviceCatalogue::load(std::string(PM2LAT_PROFILE_DIR) + "/devices.json").resolve("H100");
  return plan_calibration(spec, o);
}

fs::path journal_file(const std::string& name) { return test::scratch_file("runner-" + name); }

JournalIdentity runner_identity() {
  return JournalIdentity{"NVIDIA H100 80GB HBM3", {{"driver_version", "13.0"}}};
}

std::vector<std::string> ids(const RunOutcome& o) {
  std::vector<std::string> v;
  for (const auto& m : o.measurements) v.push_back(m.task.id);
  return v;
}

TEST(CalibrationRunner, MeasuresEveryTaskThenTheFill) {
  const CalibrationPlan p = runner_plan();
  test::SimulatedBackend backend;
  auto journal = CalibrationJournal::open(journal_file("full.jsonl"), runner_identity());
  const RunOutcome out = run_calibration(p, backend, journal, {});
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(out.failed, 0u);
  EXPECT_EQ(out.resumed, 0u);
  EXPECT_EQ(backend.prepared, 1u);
  std::size_t fill = 0;
  for (const auto& m : out.measurements) fill += m.task.kind == TaskKind::kGemmFill;
  EXPECT_GT(fill, 0u);
  EXPECT_EQ(out.measurements.size(), p.tasks.size() + fill);
  EXPECT_EQ(out.measured, out.measurements.size());
  EXPECT_EQ(backend.measured, out.measured);
  EXPECT_EQ(journal.results().size(), out.measured);
  for (const auto& [id, n] : backend.measured_ids) EXPECT_EQ(n, 1u) << id;
  // Fill runs force the anchor's algorithm.
  for (const auto& m : out.measurements) {
    if (m.task.kind == TaskKind::kGemmFill) {
      EXPECT_EQ(m.result.gemm.at(0).rank, -1);
    }
  }
}

TEST(CalibrationRunner, AnInterruptedRunContinuesWhereItStopped) {
  const CalibrationPlan p = runner_plan();
  const fs::path file = journal_file("interrupted.jsonl");
  test::SimulatedBackend first, second;
  RunOutcome partial;
  {
    auto journal = CalibrationJournal::open(file, runner_identity());
    RunnerOptions ro;
    ro.max_tasks = 25;
    partial = run_calibration(p, first, journal, ro);
  }
  EXPECT_FALSE(partial.complete);
  EXPECT_EQ(first.measured, 25u);
  // A stop request between tasks works the same way.
  {
    auto journal = CalibrationJournal::open(file, runner_identity());
    RunnerOptions ro;
    int polls = 0;
    ro.stop_requested = [&] { return ++polls > 10; };
    const RunOutcome more = run_calibration(p, second, journal, ro);
    EXPECT_FALSE(more.complete);
    EXPECT_EQ(more.resumed, 25u);
    EXPECT_EQ(second.measured, 10u);
  }
  test::SimulatedBackend third;
  auto journal = CalibrationJournal::open(file, runner_identity());
  const RunOutcome done = run_calibration(p, third, journal, {});
  EXPECT_TRUE(done.complete);
  EXPECT_EQ(done.resumed, 35u);
  EXPECT_EQ(done.measured + done.resumed, done.measurements.size());
  // Nothing was measured twice, and the result is the uninterrupted run's.
  for (const auto& [id, n] : third.measured_ids) {
    EXPECT_EQ(first.measured_ids.count(id) + second.measured_ids.count(id), 0u) << id;
  }
  test::SimulatedBackend reference;
  auto ref_journal = CalibrationJournal::open(journal_file("reference.jsonl"), runner_identity());
  const RunOutcome ref = run_calibration(p, reference, ref_journal, {});
  EXPECT_EQ(ids(done), ids(ref));
  // collect_results sees the same from the journal alone.
  const RunOutcome collected = collect_results(p, read_journal(file).results);
  EXPECT_TRUE(collected.complete);
  EXPECT_EQ(ids(collected), ids(ref));
}

TEST(CalibrationRunner, JournalEntriesOfAnotherPlanAreIgnored) {
  const fs::path file = journal_file("other-plan.jsonl");
  {
    auto journal = CalibrationJournal::open(file, runner_identity());
    TaskResult stray;
    stray.task_id = "gemm/bf16/linear/1x77x77x77";
    stray.kind = TaskKind::kGemm;
    journal.append(stray);
  }
  test::SimulatedBackend backend;
  auto journal = CalibrationJournal::open(file, runner_identity());
  const RunOutcome out = run_calibration(runner_plan(), backend, journal, {});
  EXPECT_TRUE(out.complete);
  EXPECT_EQ(out.ignored, 1u);
}

}  // namespace
}  // namespace pm2lat::calibrate::run
