// The cases `pm2lat eval bounds` checks: every kernel of a profiler trace (seen from the GPU
// that ran it) and every row of a measurement table.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "pm2lat/calibrate/neusight_table.h"
#include "pm2lat/device_spec.h"
#include "pm2lat/predictor.h"
#include "pm2lat/reports/eval/bounds_eval.h"

namespace pm2lat::reports {

// Every kernel of a Kineto trace; its set is the file's name without ".json[.gz]". The GPU
// that ran it is the trace's, else the one replay scores it as (gpu_inference.h; null when
// neither says).
void add_trace_bounds_cases(const std::filesystem::path& trace, Predictor& predictor,
                            std::vector<BoundsCase>& cases);

// Every measured call of a table whose GPU the catalogue knows.
void add_table_bounds_cases(const std::vector<calibrate::MeasuredCall>& calls,
                            const std::string& set, bool graph_replay,
                            const DeviceCatalogue& catalogue, std::vector<BoundsCase>& cases);

}  // namespace pm2lat::reports
