#include "pm2lat/calibrate/run/calibration_runner.h"

#include <chrono>
#include <map>
#include <set>

#include "pm2lat/calibrate/run/gemm_fill_planner.h"

namespace pm2lat::calibrate::run {
namespace {

std::map<std::string, const TaskResult*> pointers(const std::map<std::string, TaskResult>& done) {
  std::map<std::string, const TaskResult*> out;
  for (const auto& [id, r] : done) out.emplace(id, &r);
  return out;
}

bool survey_complete(const CalibrationPlan& plan, const std::map<std::string, TaskResult>& done) {
  for (const MeasurementTask& t : plan.tasks) {
    if (!done.count(t.id)) return false;
  }
  return true;
}

// The algorithm a fill task forces: the heuristic's pick at its anchor shape.
const GemmAlgo* anchor_algo(const MeasurementTask& t,
                            const std::map<std::string, TaskResult>& done) {
  const auto it = done.find(t.anchor);
  if (it == done.end()) return nullptr;
  for (const GemmRun& run : it->second.gemm) {
    if (run.rank == 0 && run.error.empty()) return &run.algo;
  }
  return nullptr;
}

RunOutcome assemble(const std::vector<MeasurementTask>& tasks,
                    const std::map<std::string, TaskResult>& done, bool stopped) {
  RunOutcome out;
  std::set<std::string> ids;
  out.complete = !stopped;
  for (const MeasurementTask& t : tasks) {
    ids.insert(t.id);
    const auto it = done.find(t.id);
    if (it == done.end()) {
      out.complete = false;
      continue;
    }
    if (!it->second.error.empty()) ++out.failed;
    out.measurements.push_back(MeasuredTask{t, it->second});
  }
  for (const auto& [id, r] : done) {
    if (!ids.count(id)) ++out.ignored;
  }
  return out;
}

}  // namespace

RunOutcome run_calibration(const CalibrationPlan& plan, MeasurementBackend& backend,
                           CalibrationJournal& journal, const RunnerOptions& options) {
  std::map<std::string, TaskResult> done;
  for (const TaskResult& r : journal.results()) done[r.task_id] = r;
  ProgressMeter* progress = options.progress;
  if (progress)
    progress->set_total(plan.estimated_s(), plan.tasks.size() + plan.fill_tasks_estimate);

  bool prepared = false, stopped = false;
  std::size_t resumed = 0, measured = 0;
  auto run_list = [&](const std::vector<MeasurementTask>& tasks) {
    for (const MeasurementTask& t : tasks) {
      if (done.count(t.id)) {
        ++resumed;
        if (progress) progress->advance(t.estimated_us * 1e-6, t.id, true);
        continue;
      }
      if (stopped) continue;
      if ((options.max_tasks > 0 && measured >= options.max_tasks) ||
          (options.stop_requested && options.stop_requested())) {
        stopped = true;
        continue;
      }
      if (!prepared) {
        backend.prepare(plan);
        prepared = true;
      }
      const GemmAlgo* forced = t.kind == TaskKind::kGemmFill ? anchor_algo(t, done) : nullptr;
      const auto start = std::chrono::steady_clock::now();
      TaskResult r;
      if (t.kind == TaskKind::kGemmFill && forced == nullptr) {
        r.error = "the anchor shape has no algorithm to force";
      } else {
        r = backend.measure(t, forced);
      }
      r.task_id = t.id;
      r.kind = t.kind;
      r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      journal.append(r);
      done[t.id] = std::move(r);
      ++measured;
      if (progress) progress->advance(t.estimated_us * 1e-6, t.id);
    }
  };

  run_list(plan.tasks);
  std::vector<MeasurementTask> all = plan.tasks;
  if (!stopped && survey_complete(plan, done)) {
    const std::vector<MeasurementTask> fill = plan_fill(plan, pointers(done));
    if (progress) {
      double total = 0;
      for (const auto& t : plan.tasks) total += t.estimated_us * 1e-6;
      for (const auto& t : fill) total += t.estimated_us * 1e-6;
      progress->set_total(total, plan.tasks.size() + fill.size());
    }
    run_list(fill);
    all.insert(all.end(), fill.begin(), fill.end());
  } else {
    stopped = true;
  }
  if (progress) progress->finish();
  RunOutcome out = assemble(all, done, stopped);
  out.resumed = resumed;
  out.measured = measured;
  return out;
}

RunOutcome collect_results(const CalibrationPlan& plan, const std::vector<TaskResult>& journal) {
  std::map<std::string, TaskResult> done;
  for (const TaskResult& r : journal) done[r.task_id] = r;
  std::vector<MeasurementTask> all = plan.tasks;
  const bool survey = survey_complete(plan, done);
  if (survey) {
    const std::vector<MeasurementTask> fill = plan_fill(plan, pointers(done));
    all.insert(all.end(), fill.begin(), fill.end());
  }
  RunOutcome out = assemble(all, done, !survey);
  out.resumed = out.measurements.size();
  return out;
}

}  // namespace pm2lat::calibrate::run
