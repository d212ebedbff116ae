// Runs a calibration plan: every task not yet in the journal is measured by the backend and
// appended to the journal as soon as it finishes; once the survey and candidates are in, the
// fill is planned from them and run too. Stops early (resumable) on request or after a
// number of new measurements.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "pm2lat/calibrate/run/calibration_journal.h"
#include "pm2lat/calibrate/run/calibration_plan.h"
#include "pm2lat/calibrate/run/measurement_backend.h"
#include "pm2lat/calibrate/run/progress_meter.h"

namespace pm2lat::calibrate::run {

struct RunnerOptions {
  std::size_t max_tasks = 0;             // new measurements before stopping; 0 = no limit
  std::function<bool()> stop_requested;  // polled between tasks
  ProgressMeter* progress = nullptr;
};

// A task with its result.
struct MeasuredTask {
  MeasurementTask task;
  TaskResult result;
};

struct RunOutcome {
  bool complete = false;                   // every task (fill included) has a result
  std::size_t resumed = 0;                 // results found in the journal
  std::size_t measured = 0;                // results measured now
  std::size_t failed = 0;                  // results with an error (either way)
  std::size_t ignored = 0;                 // journal results of tasks this plan does not have
  std::vector<MeasuredTask> measurements;  // in plan order (fill last)
};

RunOutcome run_calibration(const CalibrationPlan& plan, MeasurementBackend& backend,
                           CalibrationJournal& journal, const RunnerOptions& options = {});

// The same bookkeeping without a backend: what a journal holds for a plan (fill included).
RunOutcome collect_results(const CalibrationPlan& plan, const std::vector<TaskResult>& journal);

}  // namespace pm2lat::calibrate::run
