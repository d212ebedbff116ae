// CSV for spreadsheets and dataframes (tidy: one observation per row).
//  - summary: family,target,kernels,measured_ms,predicted_ms,error_pct,fallback_kernels,
//    own_gpu,step_ms — one row per family x target, plus a "(total)" row per target whose
//    step_ms is the step time on that GPU. error_pct is set on the run's own GPU only.
//  - kernels: one row per kernel: rank,stream,start_us,name,family,measured_us and one
//    "<target>_us" column per target.
#pragma once

#include <iosfwd>

#include "pm2lat/reports/run_summary.h"
#include "pm2lat/reports/run_table.h"

namespace pm2lat::reports {

void write_summary_csv(std::ostream& os, const RunSummary& s, const RunTable& table);
void write_kernels_csv(std::ostream& os, const RunTable& table);

}  // namespace pm2lat::reports
