// The machine-readable replay result (`pm2lat replay --json OUT`):
//   {"traces":[{"trace","device","kernels","coverage_time_pct","measured_ms","predicted_ms",
//               "error_pct","families":[{"family","kernels","measured_ms","predicted_ms",
//               "error_pct"}], ...}]}
// measured_ms/predicted_ms/error_pct compare the trace's own GPU over its compute kernels
// (communication excluded, see run_summary.h); null where not available. Extra members:
// "gpu" (catalogue name), "notes", "communication_ms", "kernel_time_ms" (all kernels), and
// "targets" with each target's predicted kernel time and step time. At the top level,
// "failed": [{"trace","error"}], the traces that could not be read (empty when none).
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "pm2lat/reports/replay/trace_replay.h"

namespace pm2lat::reports {

nlohmann::json replay_json(const std::vector<const TraceReplay*>& traces,
                           const std::vector<FailedTrace>& failed = {});

}  // namespace pm2lat::reports
