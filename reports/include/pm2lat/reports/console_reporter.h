// Plain-text tables for the terminal: the per-family x per-target table of a run, the
// per-rank table of a multi-rank run, and the one-line-per-trace overview of a replay.
#pragma once

#include <iosfwd>
#include <string>
#include <utility>
#include <vector>

#include "pm2lat/reports/report_heading.h"
#include "pm2lat/reports/run_summary.h"

namespace pm2lat::reports {

struct TraceReplay;

// Family rows x target columns (predicted ms; error % on the run's own GPU), totals, step
// times, coverage and accuracy.
void print_run_summary(std::ostream& os, const RunSummary& s, const ReportHeading& h);
// Per-rank measured and predicted step times, and the total (slowest rank).
void print_rank_table(std::ostream& os, const RunSummary& s);
// One line per trace: GPU, kernels, coverage, measured vs predicted on its GPU, error.
void print_replay_overview(std::ostream& os, const std::vector<const TraceReplay*>& traces);

// Milliseconds with a precision that suits the magnitude ("0.0123", "12.35", "1234.6").
std::string format_ms(double us);
// An expected error in percent as shown after a value ("±12 %", "±4.5 %"); "" for NaN.
std::string format_band(double band_pct);
// "0.43 ±12 %": format_ms and the band when there is one.
std::string format_ms_with_band(double us, double band_pct);

}  // namespace pm2lat::reports
